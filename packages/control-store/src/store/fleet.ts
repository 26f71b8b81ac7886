// Hosts' leases and tenants' placements, for both dialects (the rules are in
// fleet-store.ts and the package README). KyselyControlStore hands these
// methods out as its own.
//
// Time: every lease and placement time is read from the DATABASE's clock inside
// the statement that uses it (PostgreSQL clock_timestamp(), SQLite
// unixepoch('subsec')), never from the caller's: hosts and gateways on many
// machines then agree on whether a lease is live without agreeing on the time.
// A test may hand the store a clock instead (`fleetClock`) to move time past a
// TTL without sleeping; it is then a bound parameter in the same places.
//
// Concurrency: every decision is one conditional statement (a compare-and-swap
// in its WHERE clause), so two gateways or reapers racing get exactly one
// winner. Placing a tenant on a host counts the host's tenants first; on
// PostgreSQL that count is only exact if the host's row is locked first (two
// statements in one transaction, the second with a snapshot taken after the
// lock), so placements on one host take turns. SQLite runs the same pair under
// BEGIN IMMEDIATE, where writers take turns anyway.
import { RookeryError } from '@rookery/protocol';
import { type RawBuilder, type Selectable, type SqlBool, sql } from 'kysely';
import { z } from 'zod';
import { parseInput as parse } from '../input.js';
import type {
  FleetStore,
  HostRecord,
  HostState,
  Lease,
  Placement,
  Replacement,
  ReplacementDecision,
  ReplacementReason,
} from './fleet-store.js';
import { ClockedRecords } from './records.js';
import type { HostsTable } from './schema.js';
import { brokenConstraint, corrupt } from './sql.js';

/** Bounds of what callers may ask for; limits of sanity, not tuning. */
export const FLEET_LIMITS = Object.freeze({
  /** A lease shorter than this could not be renewed in time over a real network. */
  minTtlMs: 100,
  /** A lease longer than this would keep a dead host's tenants down for too long. */
  maxTtlMs: 3_600_000,
  maxCapacity: 1_000_000,
  maxGraceMs: 86_400_000,
});

const HostIdSchema = z
  .string()
  .trim()
  .min(1, 'a host id cannot be empty')
  .max(200)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]*$/, 'a host id is letters, digits, ".", "_", ":" or "-"');
const AddressSchema = z.url({ protocol: /^https?$/, error: 'an address is an http(s) URL' }).max(2048);
const CapacitySchema = z.number().int().min(1).max(FLEET_LIMITS.maxCapacity);
const TtlSchema = z.number().int().min(FLEET_LIMITS.minTtlMs).max(FLEET_LIMITS.maxTtlMs);
const GraceSchema = z.number().int().min(0).max(FLEET_LIMITS.maxGraceMs);
const EpochSchema = z.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
/** Placement lookups only: the tenant's own id rules are checked where tenants are created. */
const TenantKeySchema = z.string().min(1).max(200);
const HostStateSchema = z.enum(['active', 'draining', 'retired']);

// Kept where the store's files have always found them.
export { databaseClock, type FleetClock } from './records.js';

const hostNotFound = (id: string) =>
  new RookeryError('HostNotFound', `There is no host "${id}": a host registers by acquiring a lease.`);

interface HostRow extends Selectable<HostsTable> {
  placements: number;
  live: number;
}

function toHost(row: HostRow): HostRecord {
  const state = HostStateSchema.safeParse(row.state);
  if (!state.success) throw corrupt('host state', row.host_id, state.error);
  return {
    hostId: row.host_id,
    address: row.address,
    capacity: row.capacity,
    epoch: row.epoch,
    expiresAt: row.expires_at,
    acquiredAt: row.acquired_at,
    state: state.data,
    placements: Number(row.placements),
    live: Number(row.live) === 1,
  };
}

export class FleetRecords extends ClockedRecords implements FleetStore {
  // ── leases ───────────────────────────────────────────────────────────────

