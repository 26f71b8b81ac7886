// Several gateways in front of one control store: each registers a heartbeat (a row that expires on the
// DATABASE's clock, so gateways on many machines agree on who is alive without agreeing on the time) and
// reports, with it, how many requests each tenant sent it since its previous heartbeat. It reads back how
// many gateways are alive and how many requests those tenants sent all of them, and shares each limit by
// that (the gateway's rate-shares.ts): nothing here sits between a request and its answer.
import { sql } from 'kysely';
import { z } from 'zod';
import { parseInput as parse } from '../input.js';
import { FLEET_LIMITS } from './fleet.js';
import { ClockedRecords } from './records.js';

/** Requests one tenant sent one gateway in its last heartbeat interval. */
export interface GatewayDemand {
  tenantId: string;
  requests: number;
}

/** What the gateways alive now report, as one gateway's heartbeat read it. */
export interface GatewayFleetView {
  /** Gateways whose heartbeat has not expired (database clock), the caller's included. */
  liveGateways: number;
  /**
   * For each tenant the caller reported: the requests all live gateways reported for it in their last
   * intervals (the caller's included), and how many of them reported it.
   */
  demand: { tenantId: string; requests: number; gateways: number }[];
}

export interface GatewayFleetStore {
  /**
   * Registers or renews the gateway's heartbeat until `ttlMs` from now (database clock), replaces the
   * demand it reported last time with `demand`, forgets gateways whose heartbeat expired, and answers
   * what the live gateways report. Idempotent for the same arguments.
   */
  heartbeatGateway(
    gatewayId: string,
    ttlMs: number,
    demand: readonly GatewayDemand[],
  ): Promise<GatewayFleetView>;
  /** Removes the gateway and its demand at once (a gateway closing); nothing if it is not registered. */
  leaveGateway(gatewayId: string): Promise<void>;
}

/** A gateway reports at most this many tenants per heartbeat (the busiest, if it served more). */
export const MAX_DEMAND_ROWS = 50_000;
/** Rows per INSERT: 3 parameters a row stays far below both dialects' limits. */
const DEMAND_CHUNK = 1_000;

const GatewayIdSchema = z
  .string()
  .min(1, 'a gateway id cannot be empty')
  .max(200)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._:-]*$/, 'a gateway id is letters, digits, ".", "_", ":" or "-"');
const TtlSchema = z.number().int().min(FLEET_LIMITS.minTtlMs).max(FLEET_LIMITS.maxTtlMs);
const DemandSchema = z
  .array(
    z
      .object({
        tenantId: z.string().min(1).max(200),
        requests: z.number().int().min(0).max(Number.MAX_SAFE_INTEGER),
      })
      .strict(),
  )
  .max(MAX_DEMAND_ROWS, `a heartbeat reports at most ${MAX_DEMAND_ROWS} tenants`);

export class GatewayRecords extends ClockedRecords implements GatewayFleetStore {
  async heartbeatGateway(
    gatewayId: string,
    ttlMs: number,
    demand: readonly GatewayDemand[],
  ): Promise<GatewayFleetView> {
    const id = parse(GatewayIdSchema, gatewayId, 'gateway id');
    const ttl = parse(TtlSchema, ttlMs, 'gateway heartbeat TTL (ms)');
    // Repeats of a tenant are summed: one INSERT may not write a primary key twice.
    const merged = new Map<string, number>();
    for (const d of parse(DemandSchema, demand, 'gateway demand')) {
      if (d.requests > 0) merged.set(d.tenantId, (merged.get(d.tenantId) ?? 0) + d.requests);
    }
    const rows = [...merged].map(([tenant_id, requests]) => ({ gateway_id: id, tenant_id, requests }));
    const writes = [
      this.db
        .insertInto('gateways')
        .values({ gateway_id: id, expires_at: sql<number>`${this.now()} + ${ttl}` })
        .onConflict((oc) =>
          oc.column('gateway_id').doUpdateSet((eb) => ({ expires_at: eb.ref('excluded.expires_at') })),
        ),
      this.db.deleteFrom('gateway_demand').where('gateway_id', '=', id),
      // Expired heartbeats: a gateway that stopped without leaving. Its demand goes with it (cascade).
      this.db.deleteFrom('gateways').where(sql<boolean>`expires_at < ${this.now()}`),
    ];
    for (let i = 0; i < rows.length; i += DEMAND_CHUNK) {
      writes.push(this.db.insertInto('gateway_demand').values(rows.slice(i, i + DEMAND_CHUNK)) as never);
    }
    await this.runBatch(writes.map((w) => w.compile()));

    const live = await this.db
      .selectFrom('gateways')
      .select((eb) => eb.fn.countAll<number>().as('count'))
      .where(sql<boolean>`expires_at >= ${this.now()}`)
      .executeTakeFirstOrThrow();
    const totals =
      rows.length === 0
        ? []
        : await this.db
            .selectFrom('gateway_demand as d')
            .innerJoin('gateways as g', 'g.gateway_id', 'd.gateway_id')
            .select((eb) => [
              'd.tenant_id',
              eb.fn.sum<number>('d.requests').as('requests'),
              eb.fn.countAll<number>().as('gateways'),
            ])
            .where(sql<boolean>`g.expires_at >= ${this.now()}`)
            .where('d.tenant_id', 'in', (eb) =>
              eb.selectFrom('gateway_demand').select('tenant_id').where('gateway_id', '=', id),
            )
            .groupBy('d.tenant_id')
            .execute();
    return {
      // At least this gateway: its row was just written, even if a slow answer let it expire since.
      liveGateways: Math.max(1, Number(live.count)),
      demand: totals.map((t) => ({
        tenantId: t.tenant_id,
        requests: Number(t.requests),
        gateways: Number(t.gateways),
      })),
    };
  }

  async leaveGateway(gatewayId: string): Promise<void> {
    const id = parse(GatewayIdSchema, gatewayId, 'gateway id');
    await this.db.deleteFrom('gateways').where('gateway_id', '=', id).execute();
  }
}
