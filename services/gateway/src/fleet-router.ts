// Fleet routing (ROOKERY_GATEWAY_ROUTING=fleet; docs/scale-out.md, "Routing"): the control store's
// placement names the host that owns a tenant (placement-cache.ts), and the gateway reaches the tenant
// through that host's relay over mutual TLS (relay-connection.ts). The relay connections go to the same
// pool, parser and backpressure as one machine's Unix sockets (tenant-pool.ts), one pool per host, tenant
// and placement epoch, so a moved tenant never shares a pool with its old place.
//
// A host that answers 421 TenantNotHere, or cannot be reached, answers before anything of a request was
// sent on that connection: the placement is read again (or taken from the 421 when it names a newer
// owner) and the request goes once more, to the new owner, whatever its method (gateway.ts, forward).
import type { FleetStore } from '@rookery/control-store';
import { HostTenantNotHereAnswerSchema } from '@rookery/protocol';
import { Agent } from 'undici';
import {
  databasesFrom,
  type HostAnswer,
  storageFrom,
  type TenantStorage,
  tenantStats,
} from './host-client.js';
import { type Located, PlacementCache, samePlacement } from './placement-cache.js';
import type { TenantUnreachable } from './proxy.js';
import { gatewayError, type Refusal } from './refusal.js';
import { HostUnreachable, openRelay, type RelayCredentials, RelayRefused } from './relay-connection.js';
import { TenantPools } from './tenant-pool.js';
import type { TenantRouter, TenantTarget } from './tenant-router.js';

/**
 * Retry-After of a request whose host cannot be reached. The tenant comes back once the reaper re-placed
 * it (the host's lease TTL plus a grace, 12 s with the defaults) and the new owner restored it; a client
 * that retries sooner gets this answer again, cheaply (one store read).
 */
export const HOST_DOWN_RETRY_SECONDS = 5;

export interface FleetRouterOptions {
  store: Pick<FleetStore, 'getPlacement' | 'placeTenant'>;
  credentials: RelayCredentials;
  /** How long a placement read from the store is used without asking again (ROOKERY_GATEWAY_PLACEMENT_CACHE_MS). */
  placementCacheMs: number;
  /** Connections to one tenant (tenant-pool.ts). */
  maxSockets?: number;
  now?: () => number;
}

export class FleetRouter implements TenantRouter {
  private readonly placements: PlacementCache;
  private readonly pools: TenantPools;
  /** The gateway's certificate for the hosts' internal routes (stats) on their relay ports. */
  private readonly hostsAgent: Agent;

  constructor(private readonly options: FleetRouterOptions) {
    this.placements = new PlacementCache(options.store, options.placementCacheMs, options.now);
    this.pools = new TenantPools({ maxSockets: options.maxSockets });
    const { caPem, certPem, keyPem } = options.credentials;
    this.hostsAgent = new Agent({ connect: { ca: caPem, cert: certPem, key: keyPem } });
  }

  async target(tenantId: string): Promise<TenantTarget> {
    const placement = await this.placements.get(tenantId);
    const connect = () => openRelay(placement.address, tenantId, placement.epoch, this.options.credentials);
    const key = `${placement.address} ${tenantId} ${placement.epoch}`;
    return { pool: this.pools.for(key, connect), connect, placement };
  }

  async unreachable(
    tenantId: string,
    target: TenantTarget,
    error: TenantUnreachable,
  ): Promise<Refusal | null> {
    this.pools.forget(target.pool.key);
    const was = target.placement;
    if (!was) throw new Error('a fleet target always follows a placement');
    this.placements.drop(tenantId, was);
    const cause = error.cause;
    if (cause instanceof RelayRefused) return this.refused(tenantId, was, cause);
    if (cause instanceof HostUnreachable) {
      // Moved meanwhile (the reaper, a drain)? Then the request goes there; else the host is down for now.
      if (!samePlacement(await this.placements.get(tenantId), was)) return null;
      return gatewayError(
        'TenantUnavailable',
        `Tenant ${tenantId}'s host ${was.hostId} cannot be reached; the tenant is moved to another host once that host's lease expires. Retry in ${HOST_DOWN_RETRY_SECONDS} s.`,
        {},
        HOST_DOWN_RETRY_SECONDS,
      );
    }
    // The relay was up and the connection broke before an answer: the tenant stopped or crashed behind it.
    return gatewayError('TenantUnavailable', 'The tenant was restarting; retry the request.', {}, 1);
  }

  async storageOf(tenantId: string): Promise<TenantStorage | null> {
    return storageFrom(await this.stats(tenantId));
  }

  async databasesOf(tenantId: string): Promise<{ readable: string[]; unreadable: string[] }> {
    return databasesFrom(await this.stats(tenantId));
  }

  close(): void {
    this.pools.close();
    void this.hostsAgent.close();
  }

  /** A 421 (the tenant moved): read the placement again and ask the owner it names, once. */
  private refused(tenantId: string, was: Located, refusal: RelayRefused): Refusal | null {
    if (refusal.status === 421) {
      const answer = HostTenantNotHereAnswerSchema.safeParse(refusal.problem);
      const owner = answer.success ? answer.data.owner : null;
      const epoch = answer.success ? answer.data.epoch : null;
      if (owner?.address && epoch !== null && epoch > was.epoch) {
        this.placements.learn(tenantId, { hostId: owner.hostId, address: owner.address, epoch });
      }
      return null;
    }
    // The host's own answer to a wake: a tenant still starting says so; anything else is "not now".
    const starting = refusal.problem?.code === 'TenantStarting';
    return gatewayError(
      starting ? 'TenantStarting' : 'TenantUnavailable',
      starting && refusal.problem
        ? refusal.problem.detail
        : `Tenant ${tenantId}'s host cannot serve it right now (${refusal.problem?.code ?? refusal.status}); retry the request.`,
      {},
      refusal.retryAfterSeconds ?? 1,
    );
  }

  private async stats(tenantId: string): Promise<HostAnswer> {
    const ask = async () => {
      const placement = await this.placements.get(tenantId);
      const answer = await tenantStats(
        placement.address,
        this.options.credentials.internalToken,
        tenantId,
        this.hostsAgent,
      );
      return { placement, answer };
    };
    const first = await ask();
    if (first.answer.status !== 421) return first.answer;
    this.placements.drop(tenantId, first.placement);
    return (await ask()).answer;
  }
}
