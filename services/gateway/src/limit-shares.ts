// A tenant's limits hold for all gateways together, without the store between a request and its answer.
// Each gateway sends a heartbeat to the control store every second (ROOKERY_GATEWAY_HEARTBEAT_MS), with how
// many requests each tenant sent it since the last one, and reads back how many gateways are alive and what
// they all saw of those tenants (@rookery/control-store, gateways.ts). From that it takes its share:
// - of a tenant's request rate, in proportion to where the tenant's requests arrive: requests through this
//   gateway / through all, times the quota. A client on one kept-alive connection reaches one gateway and
//   gets the whole rate there; one spread evenly over N gets quota / N at each. Until a tenant has been in two
//   heartbeats of this gateway in a row it gets quota / N here: when traffic starts at several gateways at
//   once, the first of them to send its heartbeat would otherwise see only its own demand and take the whole
//   quota for an interval. Refused requests count as demand too, so a gateway that refuses much is not
//   starved of share.
// - of a tenant's live connections (WebSockets, streams, queries, bulk inserts): limit / N, at least 1. Each
//   WebSocket is a connection of its own, which a load balancer spreads like any other.
// A gateway that cannot reach the store keeps its last shares (and keeps counting); one whose heartbeat
// stopped is dropped by the others when it expires (ROOKERY_GATEWAY_HEARTBEAT_TTL_MS), so until then they
// allow less, never more. docs: services/gateway/README.md, "Several gateways".
import { type GatewayFleetStore, MAX_DEMAND_ROWS } from '@rookery/control-store';
import type { Logger } from 'pino';

/** How this gateway divides a tenant's limits with the others. */
export interface LimitShares {
  /** Counts a request of the tenant that reached this gateway (admitted or refused by its rate). */
  arrived(tenantId: string): void;
  /** This gateway's part of the tenant's requests per second. */
  rateShare(tenantId: string, quota: number): number;
  /** This gateway's part of a limit on connections held at once (at least 1). */
  liveShare(limit: number): number;
}

/** One gateway alone: every limit is its own. */
export const WHOLE_LIMITS: LimitShares = {
  arrived() {},
  rateShare: (_tenantId, quota) => quota,
  liveShare: (limit) => limit,
};

/** A heartbeat a second; a gateway silent for 5 s (its process gone without leaving) is no longer counted. */
export const DEFAULT_GATEWAY_HEARTBEAT = Object.freeze({ heartbeatMs: 1_000, ttlMs: 5_000 });

export interface FleetSharesOptions {
  store: GatewayFleetStore;
  gatewayId: string;
  heartbeatMs: number;
  ttlMs: number;
  log: Logger;
}

export class FleetShares implements LimitShares {
  private liveGateways = 1;
  /** What this gateway reported at its last heartbeat, and what all live gateways did for those tenants. */
  private mine = new Map<string, number>();
  /** Tenants in its last heartbeat but not in the one before: their share is still quota / N. */
  private arriving = new Set<string>();
  private all = new Map<string, number>();
  /** Requests since the last heartbeat. */
  private counting = new Map<string, number>();
  private timer: NodeJS.Timeout | null = null;
  private beating: Promise<void> | null = null;

  constructor(private readonly options: FleetSharesOptions) {}

  /** Joins: the first heartbeat is awaited, so the gateway serves knowing the others. */
  async start(): Promise<void> {
    await this.heartbeat();
    this.timer = setInterval(() => void this.heartbeat(), this.options.heartbeatMs);
    this.timer.unref();
  }

  /** Leaves at once, so the others take its share back without waiting for its heartbeat to expire. */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.beating;
    await this.options.store.leaveGateway(this.options.gatewayId).catch(() => undefined);
  }

  arrived(tenantId: string): void {
    this.counting.set(tenantId, (this.counting.get(tenantId) ?? 0) + 1);
  }

  rateShare(tenantId: string, quota: number): number {
    const mine = this.mine.get(tenantId);
    const all = this.all.get(tenantId);
    if (!mine || !all || this.arriving.has(tenantId)) return quota / this.liveGateways;
    return (quota * mine) / Math.max(mine, all);
  }

  liveShare(limit: number): number {
    return Math.max(1, Math.floor(limit / this.liveGateways));
  }

  /** Reports the last interval's demand and takes the fleet's view; one at a time. */
  heartbeat(): Promise<void> {
    this.beating ??= this.beat().finally(() => {
      this.beating = null;
    });
    return this.beating;
  }

  private async beat(): Promise<void> {
    const counted = this.counting;
    this.counting = new Map();
    let demand = [...counted].map(([tenantId, requests]) => ({ tenantId, requests }));
    // The store takes so many tenants per heartbeat; the quieter ones beyond it get quota / N here.
    if (demand.length > MAX_DEMAND_ROWS)
      demand = demand.sort((a, b) => b.requests - a.requests).slice(0, MAX_DEMAND_ROWS);
    try {
      const view = await this.options.store.heartbeatGateway(
        this.options.gatewayId,
        this.options.ttlMs,
        demand,
      );
      this.liveGateways = view.liveGateways;
      this.arriving = new Set([...counted.keys()].filter((tenantId) => !this.mine.has(tenantId)));
      this.mine = counted;
      this.all = new Map(view.demand.map((d) => [d.tenantId, d.requests]));
    } catch (error) {
      // Keep the last shares; this interval's requests count in the next heartbeat.
      for (const [tenantId, requests] of counted) {
        this.counting.set(tenantId, (this.counting.get(tenantId) ?? 0) + requests);
      }
      this.options.log.warn({ err: error }, 'gateway heartbeat failed; keeping the last shares of limits');
    }
  }
}
