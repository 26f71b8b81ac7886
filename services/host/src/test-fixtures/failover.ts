// Two real fleet host processes on one control store and one shared mirror directory, for the failover
// tests (failover.test.ts on SQLite, failover.postgres.test.ts on PostgreSQL): the test talks to each
// host's wake and to the tenants' sockets directly, as a gateway would through the relay.
import fs from 'node:fs';
import path from 'node:path';
import { HostTenantListSchema, HostWakeAnswerSchema, INTERNAL_TOKEN_HEADER } from '@rookery/protocol';
import { request } from 'undici';
import { FLEET_TOKEN, type FleetHost, type FleetHostLaunch, startFleetHost } from './fleet-host.js';
import { TenantClient } from './tenant-client.js';

/** Short enough for a test, long enough that a loaded machine renews in time (every TTL/3). */
export const FAILOVER_TTL_MS = 1_500;
export const FAILOVER_GRACE_MS = 300;
export const FAILOVER_REAPER_INTERVAL_MS = 200;

export interface FailoverFleet {
  mirror: string;
  dataOf(hostId: string): string;
  /** `env` on top of the fleet's settings (a host in a network namespace reaches the store elsewhere). */
  start(hostId: string, env?: Record<string, string>, launch?: FleetHostLaunch): Promise<FleetHost>;
  /** Wakes the tenant on the host and answers a client of its socket (closed by close()). */
  open(host: FleetHost, tenantId: string): Promise<TenantClient>;
  /** The tenant's process on the host, or undefined when it runs none. */
  tenantOn(host: FleetHost, tenantId: string): Promise<{ pid: number | null; state: string } | undefined>;
  metrics(host: FleetHost): Promise<string>;
  close(): Promise<void>;
}

/**
 * `controlEnv`: how each host reaches the control store (ROOKERY_CONTROL_DATABASE_URL for PostgreSQL), or
 * `sharedControlDir` for the embedded SQLite file, linked into every host's data directory.
 */
export function failoverFleet(
  root: string,
  store: { controlEnv: Record<string, string> } | { sharedControlDir: string },
): FailoverFleet {
  const mirror = path.join(root, 'mirror');
  const hosts: FleetHost[] = [];
  const clients: TenantClient[] = [];
  const dataOf = (hostId: string) => path.join(root, hostId);
  return {
    mirror,
    dataOf,
    async start(hostId, env = {}, launch = {}) {
      const data = dataOf(hostId);
      fs.mkdirSync(data, { recursive: true });
      if ('sharedControlDir' in store && !fs.existsSync(path.join(data, 'control')))
        fs.symlinkSync(store.sharedControlDir, path.join(data, 'control'));
      const host = await startFleetHost(
        {
          ROOKERY_DATA: data,
          ROOKERY_HOST_ID: hostId,
          ROOKERY_LEASE_TTL_MS: String(FAILOVER_TTL_MS),
          ROOKERY_REAPER_GRACE_MS: String(FAILOVER_GRACE_MS),
          ROOKERY_REAPER_INTERVAL_MS: String(FAILOVER_REAPER_INTERVAL_MS),
          ROOKERY_MIRROR: mirror,
          ROOKERY_MIRROR_MODE: 'sync',
          ...('controlEnv' in store ? store.controlEnv : {}),
          ...env,
        },
        launch,
      );
      hosts.push(host);
      return host;
    },
    async open(host, tenantId) {
      const woken = await host.wake(tenantId);
      if (woken.status !== 200) throw new Error(`waking ${tenantId}: ${JSON.stringify(woken)}`);
      const client = new TenantClient(HostWakeAnswerSchema.parse(woken.body).socketPath);
      clients.push(client);
      return client;
    },
    async tenantOn(host, tenantId) {
      const list = HostTenantListSchema.parse((await host.call('GET', '/tenants')).body);
      return list.tenants.find((t) => t.tenantId === tenantId);
    },
    async metrics(host) {
      const reply = await request(`${host.address}/metrics`, {
        headers: { [INTERNAL_TOKEN_HEADER]: FLEET_TOKEN },
      });
      return reply.body.text();
    },
    async close() {
      await Promise.all(clients.map((c) => c.close().catch(() => {})));
      await Promise.all(hosts.map((h) => h.stop()));
    },
  };
}

/**
 * Writes documents `<prefix>/<n>` one after another until one is not acknowledged with 201 (or `count` were);
 * answers the ids that were. A sync-mode write is acknowledged only once the mirror has it.
 */
export async function writeUntilRefused(
  client: TenantClient,
  prefix: string,
  count = Infinity,
): Promise<string[]> {
  const acknowledged: string[] = [];
  for (let n = 0; n < count; n++) {
    const id = `${prefix}/${n}`;
    const reply = await client.call('PUT', `/databases/shop/docs?id=${id}`, { N: n }).catch(() => null);
    if (reply?.status !== 201) break;
    acknowledged.push(id);
  }
  return acknowledged;
}

/** The ids among `ids` the tenant does not answer 200 for. */
export async function missing(client: TenantClient, ids: readonly string[]): Promise<string[]> {
  const absent: string[] = [];
  for (const id of ids) {
    if ((await client.call('GET', `/databases/shop/docs?id=${id}`)).status !== 200) absent.push(id);
  }
  return absent;
}
