// Metered usage per tenant per minute. Gateways sum it in memory and flush deltas; every flush adds, so any
// number of gateways may flush the same (tenant, minute). A flush may carry an id: the id is recorded in the
// same transaction as the sums, so a flush whose answer was lost on the way back (committed, but the gateway
// saw a timeout or a dropped connection and retries it) adds nothing the second time.
import { type Selectable, sql } from 'kysely';
import { z } from 'zod';
import { parseInput as parse } from '../input.js';
import { ClockedRecords } from './records.js';
import type { UsageMinutesTable } from './schema.js';
import { brokenConstraint } from './sql.js';
import { type UsageRow, UsageRowSchema } from './types.js';

/** Rows per INSERT: 6 parameters a row stays far below both dialects' limits. */
const USAGE_CHUNK = 500;
/** How long a flush id is remembered: a retry comes within the store's outage, not a day later. */
export const USAGE_FLUSH_IDS_KEPT_MS = 24 * 60 * 60_000;

const FlushIdSchema = z
  .string()
  .min(1)
  .max(200)
  .regex(/^[A-Za-z0-9._:-]+$/, 'a flush id is letters, digits, ".", "_", ":" or "-"');

function toUsage(row: Selectable<UsageMinutesTable>): UsageRow {
  return {
    tenantId: row.tenant_id,
    minute: row.minute,
    requests: row.requests,
    bytesIn: row.bytes_in,
    bytesOut: row.bytes_out,
    workUnits: row.work_units,
  };
}

export class UsageRecords extends ClockedRecords {
  async addUsage(rows: readonly UsageRow[], flushId?: string): Promise<boolean> {
    const id = flushId === undefined ? undefined : parse(FlushIdSchema, flushId, 'usage flush id');
    // Sum repeats of a (tenant, minute) first: one INSERT … ON CONFLICT may
    // not touch the same row twice (PostgreSQL refuses it).
    const merged = new Map<string, UsageMinutesTable>();
    for (const input of rows) {
      const r = parse(UsageRowSchema, input, 'usage row');
      const key = `${r.tenantId}\u0000${r.minute}`;
      const row = merged.get(key);
      if (row) {
        row.requests += r.requests;
        row.bytes_in += r.bytesIn;
        row.bytes_out += r.bytesOut;
        row.work_units += r.workUnits;
      } else {
        merged.set(key, {
          tenant_id: r.tenantId,
          minute: r.minute,
          requests: r.requests,
          bytes_in: r.bytesIn,
          bytes_out: r.bytesOut,
          work_units: r.workUnits,
        });
      }
    }
    if (merged.size === 0) return true;
    const writes = [];
    if (id !== undefined) {
      const now = this.now();
      writes.push(
        this.db
          .deleteFrom('usage_flushes')
          .where(sql<boolean>`added_at < ${now} - ${USAGE_FLUSH_IDS_KEPT_MS}`)
          .compile(),
        // A plain INSERT: a repeated id breaks the primary key and rolls the whole flush back.
        this.db.insertInto('usage_flushes').values({ flush_id: id, added_at: now }).compile(),
      );
    }
    const all = [...merged.values()];
    for (let i = 0; i < all.length; i += USAGE_CHUNK) {
      writes.push(
        this.db
          .insertInto('usage_minutes')
          .values(all.slice(i, i + USAGE_CHUNK))
          .onConflict((oc) =>
            oc.columns(['tenant_id', 'minute']).doUpdateSet((eb) => ({
              requests: eb('usage_minutes.requests', '+', eb.ref('excluded.requests')),
              bytes_in: eb('usage_minutes.bytes_in', '+', eb.ref('excluded.bytes_in')),
              bytes_out: eb('usage_minutes.bytes_out', '+', eb.ref('excluded.bytes_out')),
              work_units: eb('usage_minutes.work_units', '+', eb.ref('excluded.work_units')),
            })),
          )
          .compile(),
      );
    }
    try {
      await this.runBatch(writes);
      return true;
    } catch (error) {
      if (id !== undefined && brokenConstraint(error) === 'unique') return false; // added before
      throw error;
    }
  }

  async usage(tenant: string, fromMinute: number, toMinute: number): Promise<UsageRow[]> {
    const rows = await this.db
      .selectFrom('usage_minutes')
      .selectAll()
      .where('tenant_id', '=', tenant)
      .where('minute', '>=', fromMinute)
      .where('minute', '<=', toMinute)
      .orderBy('minute')
      .execute();
    return rows.map(toUsage);
  }
}
