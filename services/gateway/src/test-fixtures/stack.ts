// A whole embedded Rookery for end-to-end tests, with real parts: a SQLite
// control store, the CA, the host supervising real tenant processes, and the
// gateway on HTTPS. Principals get real certificates; clients speak real TLS.
import {
  type ControlStore,
  type CreatePrincipalInput,
  type CreateTenantInput,
  controlPaths,
  issuePrincipalCertificate,
  openPostgresControlStore,
  openSqliteControlStore,
  type Principal,
  type Role,
} from '@rookery/control-store';
import { buildHostServer, loadHostConfig, TenantSupervisor } from '@rookery/host';
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
import { Agent, request } from 'undici';
import { type Gateway, type GatewayFleetOptions, startGateway } from '../gateway.js';
import { HostClient } from '../host-client.js';
import type { LiveLimits } from '../live-limits.js';

export const TOKEN = 'test-internal-token-0123456789';

export interface Reply {
  status: number;
  headers: Record<string, string | string[] | undefined>;
  json: Record<string, unknown>;
  text: string;
}

/** Calls the gateway over TLS with one client certificate. */
export interface Connection {
  agent: Agent;
  call(method: string, path: string, body?: unknown, headers?: Record<string, string>): Promise<Reply>;
}

export interface Client extends Connection {
  principal: Principal;
  thumbprint: string;
  serial: string;
  certPem: string;
  keyPem: string;
}

export interface Stack {
  dir: string;
  hostUrl: string;
  store: ControlStore;
  ca: CertificateAuthority;
  masterKey: Buffer;
  /** The embedded job queue the control API reads (no worker runs in these tests). */
  jobs: JobQueue<RookeryJobTypes>;
  gateway: Gateway;
  supervisor: TenantSupervisor;
  clock: { now: number | null };
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
  /** A person, tenant admin of `tenantId`, with an enrolled authenticator and no two-factor session yet. */
  person(name: string, tenantId: string): Promise<{ client: Client; secret: string }>;
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
      spareProcesses: 0,
      tenantLogLevel: 'silent',
      tenantMemoryMb: 0,
      tenantCpus: 0,
    },
  );
  const supervisor = new TenantSupervisor(hostConfig, {
    logger,
    stdio: 'ignore',
    ...(options.tenantEnv && { env: { ...process.env, ...options.tenantEnv } }),
  });
  const host = buildHostServer({ supervisor, internalToken: TOKEN, logger });
  const hostUrl = await host.listen({ host: '127.0.0.1', port: 0 });
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
    now: () => clock.now ?? Date.now(),
  });
  const agents: Agent[] = [];
  function connect({ certPem, keyPem }: { certPem: string; keyPem: string }): Connection {
    const agent = new Agent({
      connect: { ca: ca.certPem, cert: certPem, key: keyPem, servername: 'localhost' },
    });
    agents.push(agent);
    return {
      agent,
      async call(method, urlPath, body, headers = {}) {
        const response = await request(gateway.url + urlPath, {
          method: method as 'GET',
          dispatcher: agent,
          headers: body === undefined ? headers : { 'content-type': 'application/json', ...headers },
          body: body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body),
        });
        const text = await response.body.text();
        let json: Record<string, unknown> = {};
        try {
          json = text ? JSON.parse(text) : {};
        } catch {
          // not JSON
        }
        return { status: response.statusCode, headers: response.headers, json, text };
      },
    };
  }

  async function client(input: CreatePrincipalInput): Promise<Client> {
    const principal = await store.createPrincipal(input);
    const issued = await issuePrincipalCertificate(store, ca, { principalId: principal.id, validDays: 30 });
    return {
      principal,
      thumbprint: issued.record.thumbprint,
      serial: issued.record.serial,
      certPem: issued.certPem,
      keyPem: issued.keyPem,
      ...connect(issued),
    };
  }

  const program = (name: string, tenantId: string | null, role: Role = { kind: 'tenant-admin' }) =>
    client({ tenantId, kind: 'program', name, role });

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
    async person(name, tenantId) {
      const person = await client({ tenantId, kind: 'person', name, role: { kind: 'tenant-admin' } });
      const secret = generateSecret();
      await store.setTotpSecret(person.principal.id, sealSecret(masterKey, secret, person.principal.id));
      return { client: person, secret };
    },
    async close() {
      for (const agent of agents) await agent.close().catch(() => undefined);
      await gateway.close();
      await supervisor.shutdown();
      await host.close();
      await jobs.close();
      await store.close();
      tmp.cleanup();
    },
  };
}
