// A fleet for end-to-end tests, with real parts: N host processes in fleet mode (main.ts with
// ROOKERY_HOST_ID, each with its relay on mutual TLS), one control store (a PostgreSQL database, or the
// SQLite file under the fleet's directory), Rookery's CA, one mirror directory shared by every host's
// tenants, and gateways in fleet routing — in this process (`gateway`) and as processes of their own
// (`forkGateway`). A host is a child process the test may SIGKILL or SIGSTOP (`hosts[i].process`), stop,
// or add (`startHost`). Also one machine's way beside it, for figures that compare the two (`localGateway`).
import path from 'node:path';
import {
  type ControlStore,
  type CreateTenantInput,
  controlPaths,
  openPostgresControlStore,
  openSqliteControlStore,
} from '@rookery/control-store';
import { FLEET_TOKEN, type FleetHost, startFleetHost } from '@rookery/host/testing';
import {
  type CertificateAuthority,
  issueServerCertificate,
  loadOrCreateCertificateAuthority,
  loadOrCreateMasterKey,
} from '@rookery/pki';
import { makeTempDir } from '@rookery/testkit';
import pino from 'pino';
import { FleetRouter } from '../fleet-router.js';
import { type Gateway, startGateway } from '../gateway.js';
import { HostClient } from '../host-client.js';
import { ensureRelayClientCertificate } from '../server-certificate.js';
import { type Client, type GatewayClients, gatewayClients } from './gateway-clients.js';
import { forkGateway, type GatewayProcess } from './gateway-process.js';

/** The internal token of every process of the fleet (the host fixture's). */
export { FLEET_TOKEN };

export interface FleetStackOptions {
  /** Host processes started at once, named h1, h2, …; 2 unless said. */
  hosts?: number;
  /** A PostgreSQL database (testkit's freshDatabase) for the control store; the SQLite file under `dir` otherwise. */
  controlDatabaseUrl?: string;
  /** The hosts' lease TTL (ROOKERY_LEASE_TTL_MS); long unless a test needs leases to lapse. */
  leaseTtlMs?: number;
  /** The gateways' placement cache (ROOKERY_GATEWAY_PLACEMENT_CACHE_MS); 3 s unless said. */
  placementCacheMs?: number;
  /** Extra environment of every host process (and through it, its tenants'). */
  hostEnv?: Record<string, string>;
}

export interface FleetStack {
  dir: string;
  store: ControlStore;
  ca: CertificateAuthority;
  /** The one mirror directory every host's tenants write to (ROOKERY_MIRROR). */
  mirrorDir: string;
  /** The hosts started so far, in order (a test's SIGKILL leaves an exited one here). */
  hosts: FleetHost[];
  /** A gateway in fleet routing, in this process. */
  gateway: Gateway;
  /** Principals of the fleet calling `gateway` over mutual TLS. */
  clients: GatewayClients;
  /** Principals calling another gateway of this fleet (a forked one, `localGateway`'s). */
  clientsOf(gateway: { url: string }): GatewayClients;
  /** Creates the tenant and a program principal that is its tenant admin. */
  tenantAdmin(tenant: CreateTenantInput, adminName: string): Promise<Client>;
  /**
   * Places the tenant (if it is not yet) and resolves once it runs on its owner: a first request races the
   * tenant's start against the host's start deadline, which a loaded machine can lose; a test whose first
   * request is not about placing or waking waits for this instead.
   */
  running(tenantId: string): Promise<FleetHost>;
  /** Starts one more host process, registered as `hostId`. */
  startHost(hostId: string, env?: Record<string, string>): Promise<FleetHost>;
  /** A gateway process in fleet routing on the same store and CA (main.ts, as in production). */
  forkGateway(env?: Record<string, string>): Promise<GatewayProcess>;
  /**
   * A one-machine gateway in this process, reaching `host`'s tenants on their Unix sockets through its
   * plain internal API: the local path, beside the relay one, for a benchmark to compare.
   */
  localGateway(host: FleetHost): Promise<Gateway>;
  close(): Promise<void>;
}

