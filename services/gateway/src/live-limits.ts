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
// A query or bulk insert over its class's limit waits for a place, first come first served, for up to
// QUEUE_WAIT_MS before it is refused, as a connection pooler queues a query for a free backend (pgbouncer's
// query_wait_timeout): most queries answer in a millisecond, so 300 users searching at once (the NuGet load
// test without think time) make a queue served as fast as the tenant answers, not a wall of 429s. How many
// may wait is bounded too. WebSockets and streams never wait: their places free at their clients' will.
import { gatewayError, type Refusal } from './refusal.js';
import type { SlowClass } from './route-access.js';
import { TENANT_POOL_MAX_SOCKETS } from './tenant-pool.js';

/** Half the pool to streams, a quarter to queries, 16 to bulk inserts: 48 of 256 connections stay for the rest. */
export const DEFAULT_LIVE_LIMITS: LiveLimits = {
  socketsPerTenant: 1_000,
  streamsPerTenant: TENANT_POOL_MAX_SOCKETS / 2,
  queriesPerTenant: TENANT_POOL_MAX_SOCKETS / 4,
  bulkPerTenant: 16,
  queueWaitMs: 5_000,
  queuedPerTenant: 1_024,
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
  /**
   * How long a query or bulk insert over its class's limit waits for a place before it is refused
   * (ROOKERY_GATEWAY_QUEUE_WAIT_MS); 0: refused at once.
   */
  queueWaitMs: number;
  /** Queries, and apart bulk inserts, one tenant may have waiting at once (ROOKERY_GATEWAY_MAX_QUEUED_PER_TENANT). */
  queuedPerTenant: number;
}

export type LiveKind = 'websocket' | SlowClass;

/** The kinds whose requests wait for a place over the limit: each ends within seconds, not at its client's will. */
type QueuedKind = 'query' | 'bulk';
const isQueued = (kind: LiveKind): kind is QueuedKind => kind === 'query' || kind === 'bulk';

/** Seconds a refused query or bulk insert is told to wait: one of the tenant's own finishes by then, usually. */
const SLOW_CLASS_RETRY_AFTER_SECONDS = 1;

/** Gives a held connection back; calling it again does nothing. */
export type Release = () => void;

export class LiveConnectionLimits {
  private readonly counters: Record<LiveKind, TenantCounter>;

