// How many live connections one tenant may hold open through this gateway at once. A request is over in
// milliseconds; a WebSocket or an NDJSON stream lasts as long as its client wants, so without a bound one
// tenant could hold all of the gateway's sockets, and file descriptors, and its tenant container's.
// - WebSockets: each is a connection of its own to the tenant (upgrade-proxy.ts), counted from admission to
//   close, so a burst of upgrades still waiting for a tenant to wake is counted too.
// - NDJSON streams: each holds one of the TENANT_POOL_MAX_SOCKETS connections the gateway's pool opens to
//   the tenant, which its ordinary requests share; at most half of them by default, so streams left open
//   never make the tenant's other requests wait for a connection.
// The limits are per gateway process: behind several gateways a tenant may hold that many through each.
import { gatewayError, type Refusal } from './refusal.js';
import { TENANT_POOL_MAX_SOCKETS } from './tenant-pool.js';

export const DEFAULT_LIVE_LIMITS: LiveLimits = {
  socketsPerTenant: 1_000,
  streamsPerTenant: TENANT_POOL_MAX_SOCKETS / 2,
};

export interface LiveLimits {
  /** WebSockets one tenant may hold open (ROOKERY_GATEWAY_MAX_SOCKETS_PER_TENANT). */
  socketsPerTenant: number;
  /** NDJSON streams one tenant may have in flight (ROOKERY_GATEWAY_MAX_STREAMS_PER_TENANT). */
  streamsPerTenant: number;
}

export type LiveKind = 'websocket' | 'stream';

/** Gives a held connection back; calling it again does nothing. */
export type Release = () => void;

export class LiveConnectionLimits {
  private readonly counters: Record<LiveKind, TenantCounter>;

  constructor(limits: LiveLimits) {
    this.counters = {
      websocket: new TenantCounter(limits.socketsPerTenant, (tenantId, limit) =>
        gatewayError(
          'TooManyLiveConnections',
          `Tenant ${tenantId} has ${limit} WebSockets open through this gateway, its limit; close the ones it no ` +
            'longer uses before opening another (one changes connection carries any number of watches), or ask ' +
            'the operator to raise ROOKERY_GATEWAY_MAX_SOCKETS_PER_TENANT.',
          { limit: 'socketsPerTenant', value: limit },
        ),
      ),
      stream: new TenantCounter(limits.streamsPerTenant, (tenantId, limit) =>
        gatewayError(
          'TooManyLiveConnections',
          `Tenant ${tenantId} has ${limit} NDJSON streams in flight through this gateway, its limit (streams hold ` +
            "connections the tenant's other requests need); read streams to their end or cancel the ones " +
            'abandoned, run fewer at once, or ask the operator to raise ROOKERY_GATEWAY_MAX_STREAMS_PER_TENANT.',
          { limit: 'streamsPerTenant', value: limit },
        ),
      ),
    };
  }

  /** Holds one of the tenant's connections of `kind` until released; 429 `TooManyLiveConnections` at the limit. */
  hold(tenantId: string, kind: LiveKind): Release {
    return this.counters[kind].hold(tenantId);
  }

  /** How many connections of `kind` the tenant holds now. */
  held(tenantId: string, kind: LiveKind): number {
    return this.counters[kind].held(tenantId);
  }
}

/** What each tenant holds of one kind; a tenant holding nothing has no entry. */
class TenantCounter {
  private readonly counts = new Map<string, number>();

  constructor(
    private readonly limit: number,
    private readonly refusal: (tenantId: string, limit: number) => Refusal,
  ) {}

  hold(tenantId: string): Release {
    const count = this.held(tenantId);
    // No Retry-After: a slot frees when one of the tenant's own connections ends, not after a time.
    if (count >= this.limit) throw this.refusal(tenantId, this.limit);
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