  async acquireLease(hostId: string, address: string, capacity: number, ttlMs: number): Promise<Lease> {
    const host = parse(HostIdSchema, hostId, 'host id');
    const url = parse(AddressSchema, address, 'host address');
    const cap = parse(CapacitySchema, capacity, 'host capacity');
    const ttl = parse(TtlSchema, ttlMs, 'lease TTL (ms)');
    const now = this.now();
    const row = await this.db
      .insertInto('hosts')
      .values({
        host_id: host,
        address: url,
        capacity: cap,
        epoch: 1,
        expires_at: sql<number>`${now} + ${ttl}`,
        acquired_at: now,
        state: 'active',
      })
      .onConflict((oc) =>
        oc.column('host_id').doUpdateSet((eb) => ({
          epoch: sql<number>`hosts.epoch + 1`,
          address: eb.ref('excluded.address'),
          capacity: eb.ref('excluded.capacity'),
          expires_at: eb.ref('excluded.expires_at'),
          acquired_at: eb.ref('excluded.acquired_at'),
        })),
      )
      .returning(['epoch', 'expires_at'])
      .executeTakeFirstOrThrow();
    return { hostId: host, epoch: row.epoch, expiresAt: row.expires_at, ttlMs: ttl };
  }

  async renewLease(hostId: string, epoch: number, ttlMs: number): Promise<Lease> {
    const host = parse(HostIdSchema, hostId, 'host id');
    const held = parse(EpochSchema, epoch, 'lease epoch');
    const ttl = parse(TtlSchema, ttlMs, 'lease TTL (ms)');
    const now = this.now();
    const row = await this.db
      .updateTable('hosts')
      .set({ expires_at: sql<number>`${now} + ${ttl}` })
      .where('host_id', '=', host)
      .where('epoch', '=', held)
      .where(sql<SqlBool>`expires_at > ${now}`)
      .returning(['epoch', 'expires_at'])
      .executeTakeFirst();
    if (!row) throw await this.leaseLost(host, held);
    return { hostId: host, epoch: row.epoch, expiresAt: row.expires_at, ttlMs: ttl };
  }

  /** Why `epoch` is not the host's live lease (read after the fact, for the message). */
  private async leaseLost(host: string, epoch: number): Promise<RookeryError> {
    const current = await this.getHost(host);
    if (!current) return hostNotFound(host);
    if (current.epoch !== epoch) {
      return new RookeryError(
        'LeaseSuperseded',
        `Host "${host}" holds its lease at epoch ${current.epoch}, not ${epoch}: another registration took it. This process must stop serving its tenants.`,
      );
    }
    return new RookeryError(
      'LeaseExpired',
      `The lease of host "${host}" (epoch ${epoch}) expired at ${new Date(current.expiresAt).toISOString()} (the control store's clock): stop acknowledging writes and acquire a new lease.`,
    );
  }

  // ── hosts ────────────────────────────────────────────────────────────────

  private selectHosts() {
    const now = this.now();
    return this.db
      .selectFrom('hosts as h')
      .selectAll('h')
      .select((eb) => [
        eb
          .selectFrom('placements as p')
          .select((e) => e.fn.countAll<number>().as('n'))
          .whereRef('p.host_id', '=', 'h.host_id')
          .as('placements'),
        sql<number>`case when h.expires_at > ${now} then 1 else 0 end`.as('live'),
      ]);
  }

  async getHost(hostId: string): Promise<HostRecord | null> {
    const host = parse(HostIdSchema, hostId, 'host id');
    const row = await this.selectHosts().where('h.host_id', '=', host).executeTakeFirst();
    return row ? toHost(row as HostRow) : null;
  }

  async listHosts(): Promise<HostRecord[]> {
    const rows = await this.selectHosts().orderBy('h.host_id').execute();
    return rows.map((row) => toHost(row as HostRow));
  }

  drainHost(hostId: string): Promise<HostRecord> {
    return this.setState(hostId, 'draining');
  }

  activateHost(hostId: string): Promise<HostRecord> {
    return this.setState(hostId, 'active');
  }

  async retireHost(hostId: string): Promise<HostRecord> {
    const host = parse(HostIdSchema, hostId, 'host id');
    // Only from draining: placements land on active hosts only, and a drain takes
    // the host row's lock as they do, so none can slip in after the emptiness check.
    const result = await this.db
      .updateTable('hosts')
      .set({ state: 'retired' })
      .where('host_id', '=', host)
      .where('state', '<>', 'active')
      .where(({ not, exists, selectFrom }) =>
        not(exists(selectFrom('placements').select('tenant_id').where('host_id', '=', host))),
      )
      .executeTakeFirst();
    const now = await this.getHost(host);
    if (!now) throw hostNotFound(host);
    if (Number(result.numUpdatedRows) === 0 && now.state === 'active') {
      throw new RookeryError(
        'HostNotEmpty',
        `Host "${host}" is active: drain it first, then retire it once its tenants have moved.`,
      );
    }
    if (Number(result.numUpdatedRows) === 0) {
      throw new RookeryError(
        'HostNotEmpty',
        `Host "${host}" still has ${now.placements} tenant(s) placed on it: drain it and move them first.`,
      );
    }
    return now;
  }

