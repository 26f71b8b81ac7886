// How many long-lived or slow requests one tenant may hold in flight through this gateway at once. A point
// read or write is over in milliseconds; a WebSocket or an NDJSON stream lasts as long as its client wants,
// and a query or a bulk insert may take seconds to minutes (waiting for an index, answering megabytes to a
// slow reader, storing gigabytes), so without a bound one tenant, or one class of its requests, could hold
// all of the gateway's sockets and file descriptors, or every connection the gateway opens to its tenant
// container, and the tenant's cheap requests would wait behind them.
// - WebSockets: each is a connection of its own to the tenant (upgrade-proxy.ts), counted from admission to
//   close, so a burst of upgrades still waiting for a tenant to wake is counted too.
// - NDJSON streams, queries, and bulk inserts and sweeps ("slow classes", route-access.ts): each holds one of
//   the connections the gateway's pool opens to the tenant (TENANT_POOL_MAX_SOCKETS), which its ordinary
//   requests share. Each class has its own limit, and together they stay below the pool's size (config.ts
//   checks it), so whatever one class does, point reads and writes and administration keep the rest. A
//   refused query or bulk insert gets Retry-After: such a request is over in seconds, not at its client's will.
// The limits are the tenant's across all gateways: alone a gateway holds the tenant to each whole, with
// others each holds it to its share, limit / live gateways (limit-shares.ts).
import { gatewayError, type Refusal } from './refusal.js';
import type { SlowClass } from './route-access.js';
import { TENANT_POOL_MAX_SOCKETS } from './tenant-pool.js';

/** Half the pool to streams, a quarter to queries, 16 to bulk inserts: 48 of 256 connections stay for the rest. */
export const DEFAULT_LIVE_LIMITS: LiveLimits = {
  socketsPerTenant: 1_000,
  streamsPerTenant: TENANT_POOL_MAX_SOCKETS / 2,
  queriesPerTenant: TENANT_POOL_MAX_SOCKETS / 4,
  bulkPerTenant: 16,
};

export interface LiveLimits {
  /** WebSockets one tenant may hold open (ROOKERY_GATEWAY_MAX_SOCKETS_PER_TENANT). */
  socketsPerTenant: number;
  /** NDJSON streams one tenant may have in flight (ROOKERY_GATEWAY_MAX_STREAMS_PER_TENANT). */
  streamsPerTenant: number;
  /** Queries one tenant may have in flight (ROOKERY_GATEWAY_MAX_QUERIES_PER_TENANT). */
  queriesPerTenant: number;
  /** Bulk inserts and sweeps one tenant may have in flight (ROOKERY_GATEWAY_MAX_BULK_PER_TENANT). */
  bulkPerTenant: number;
}

export type LiveKind = 'websocket' | SlowClass;

/** Seconds a refused query or bulk insert is told to wait: one of the tenant's own finishes by then, usually. */
const SLOW_CLASS_RETRY_AFTER_SECONDS = 1;

/** Gives a held connection back; calling it again does nothing. */
export type Release = () => void;

export class LiveConnectionLimits {
  private readonly counters: Record<LiveKind, TenantCounter>;

  /** `share` gives this gateway's part of a limit (limit-shares.ts); the whole limit when it is alone. */
  constructor(limits: LiveLimits, share: (limit: number) => number = (limit) => limit) {
    this.counters = {
      websocket: new TenantCounter(limits.socketsPerTenant, share, (tenantId, limit, held) =>
        gatewayError(
          'TooManyLiveConnections',
          `Tenant ${tenantId} has ${held} WebSockets open through this gateway, ${itsLimit(limit, held)}; close the ones it no ` +
            'longer uses before opening another (one changes connection carries any number of watches), or ask ' +
            'the operator to raise ROOKERY_GATEWAY_MAX_SOCKETS_PER_TENANT.',
          { limit: 'socketsPerTenant', value: limit },
        ),
      ),
      stream: new TenantCounter(limits.streamsPerTenant, share, (tenantId, limit, held) =>
        gatewayError(
          'TooManyLiveConnections',
          `Tenant ${tenantId} has ${held} NDJSON streams in flight through this gateway, ${itsLimit(limit, held)} (streams hold ` +
            "connections the tenant's other requests need); read streams to their end or cancel the ones " +
            'abandoned, run fewer at once, or ask the operator to raise ROOKERY_GATEWAY_MAX_STREAMS_PER_TENANT.',
          { limit: 'streamsPerTenant', value: limit },
        ),
      ),
      query: new TenantCounter(limits.queriesPerTenant, share, (tenantId, limit, held) =>
        gatewayError(
          'TooManyRequestsInFlight',
          `Tenant ${tenantId} has ${held} queries in flight through this gateway, ${itsLimit(limit, held)} (slow queries hold ` +
            "connections the tenant's other requests need); retry after the Retry-After, run fewer at once, read " +
            'answers to their end, or ask the operator to raise ROOKERY_GATEWAY_MAX_QUERIES_PER_TENANT.',
          { limit: 'queriesPerTenant', value: limit },
          SLOW_CLASS_RETRY_AFTER_SECONDS,
        ),
      ),
      bulk: new TenantCounter(limits.bulkPerTenant, share, (tenantId, limit, held) =>
        gatewayError(
          'TooManyRequestsInFlight',
          `Tenant ${tenantId} has ${held} bulk inserts and sweeps in flight through this gateway, ${itsLimit(limit, held)}; ` +
            'retry after the Retry-After, send one larger bulk insert instead of many, or ask the operator to ' +
            'raise ROOKERY_GATEWAY_MAX_BULK_PER_TENANT.',
          { limit: 'bulkPerTenant', value: limit },
          SLOW_CLASS_RETRY_AFTER_SECONDS,
        ),
      ),
    };
  }

  /**
   * Holds one of the tenant's connections of `kind` until released; 429 at the limit: `TooManyLiveConnections`
   * for WebSockets and streams, `TooManyRequestsInFlight` (with Retry-After) for queries and bulk inserts.
   */
  hold(tenantId: string, kind: LiveKind): Release {
    return this.counters[kind].hold(tenantId);
  }

  /** How many connections of `kind` the tenant holds now. */
  held(tenantId: string, kind: LiveKind): number {
    return this.counters[kind].held(tenantId);
  }
}

/** "its limit", or, behind several gateways, which part of which limit this gateway holds it to. */
function itsLimit(limit: number, held: number): string {
  return held >= limit ? 'its limit' : `this gateway's share of its limit of ${limit} across the gateways`;
}

/** What each tenant holds of one kind; a tenant holding nothing has no entry. */
class TenantCounter {
  private readonly counts = new Map<string, number>();

  constructor(
    private readonly limit: number,
    private readonly share: (limit: number) => number,
    private readonly refusal: (tenantId: string, limit: number, held: number) => Refusal,
  ) {}

  hold(tenantId: string): Release {
    const count = this.held(tenantId);
    // WebSockets and streams carry no Retry-After: a slot frees when one of the tenant's own connections
    // ends, not after a time.
    if (count >= this.share(this.limit)) throw this.refusal(tenantId, this.limit, count);
    this.counts.set(tenantId, count + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = this.held(tenantId) - 1;
      if (left > 0) this.counts.set(tenantId, left);
      else this.counts.delete(tenantId);
    };
  }

  held(tenantId: string): number {
    return this.counts.get(tenantId) ?? 0;
  }
}
