// A whole embedded Rookery for end-to-end tests, with real parts: a SQLite
// control store, the CA, the host supervising real tenant processes, and the
// gateway on HTTPS. Principals get real certificates; clients speak real TLS.

import path from 'node:path';
import {
  type ControlStore,
  type CreatePrincipalInput,
  type CreateTenantInput,
  controlPaths,
  openPostgresControlStore,
  openSqliteControlStore,
  type Role,
} from '@rookery/control-store';
import { buildHostServer, IndexBuildQueue, loadHostConfig, TenantSupervisor } from '@rookery/host';
import { type JobQueue, jobQueueFile, openSqliteJobQueue } from '@rookery/jobs';
import {
  type CertificateAuthority,
  issueServerCertificate,
  loadOrCreateCertificateAuthority,
  loadOrCreateMasterKey,
  sealSecret,
} from '@rookery/pki';
import { ROOKERY_JOB_TYPES, RookeryError, type RookeryJobTypes } from '@rookery/protocol';
import { makeTempDir } from '@rookery/testkit';
import { generateSecret } from 'otplib';
import pino from 'pino';
import { type Gateway, type GatewayFleetOptions, type GatewayOptions, startGateway } from '../gateway.js';
import { HostClient } from '../host-client.js';
import type { LiveLimits } from '../live-limits.js';
import type { ServerTimeouts } from '../server-timeouts.js';
import { type Client, type Connection, gatewayClients } from './gateway-clients.js';
import { startStackWorker } from './stack-worker.js';

export const TOKEN = 'test-internal-token-0123456789';

export type { Client, Connection, Reply } from './gateway-clients.js';

export interface Stack {
  dir: string;
  hostUrl: string;
  store: ControlStore;
  ca: CertificateAuthority;
  masterKey: Buffer;
  /** The embedded job queue the control API reads (a worker runs its jobs only with `worker: true`). */
  jobs: JobQueue<RookeryJobTypes>;
  gateway: Gateway;
  supervisor: TenantSupervisor;
  clock: { now: number | null };
  /**
   * Starts the worker process now, in a stack started without `worker: true` (once; a test that saw a job
   * wait for a worker lets it run).
   */
  startWorker(): Promise<void>;
  client(input: CreatePrincipalInput): Promise<Client>;
  /** A program principal of `tenantId` (null: an operator) with `role`, a tenant admin unless said otherwise. */
  program(name: string, tenantId: string | null, role?: Role): Promise<Client>;
  /** Creates the tenant, and a program principal that is its tenant admin, named `adminName`. */
  tenantAdmin(tenant: CreateTenantInput, adminName: string): Promise<Client>;
  /**
   * Resolves once the tenant's process runs, starting it if needed. A first request races the tenant's
   * start against the host's start deadline (past it: 503 TenantStarting while the start goes on), which a
   * loaded machine can lose; a test whose first request is not about waking waits for this instead.
   */
  running(tenantId: string): Promise<void>;
  /**
   * A person of `tenantId` (a tenant admin unless `role` says otherwise; null with `{ kind: 'operator' }`:
   * an operator), with an enrolled authenticator and no two-factor session yet.
   */
  person(name: string, tenantId: string | null, role?: Role): Promise<{ client: Client; secret: string }>;
  /** A connection with a certificate issued elsewhere (e.g. through the control API). */
  connect(pems: { certPem: string; keyPem: string }): Connection;
  close(): Promise<void>;
}

export interface StackOptions {
  idleStopMs?: number;
  /** Tests change quotas and expect them at once: no cache by default. */
  tenantCacheMs?: number;
  /** How often the gateway re-checks and meters open WebSockets (its default: 1 s). */
  liveSweepMs?: number;
  /** WebSockets and NDJSON streams one tenant may hold open (the gateway's defaults otherwise). */
  liveLimits?: Partial<LiveLimits>;
  /** Extra environment of the tenant processes (ROOKERY_* tenant settings such as ROOKERY_INDEX_*). */
  tenantEnv?: Record<string, string>;
  /** Connections the gateway opens to one tenant (its default otherwise). */
  tenantConnections?: number;
  /** The control store on this PostgreSQL database instead of the embedded SQLite file. */
  controlDatabaseUrl?: string;
  /** The gateway shares its tenants' limits with other gateways on the same store (off otherwise). */
  gatewayFleet?: GatewayFleetOptions;
  /** The gateway's RavenDB TCP listener (on a free port with the default limits otherwise; null: off). */
  ravenTcp?: GatewayOptions['ravenTcp'];
  /** The gateway's HTTPS server timeouts (DEFAULT_SERVER_TIMEOUTS otherwise). */
  gatewayTimeouts?: Partial<ServerTimeouts>;
  /** The console's build the gateway serves at `/` (none otherwise: `/` answers 404). */
  consoleDir?: string;
  /**
   * Runs a real worker process (services/worker) on the stack's data directory, mirror, master key and
   * host, so queued backups and restores run; the tenants then mirror (sync) to `<dir>/mirror`, which
   * backups read. Off otherwise: jobs stay queued and tenants do not mirror.
   */
  worker?: boolean;
  /**
   * Indexes of a database above this many documents are built by a worker (the host's IndexBuildQueue on
   * the stack's job queue, followed every 100 ms), and the tenants mirror (sync) for it. Off otherwise:
   * every index is built by its tenant. Without `worker: true` the builds wait in the queue until
   * `startWorker()`, which holds an index (or a changed definition) mid-build deterministically.
   */
  indexWorkerThreshold?: number;
}