export async function startFleetStack(options: FleetStackOptions = {}): Promise<FleetStack> {
  const tmp = makeTempDir('rookery-fleet-');
  const dir = tmp.dir;
  const paths = controlPaths(dir);
  const mirrorDir = path.join(dir, 'mirror');
  const logger = pino({ level: 'silent' });
  const databaseUrl = options.controlDatabaseUrl;
  const store = databaseUrl
    ? await openPostgresControlStore(databaseUrl)
    : await openSqliteControlStore(paths.controlDatabase);
  const ca = await loadOrCreateCertificateAuthority(paths.certificateAuthority);
  const masterKey = await loadOrCreateMasterKey(paths.masterKey);
  const hosts: FleetHost[] = [];
  const gateways: Gateway[] = [];
  const processes: GatewayProcess[] = [];
  const otherClients: GatewayClients[] = [];

  async function startHost(hostId: string, env: Record<string, string> = {}): Promise<FleetHost> {
    const host = await startFleetHost({
      // On PostgreSQL each host has a directory of its own, as on its own machine; on SQLite the store
      // is a file under the data directory, so the hosts share it (and their tenants' directories).
      ROOKERY_DATA: databaseUrl ? path.join(dir, 'hosts', hostId) : dir,
      ...(databaseUrl && { ROOKERY_CONTROL_DATABASE_URL: databaseUrl }),
      ROOKERY_CA_DIR: paths.certificateAuthority,
      ROOKERY_HOST_ID: hostId,
      ROOKERY_LEASE_TTL_MS: String(options.leaseTtlMs ?? 60_000),
      ROOKERY_MIRROR: mirrorDir,
      ...options.hostEnv,
      ...env,
    });
    hosts.push(host);
    return host;
  }

  async function fleetGateway(): Promise<Gateway> {
    const client = await ensureRelayClientCertificate(ca, path.join(dir, 'gateway'));
    const router = new FleetRouter({
      store,
      credentials: { ...client, caPem: ca.certPem, internalToken: FLEET_TOKEN, handshakeTimeoutMs: 60_000 },
      placementCacheMs: options.placementCacheMs ?? 3_000,
    });
    return start({ router });
  }

  async function start(routing: { router: FleetRouter } | { hosts: HostClient }): Promise<Gateway> {
    const server = await issueServerCertificate(ca, { hosts: ['localhost', '127.0.0.1'], validDays: 30 });
    const gateway = await startGateway({
      host: '127.0.0.1',
      port: 0,
      ca,
      serverCertificate: server,
      store,
      masterKey,
      logger,
      usageFlushMs: 200,
      storageCheckMs: 0,
      tenantCacheMs: 0,
      ...routing,
    });
    gateways.push(gateway);
    return gateway;
  }

  try {
    for (let i = 1; i <= (options.hosts ?? 2); i++) await startHost(`h${i}`);
    const gateway = await fleetGateway();
    const clients = gatewayClients(store, ca, () => gateway.url);
    return {
      dir,
      store,
      ca,
      mirrorDir,
      hosts,
      gateway,
      clients,
      clientsOf(other) {
        const made = gatewayClients(store, ca, () => other.url);
        otherClients.push(made);
        return made;
      },
      async tenantAdmin(tenant, adminName) {
        await store.createTenant(tenant);
        return clients.program(adminName, tenant.id);
      },
      async running(tenantId) {
        const placement = await store.placeTenant(tenantId);
        const owner = hosts.find((h) => h.relayAddress === placement.address);
        if (!owner)
          throw new Error(`tenant ${tenantId} is placed on ${placement.hostId}, not a host of this fleet`);
        const woken = await owner.wake(tenantId);
        if (woken.status !== 200)
          throw new Error(`waking ${tenantId}: ${woken.status} ${JSON.stringify(woken.body)}`);
        return owner;
      },
      startHost,
      async forkGateway(env = {}) {
        const child = await forkGateway(
          { dir, hostUrl: 'http://127.0.0.1:9' },
          {
            ROOKERY_GATEWAY_ROUTING: 'fleet',
            ROOKERY_INTERNAL_TOKEN: FLEET_TOKEN,
            ...(databaseUrl && { ROOKERY_CONTROL_DATABASE_URL: databaseUrl }),
            ...(options.placementCacheMs !== undefined && {
              ROOKERY_GATEWAY_PLACEMENT_CACHE_MS: String(options.placementCacheMs),
            }),
            ...env,
          },
        );
        processes.push(child);
        return child;
      },
      localGateway: (host) => start({ hosts: new HostClient(host.address, FLEET_TOKEN) }),
      async close() {
        for (const made of [clients, ...otherClients]) await made.close();
        await Promise.all(processes.map((p) => p.stop()));
        for (const gateway of gateways) await gateway.close();
        await Promise.all(hosts.map((h) => h.stop()));
        await store.close();
        tmp.cleanup();
      },
    };
  } catch (error) {
    await Promise.all(hosts.map((h) => h.stop()));
    await store.close();
    tmp.cleanup();
    throw error;
  }
}