  private async setState(hostId: string, state: HostState): Promise<HostRecord> {
    const host = parse(HostIdSchema, hostId, 'host id');
    await this.db.updateTable('hosts').set({ state }).where('host_id', '=', host).execute();
    const now = await this.getHost(host);
    if (!now) throw hostNotFound(host);
    return now;
  }

  // ── placements ───────────────────────────────────────────────────────────

  private selectPlacements() {
    return this.db
      .selectFrom('placements as p')
      .leftJoin('hosts as h', 'h.host_id', 'p.host_id')
      .select(['p.tenant_id', 'p.host_id', 'p.epoch', 'p.host_epoch', 'p.updated_at', 'h.address']);
  }

  async getPlacement(tenantId: string): Promise<Placement | null> {
    const tenant = parse(TenantKeySchema, tenantId, 'tenant id');
    const row = await this.selectPlacements().where('p.tenant_id', '=', tenant).executeTakeFirst();
    return row ? toPlacement(row) : null;
  }

  async listPlacements(hostId: string): Promise<Placement[]> {
    const host = parse(HostIdSchema, hostId, 'host id');
    const rows = await this.selectPlacements().where('p.host_id', '=', host).orderBy('p.tenant_id').execute();
    return rows.map(toPlacement);
  }

  async placeTenant(tenantId: string): Promise<Placement> {
    const tenant = parse(TenantKeySchema, tenantId, 'tenant id');
    const existing = await this.getPlacement(tenant);
    if (existing) return existing;
    const known = await this.db
      .selectFrom('tenants')
      .select('id')
      .where('id', '=', tenant)
      .executeTakeFirst();
    if (!known) {
      throw new RookeryError('TenantNotFound', `There is no tenant "${tenant}" to place.`);
    }
    // Each attempt re-checks room and lease under the host's lock.
    const candidates = await this.hostsWithRoom();
    for (const host of candidates) {
      const now = this.now();
      let inserted: number | undefined;
      try {
        [, inserted] = await this.runBatch([
          this.lockHost(host.hostId).compile(),
          this.db
            .insertInto('placements')
            .columns(['tenant_id', 'host_id', 'epoch', 'host_epoch', 'updated_at'])
            .expression(
              this.db
                .selectFrom('hosts as h')
                .select([
                  sql<string>`cast(${tenant} as text)`.as('tenant_id'),
                  'h.host_id',
                  sql<number>`cast(1 as bigint)`.as('epoch'),
                  'h.epoch',
                  now.as('updated_at'),
                ])
                .where('h.host_id', '=', host.hostId)
                .where(this.canTake(now, tenant)),
            )
            .onConflict((oc) => oc.column('tenant_id').doNothing())
            .compile(),
        ]);
      } catch (error) {
        if (brokenConstraint(error) === 'foreign-key') {
          throw new RookeryError(
            'TenantNotFound',
            `There is no tenant "${tenant}" to place (deleted meanwhile).`,
          );
        }
        throw error;
      }
      // Placed by us, or by a concurrent caller (the insert did nothing): either way, one placement.
      const placed = await this.getPlacement(tenant);
      if (placed) return placed;
      if (inserted === 1) throw new Error(`placement of ${tenant} vanished right after it was made`);
    }
    throw new RookeryError(
      'NoHostAvailable',
      `No host can take tenant "${tenant}": none is active with a live lease and room (${candidates.length} tried). Add hosts or raise their capacity.`,
    );
  }