  /** `share` gives this gateway's part of a limit (limit-shares.ts); the whole limit when it is alone. */
  constructor(limits: LiveLimits, share: (limit: number) => number = (limit) => limit) {
    const queue: Queue | null =
      limits.queueWaitMs > 0 ? { waitMs: limits.queueWaitMs, max: limits.queuedPerTenant } : null;
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
      query: new TenantCounter(
        limits.queriesPerTenant,
        share,
        (tenantId, limit, held, waited) =>
          gatewayError(
            'TooManyRequestsInFlight',
            `Tenant ${tenantId} has ${held} queries in flight through this gateway, ${itsLimit(limit, held)}${waited} (slow queries hold ` +
              "connections the tenant's other requests need); retry after the Retry-After, run fewer at once, read " +
              'answers to their end, or ask the operator to raise ROOKERY_GATEWAY_MAX_QUERIES_PER_TENANT.',
            { limit: 'queriesPerTenant', value: limit },
            SLOW_CLASS_RETRY_AFTER_SECONDS,
          ),
        queue,
      ),
      bulk: new TenantCounter(
        limits.bulkPerTenant,
        share,
        (tenantId, limit, held, waited) =>
          gatewayError(
            'TooManyRequestsInFlight',
            `Tenant ${tenantId} has ${held} bulk inserts and sweeps in flight through this gateway, ${itsLimit(limit, held)}${waited}; ` +
              'retry after the Retry-After, send one larger bulk insert instead of many, or ask the operator to ' +
              'raise ROOKERY_GATEWAY_MAX_BULK_PER_TENANT.',
            { limit: 'bulkPerTenant', value: limit },
            SLOW_CLASS_RETRY_AFTER_SECONDS,
          ),
        queue,
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

  /**
   * Holds a place of `kind` as `hold` does, except that a query or bulk insert over its limit waits for one
   * (queueWaitMs, at most queuedPerTenant waiting) before the same 429. `gone` gives a signal that aborts
   * when the client leaves (asked for only by a request that waits): its wait ends at once and takes no place.
   */
  async place(tenantId: string, kind: LiveKind, gone: () => AbortSignal): Promise<Release> {
    const counter = this.counters[kind];
    return isQueued(kind) ? counter.wait(tenantId, gone) : counter.hold(tenantId);
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

/** How long a request over its limit may wait for a place, and how many of a tenant's may wait at once. */
interface Queue {
  waitMs: number;
  max: number;
}

/** A request waiting for a place: handed one by a release, or refused when its time is up. */
interface Waiter {
  resolve(release: Release): void;
  /** Ends the wait without a place: its timer and its client's abort listener are let go. */
  cancel(): void;
}

/** What each tenant holds of one kind, and who waits for it; a tenant holding nothing has no entry. */
class TenantCounter {
  private readonly counts = new Map<string, number>();
  private readonly waiting = new Map<string, Waiter[]>();

  constructor(
    private readonly limit: number,
    private readonly share: (limit: number) => number,
    private readonly refusal: (tenantId: string, limit: number, held: number, waited: string) => Refusal,
    private readonly queue: Queue | null = null,
  ) {}

  hold(tenantId: string): Release {
    const count = this.held(tenantId);
    // WebSockets and streams carry no Retry-After: a slot frees when one of the tenant's own connections
    // ends, not after a time.
    if (count >= this.share(this.limit)) throw this.refusal(tenantId, this.limit, count, '');
    return this.take(tenantId);
  }

  /** A place now, or the first one given back within the queue's wait, first come first served. */
  wait(tenantId: string, goneSignal: () => AbortSignal): Promise<Release> {
    const queue = this.queue;
    if (queue === null) return Promise.resolve(this.hold(tenantId));
    // Places nobody gave back may have freed meanwhile (this gateway's share grew as another left): those
    // waiting ahead get them first.
    this.handOver(tenantId);
    const queued = this.waiting.get(tenantId) ?? [];
    // Nobody waits ahead: take a free place at once (one that frees while others wait goes to them).
    if (queued.length === 0 && this.held(tenantId) < this.share(this.limit)) {
      return Promise.resolve(this.take(tenantId));
    }
    if (queued.length >= queue.max) {
      throw this.refusal(
        tenantId,
        this.limit,
        this.held(tenantId),
        `; ${queued.length} more already wait for a place (ROOKERY_GATEWAY_MAX_QUEUED_PER_TENANT)`,
      );
    }
    const gone = goneSignal();
    return new Promise<Release>((resolve, reject) => {
      const leave = () => {
        const list = this.waiting.get(tenantId);
        const at = list?.indexOf(waiter) ?? -1;
        if (list && at >= 0) list.splice(at, 1);
        if (list?.length === 0) this.waiting.delete(tenantId);
        waiter.cancel();
      };
      const timer = setTimeout(() => {
        leave();
        reject(
          this.refusal(
            tenantId,
            this.limit,
            this.held(tenantId),
            `; this one waited ${queue.waitMs} ms for a place (ROOKERY_GATEWAY_QUEUE_WAIT_MS)`,
          ),
        );
      }, queue.waitMs);
      const abandoned = () => {
        leave();
        reject(gone.reason);
      };
      const waiter: Waiter = {
        resolve,
        cancel: () => {
          clearTimeout(timer);
          gone.removeEventListener('abort', abandoned);
        },
      };
      if (gone.aborted) return abandoned();
      gone.addEventListener('abort', abandoned, { once: true });
      queued.push(waiter);
      this.waiting.set(tenantId, queued);
    });
  }

  held(tenantId: string): number {
    return this.counts.get(tenantId) ?? 0;
  }

  private take(tenantId: string): Release {
    this.counts.set(tenantId, this.held(tenantId) + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      const left = this.held(tenantId) - 1;
      if (left > 0) this.counts.set(tenantId, left);
      else this.counts.delete(tenantId);
      this.handOver(tenantId);
    };
  }

  /** Gives places freed (or a share grown) to those waiting, in the order they came. */
  private handOver(tenantId: string): void {
    const queued = this.waiting.get(tenantId);
    while (queued && queued.length > 0 && this.held(tenantId) < this.share(this.limit)) {
      const waiter = queued.shift() as Waiter;
      waiter.cancel();
      waiter.resolve(this.take(tenantId));
    }
    if (queued?.length === 0) this.waiting.delete(tenantId);
  }
}
