// Where the gateway reaches a tenant, and what it asks the tenant's host: the one seam between the
// request path (gateway.ts, upgrade.ts, admission's storage check, database records) and the two ways
// Rookery runs. On one machine (LocalRouter, here) the host on this machine wakes the tenant and names its
// Unix socket; in a fleet (fleet-router.ts) the control store's placement names the host, and the tenant
// is reached through that host's relay over mutual TLS. The one-machine way is exactly what it was before
// fleets existed: a socket path remembered per tenant, no control store read on the request path.
import type { HostClient, TenantStorage } from './host-client.js';
import type { TenantUnreachable } from './proxy.js';
import { gatewayError, type Refusal } from './refusal.js';
import { type Connect, type TenantPool, type TenantPools, unixSocket } from './tenant-pool.js';

/** One way to a tenant, as the router knows it now. */
export interface TenantTarget {
  /** Keep-alive connections for requests. */
  pool: TenantPool;
  /** A connection of its own, for an upgrade (which leaves HTTP for good, so never a pooled one). */
  connect: Connect;
  /** Fleet only: the placement this way follows (which host, at which epoch). */
  placement?: { hostId: string; address: string; epoch: number };
}

export interface TenantRouter {
  /** The way to the tenant, woken (one machine) or placed (a fleet) first: a Refusal when it cannot be reached. */
  target(tenantId: string): Promise<TenantTarget>;
  /**
   * A request by `target` reached nobody: the router forgets what led there. Resolves with the refusal to
   * answer, or null when the tenant is elsewhere now and a request that has not left the gateway
   * (`error.connected` false) may go there at once.
   */
  unreachable(tenantId: string, target: TenantTarget, error: TenantUnreachable): Promise<Refusal | null>;
  /** Bytes the tenant stores, read by its host without waking it; null when the host answers an error. */
  storageOf(tenantId: string): Promise<TenantStorage | null>;
  /** Names of the tenant's databases, read by its host from its files. */
  databasesOf(tenantId: string): Promise<{ readable: string[]; unreadable: string[] }>;
  close(): void;
}

/** One machine: the host at ROOKERY_HOST_URL wakes tenants, and the gateway speaks to their Unix sockets. */
export class LocalRouter implements TenantRouter {
  constructor(
    private readonly hosts: HostClient,
    private readonly pools: TenantPools,
  ) {}

  async target(tenantId: string): Promise<TenantTarget> {
    const woken = await this.hosts.socketOf(tenantId);
    if (!woken.ok) {
      throw gatewayError(
        woken.code === 'TenantStarting' ? 'TenantStarting' : 'TenantUnavailable',
        woken.message,
        {},
        woken.retryAfterSeconds,
      );
    }
    return { pool: this.pools.for(woken.socketPath), connect: unixSocket(woken.socketPath) };
  }

  /** Stopped or crashed since the gateway learnt its socket: the next request wakes it again. */
  async unreachable(tenantId: string, target: TenantTarget): Promise<Refusal | null> {
    this.hosts.forget(tenantId);
    this.pools.forget(target.pool.key);
    return gatewayError('TenantUnavailable', 'The tenant was restarting; retry the request.', {}, 1);
  }

  storageOf(tenantId: string): Promise<TenantStorage | null> {
    return this.hosts.storageOf(tenantId);
  }

  databasesOf(tenantId: string): Promise<{ readable: string[]; unreadable: string[] }> {
    return this.hosts.databasesOf(tenantId);
  }

  close(): void {
    this.pools.close();
  }
}