  async movePlacement(tenantId: string, expectedEpoch: number, toHostId: string): Promise<Placement> {
    const tenant = parse(TenantKeySchema, tenantId, 'tenant id');
    const expected = parse(EpochSchema, expectedEpoch, 'expected placement epoch');
    const target = parse(HostIdSchema, toHostId, 'target host id');
    const now = this.now();
    const [, moved] = await this.runBatch([
      this.lockHost(target).compile(),
      this.db
        .updateTable('placements')
        .set({
          host_id: target,
          host_epoch: (eb) => eb.selectFrom('hosts').select('epoch').where('host_id', '=', target),
          epoch: sql<number>`epoch + 1`,
          updated_at: now,
        })
        .where('tenant_id', '=', tenant)
        .where('epoch', '=', expected)
        .where(({ exists, selectFrom }) =>
          exists(
            selectFrom('hosts as h')
              .select('h.host_id')
              .where('h.host_id', '=', target)
              .where(this.canTake(now, tenant)),
          ),
        )
        .compile(),
    ]);
    const placement = await this.getPlacement(tenant);
    if (moved === 1 && placement) return placement;
    if (!placement) {
      throw new RookeryError(
        'TenantNotPlaced',
        `Tenant "${tenant}" is not placed on any host: place it first.`,
      );
    }
    if (placement.epoch !== expected) {
      throw new RookeryError(
        'PlacementConflict',
        `Tenant "${tenant}" is at placement epoch ${placement.epoch} (on host "${placement.hostId}"), not ${expected}: it was moved meanwhile. Read its placement again and decide anew.`,
      );
    }
    throw await this.whyUnavailable(target);
  }

  async relocatePlacement(tenantId: string, expectedEpoch: number): Promise<Placement> {
    const tenant = parse(TenantKeySchema, tenantId, 'tenant id');
    const expected = parse(EpochSchema, expectedEpoch, 'expected placement epoch');
    const current = await this.getPlacement(tenant);
    if (!current) {
      throw new RookeryError(
        'TenantNotPlaced',
        `Tenant "${tenant}" is not placed on any host: place it first.`,
      );
    }
    const candidates = (await this.hostsWithRoom()).filter((h) => h.hostId !== current.hostId);
    for (const host of candidates) {
      try {
        // The compare-and-swap is movePlacement's: a placement moved meanwhile fails PlacementConflict here.
        return await this.movePlacement(tenant, expected, host.hostId);
      } catch (error) {
        // Filled, drained or expired since the listing: the next candidate.
        if (error instanceof RookeryError && error.code === 'HostUnavailable') continue;
        throw error;
      }
    }
    if (current.epoch !== expected) {
      throw new RookeryError(
        'PlacementConflict',
        `Tenant "${tenant}" is at placement epoch ${current.epoch} (on host "${current.hostId}"), not ${expected}: it was moved meanwhile. Read its placement again and decide anew.`,
      );
    }
    throw new RookeryError(
      'NoHostAvailable',
      `No host other than "${current.hostId}" can take tenant "${tenant}": none is active with a live lease and room (${candidates.length} tried). Add hosts or raise their capacity.`,
    );
  }

  async reclaimPlacements(hostId: string, hostEpoch: number): Promise<Placement[]> {
    const host = parse(HostIdSchema, hostId, 'host id');
    const epoch = parse(EpochSchema, hostEpoch, 'lease epoch');
    const now = this.now();
    const rows = await this.db
      .updateTable('placements')
      .set({ host_epoch: epoch, epoch: sql<number>`epoch + 1`, updated_at: now })
      .where('host_id', '=', host)
      .where('host_epoch', '<>', epoch)
      .where(({ exists, selectFrom }) =>
        exists(
          selectFrom('hosts as h')
            .select('h.host_id')
            .where('h.host_id', '=', host)
            .where('h.epoch', '=', epoch)
            .where(sql<SqlBool>`h.expires_at > ${now}`),
        ),
      )
      .returning('tenant_id')
      .execute();
    if (rows.length === 0) {
      const current = await this.getHost(host);
      if (!current || current.epoch !== epoch || !current.live) throw await this.leaseLost(host, epoch);
      return [];
    }
    const tenants = rows.map((r) => r.tenant_id);
    const placed = await this.selectPlacements()
      .where('p.tenant_id', 'in', tenants)
      .orderBy('p.tenant_id')
      .execute();
    return placed.map(toPlacement);
  }

  // ── the reaper's decision ───────────────────────────────────────────────