export async function startStack(options: StackOptions = {}): Promise<Stack> {
  const tmp = makeTempDir();
  const dir = tmp.dir;
  const logger = pino({ level: 'silent' });
  // The embedded layout, so a gateway process started on `dir` finds the same store, CA and key.
  const paths = controlPaths(dir);
  const store = options.controlDatabaseUrl
    ? await openPostgresControlStore(options.controlDatabaseUrl)
    : await openSqliteControlStore(paths.controlDatabase);
  const ca = await loadOrCreateCertificateAuthority(paths.certificateAuthority);
  const masterKey = await loadOrCreateMasterKey(paths.masterKey);
  const jobs = await openSqliteJobQueue({ file: jobQueueFile(dir), types: ROOKERY_JOB_TYPES });
  const hostConfig = loadHostConfig(
    {},
    {
      dataDir: dir,
      internalToken: TOKEN,
      port: 0,
      idleStopMs: options.idleStopMs ?? 0,
      // Tenants start from TypeScript sources here (tsx): slower than a built tenant.
      startDeadlineMs: 30_000,
      // Far above a start on a starved machine: at load 20 one took longer than the default 60 s, was
      // killed and failed its test ("did not start within 60000 ms"). No test here waits for this timeout.
      startTimeoutMs: 300_000,
      spareProcesses: 0,
      tenantLogLevel: 'silent',
      tenantMemoryMb: 0,
      tenantCpus: 0,
    },
  );
  const mirrorDir = path.join(dir, 'mirror');
  // Backups read the mirror: with a worker, the tenants ship every commit to it before acknowledging.
  const mirrors = options.worker || options.indexWorkerThreshold !== undefined;
  const mirrorEnv = mirrors ? { ROOKERY_MIRROR: mirrorDir, ROOKERY_MIRROR_MODE: 'sync' } : undefined;
  const tenantEnv = mirrorEnv || options.tenantEnv ? { ...mirrorEnv, ...options.tenantEnv } : undefined;
  const indexBuilds =
    options.indexWorkerThreshold === undefined
      ? undefined
      : new IndexBuildQueue(jobs, options.indexWorkerThreshold, logger, 100);
  const supervisor = new TenantSupervisor(hostConfig, {
    logger,
    stdio: 'ignore',
    ...(indexBuilds && { indexBuilds }),
    ...(tenantEnv && { env: { ...process.env, ...tenantEnv } }),
  });
  const host = buildHostServer({ supervisor, internalToken: TOKEN, logger });
  const hostUrl = await host.listen({ host: '127.0.0.1', port: 0 });
  const startWorker = () =>
    startStackWorker({
      dataDir: dir,
      mirrorDir,
      masterKeyFile: paths.masterKey,
      hostUrl,
      internalToken: TOKEN,
    });
  let worker = options.worker ? await startWorker() : null;
  const server = await issueServerCertificate(ca, { hosts: ['localhost', '127.0.0.1'], validDays: 30 });
  // A clock the tests can move (TOTP session expiry); null follows the real time.
  const clock = { now: null as number | null };
  const gateway = await startGateway({
    host: '127.0.0.1',
    port: 0,
    ca,
    serverCertificate: server,
    store,
    hosts: new HostClient(hostUrl, TOKEN),
    masterKey,
    jobs,
    logger,
    usageFlushMs: 200,
    storageCheckMs: 0,
    tenantCacheMs: options.tenantCacheMs ?? 0,
    liveSweepMs: options.liveSweepMs,
    liveLimits: options.liveLimits,
    tenantConnections: options.tenantConnections,
    fleet: options.gatewayFleet,
    timeouts: options.gatewayTimeouts,
    consoleDir: options.consoleDir ?? null,
    ravenTcp: options.ravenTcp === undefined ? { port: 0 } : options.ravenTcp,
    now: () => clock.now ?? Date.now(),
  });
  const clients = gatewayClients(store, ca, () => gateway.url);
  const { connect, client, program } = clients;

  return {
    dir,
    hostUrl,
    store,
    ca,
    masterKey,
    jobs,
    gateway,
    supervisor,
    clock,
    async startWorker() {
      worker ??= await startWorker();
    },
    connect,
    client,
    program,
    async tenantAdmin(tenant, adminName) {
      await store.createTenant(tenant);
      return program(adminName, tenant.id);
    },
    async running(tenantId) {
      // Each wake waits for the same start (at most the deadline at a time); it does not start it again.
      for (;;) {
        try {
          await supervisor.wake(tenantId);
          return;
        } catch (error) {
          if (!(error instanceof RookeryError && error.code === 'TenantStarting')) throw error;
        }
      }
    },
    async person(name, tenantId, role = { kind: 'tenant-admin' }) {
      const person = await client({ tenantId, kind: 'person', name, role });
      const secret = generateSecret();
      await store.setTotpSecret(person.principal.id, sealSecret(masterKey, secret, person.principal.id));
      return { client: person, secret };
    },
    async close() {
      await clients.close();
      await gateway.close();
      await worker?.stop();
      indexBuilds?.close();
      await supervisor.shutdown();
      await host.close();
      await jobs.close();
      await store.close();
      tmp.cleanup();
    },
  };
}