  async tenantsToReplace(graceMs: number): Promise<ReplacementDecision> {
    const grace = parse(GraceSchema, graceMs, 'grace period (ms)');
    // One reading of the database's clock for the whole decision.
    const { rows } = await sql<{ now: number }>`select ${this.now()} as now`.execute(this.db);
    const now = Number(rows[0]?.now);
    const counts = await this.db
      .selectFrom('hosts')
      .select((eb) => [
        eb.fn.countAll<number>().as('counted'),
        sql<number>`coalesce(sum(case when expires_at <= ${now} then 1 else 0 end), 0)`.as('expired'),
      ])
      .where('state', '<>', 'retired')
      .executeTakeFirstOrThrow();
    const hosts = { counted: Number(counts.counted), expired: Number(counts.expired) };
    if (hosts.expired * 2 > hosts.counted) {
      return {
        replace: [],
        withheld: `${hosts.expired} of ${hosts.counted} hosts have expired leases at once (more than half): that is the control store or the network, not the hosts; nothing is re-placed until most leases are renewed again.`,
        hosts,
        now,
      };
    }
    const before = now - grace;
    const orphans = await this.db
      .selectFrom('placements as p')
      .leftJoin('hosts as h', 'h.host_id', 'p.host_id')
      .select([
        'p.tenant_id',
        'p.host_id',
        'p.epoch',
        'p.host_epoch',
        'h.epoch as lease_epoch',
        'h.expires_at',
      ])
      .where((eb) =>
        eb.or([
          eb('h.host_id', 'is', null),
          eb('h.expires_at', '<', before),
          eb.and([eb('p.host_epoch', '<>', eb.ref('h.epoch')), eb('h.acquired_at', '<', before)]),
        ]),
      )
      .orderBy('p.tenant_id')
      .execute();
    const replace = orphans.map((row): Replacement => {
      const reason: ReplacementReason =
        row.lease_epoch === null
          ? 'host-unknown'
          : row.expires_at !== null && row.expires_at < before
            ? 'lease-expired'
            : 'stale-host-epoch';
      return {
        tenantId: row.tenant_id,
        hostId: row.host_id,
        epoch: row.epoch,
        hostEpoch: row.host_epoch,
        reason,
      };
    });
    return { replace, withheld: null, hosts, now };
  }

  // ── shared pieces ───────────────────────────────────────────────────────

  /**
   * Where a tenant may go (placeTenant, relocatePlacement): active hosts with a live lease and room, the
   * least loaded first, ties by id. A snapshot: the statement that places re-checks under the host's lock.
   */
  private async hostsWithRoom(): Promise<HostRecord[]> {
    const candidates = (await this.listHosts()).filter(
      (h) => h.state === 'active' && h.live && h.placements < h.capacity,
    );
    return candidates.sort((a, b) => a.placements - b.placements || a.hostId.localeCompare(b.hostId));
  }

  /**
   * Takes the host row's write lock (a no-op update) so the next statement of
   * the batch counts the host's tenants after every concurrent placement on it
   * committed (PostgreSQL, READ COMMITTED: each statement sees what committed
   * before it started). Harmless on SQLite, whose batch holds the file's lock.
   */
  private lockHost(hostId: string) {
    return this.db
      .updateTable('hosts')
      .set((eb) => ({ capacity: eb.ref('capacity') }))
      .where('host_id', '=', hostId);
  }

  /** Host `h` of the enclosing query may take `tenant`: active, live lease, fewer other tenants than its capacity. */
  private canTake(now: RawBuilder<number>, tenant: string) {
    return sql<SqlBool>`h.state = 'active' and h.expires_at > ${now} and (select count(*) from placements as c where c.host_id = h.host_id and c.tenant_id <> ${tenant}) < h.capacity`;
  }

  /** Why `host` cannot take a tenant now (read after a move did nothing). */
  private async whyUnavailable(host: string): Promise<RookeryError> {
    const current = await this.getHost(host);
    if (!current) return hostNotFound(host);
    const why =
      current.state !== 'active'
        ? `it is ${current.state}`
        : !current.live
          ? `its lease expired at ${new Date(current.expiresAt).toISOString()}`
          : `it is full (${current.placements} of capacity ${current.capacity})`;
    return new RookeryError(
      'HostUnavailable',
      `Host "${host}" cannot take a tenant: ${why}. Choose another host.`,
    );
  }
}

function toPlacement(row: {
  tenant_id: string;
  host_id: string;
  epoch: number;
  host_epoch: number;
  updated_at: number;
  address: string | null;
}): Placement {
  return {
    tenantId: row.tenant_id,
    hostId: row.host_id,
    epoch: Number(row.epoch),
    hostEpoch: Number(row.host_epoch),
    address: row.address,
    updatedAt: Number(row.updated_at),
  };
}
