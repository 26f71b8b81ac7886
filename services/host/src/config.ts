// The host's configuration: one zod-validated object read from ROOKERY_* environment variables, with
// defaults that run on one machine. The supervisor takes the same object (plus test hooks) as options.
import path from 'node:path';
import { FLEET_LIMITS } from '@rookery/control-store';
import { LogLevelSchema, loadEnvConfig } from '@rookery/protocol';
import { z } from 'zod';

const ms = (min: number) => z.coerce.number().int().min(min);

export const HostConfigSchema = z.object({
  /** Root of the embedded deployment; tenant `<id>` lives in `<dataDir>/tenants/<id>/`. */
  dataDir: z.string().min(1).default(path.resolve('.rookery/data')),
  /** The internal API listens on this address only: it is for the gateway and operators on this machine. */
  host: z.string().min(1).default('127.0.0.1'),
  port: z.coerce.number().int().min(0).max(65535).default(8081),
  /** Shared with the gateway: requests without `x-rookery-internal-token: <token>` get 401. */
  internalToken: z.string().min(16, 'the internal token must be at least 16 characters'),
  logLevel: LogLevelSchema.default('info'),
  /** Log level of the tenant processes. */
  tenantLogLevel: LogLevelSchema.default('warn'),
  /** A wake that waits longer than this answers 503 `TenantStarting` (Retry-After); the start goes on. */
  startDeadlineMs: ms(1).default(2_000),
  /** A tenant process not ready after this long is killed and its start fails (`TenantUnavailable`). */
  startTimeoutMs: ms(100).default(60_000),
  /** A running tenant with no request in flight for this long is stopped (0 = never). */
  idleStopMs: z.coerce
    .number()
    .int()
    .refine((v) => v === 0 || v >= 500, 'idle stop is 0 (never) or at least 500 ms')
    .default(15 * 60_000),
  /** After SIGTERM, a tenant that has not exited within this is killed (single stops; shutdown has its own). */
  stopTimeoutMs: ms(100).default(15_000),
  /** Whole-host graceful shutdown: SIGTERM every tenant at once, SIGKILL what is left after this. */
  shutdownDeadlineMs: ms(100).default(12_000),
  /** Crash restarts: first delay, doubled per crash within a minute, capped. */
  restartBackoffMs: ms(0).default(250),
  restartBackoffMaxMs: ms(0).default(10_000),
  /** More crashes (or failed starts) than this within a minute: no more automatic restarts for that minute. */
  maxRestartsPerMinute: z.coerce.number().int().min(0).default(5),
  /** Pre-started processes that have loaded the tenant code and wait to be given a tenant (0 = none). */
  spareProcesses: z.coerce.number().int().min(0).max(64).default(1),
  /** V8 heap limit of each tenant process (and its indexer), in MiB. */
  tenantHeapMb: z.coerce.number().int().min(16).default(512),
  /** cgroup v2 memory.max per tenant, in MiB (0 = no limit). */
  tenantMemoryMb: z.coerce.number().int().min(0).default(1024),
  /** cgroup v2 cpu.max per tenant, in CPUs (1.5 = one and a half cores; 0 = no limit). */
  tenantCpus: z.coerce.number().min(0).default(1),
  /** Where the per-tenant cgroups are created (`<root>/rookery/<tenant>`). */
  cgroupRoot: z.string().min(1).default('/sys/fs/cgroup'),
  /** The tenant entry point (`.js`, or `.ts` run through tsx); default: services/tenant's dist when built. */
  tenantEntry: z.string().min(1).optional(),
  /**
   * Worker-built indexes (docs/mirror.md): a new or reset index of a mirrored database holding more documents
   * than this is built by the worker fleet, through the job queue (the control store's database, or the
   * embedded SQLite file under dataDir). Default: 100,000 in a fleet (hostId set), 0 on one machine; 0 =
   * always built beside the tenant, and the host opens no queue.
   */
  indexWorkerThreshold: z.coerce.number().int().min(0).optional(),
  // ── fleet mode (docs/scale-out.md, "Host leases"): on only when hostId is set ──
  /** This host's id in the fleet. Unset: one machine, no control store access, no leases. */
  hostId: z.string().trim().min(1).max(100).optional(),
  /** The control store (PostgreSQL) in fleet mode; unset: the embedded SQLite file under dataDir. */
  controlDatabaseUrl: z.string().min(1).optional(),
  /** The URL gateways reach this host at (recorded with its lease); default: its relay, https://<relayHost>:<relayPort>. */
  advertiseUrl: z.string().url().optional(),
  /** The lease's time to live: renewed every third of it; tenants stop acknowledging writes when it lapses. */
  leaseTtlMs: z.coerce.number().int().min(FLEET_LIMITS.minTtlMs).max(FLEET_LIMITS.maxTtlMs).default(10_000),
  /** The most tenants the control store places on this host. */
  hostCapacity: z.coerce.number().int().min(1).max(FLEET_LIMITS.maxCapacity).default(1_000),
  /** The relay port's address (mutual TLS, for gateways on other machines; relay-server.ts); default: `host`. */
  relayHost: z.string().min(1).optional(),
  relayPort: z.coerce.number().int().min(0).max(65535).default(8082),
  /** Names the relay's certificate is issued for (comma-separated), besides the relay's address. */
  relayNames: z
    .preprocess(
      (v) =>
        typeof v === 'string'
          ? v
              .split(',')
              .map((s) => s.trim())
              .filter(Boolean)
          : v,
      z.array(z.string().min(1)),
    )
    .default(['localhost', '127.0.0.1', '::1']),
  /** Rookery's CA (ca.crt and ca.key), which issues the relay's certificate; default: <dataDir>/control/ca. */
  caDir: z.string().min(1).optional(),
  /**
   * `handoff` (default): a relay connection for a tenant this host owns and runs goes to the tenant's
   * process, which ends TLS (relay-handoff.ts); `pipe`: the host ends every relay connection's TLS and
   * pipes to the tenant's socket (as before the hand-off; one more process in the data path).
   */
  relayMode: z.enum(['handoff', 'pipe']).default('handoff'),
  /** Between two sweeps of this host's reaper (0: this host runs none; docs/scale-out.md, "Failover"). */
  reaperIntervalMs: z.coerce
    .number()
    .int()
    .refine((v) => v === 0 || v >= 100, 'the reaper interval is 0 (no reaper) or at least 100 ms')
    .default(1_000),
  /**
   * How long after a host's lease expired (database clock) its tenants are re-placed. It must exceed how
   * late a tenant can learn of its host's lease (an IPC message waiting behind a busy event loop): until
   * then the old copy may still acknowledge a write.
   */
  reaperGraceMs: z.coerce.number().int().min(100).max(FLEET_LIMITS.maxGraceMs).default(2_000),
});
export type HostConfig = z.infer<typeof HostConfigSchema>;

const ENV_NAMES: Record<keyof HostConfig, string> = {
  dataDir: 'ROOKERY_DATA',
  host: 'ROOKERY_HOST_ADDRESS',
  port: 'ROOKERY_HOST_PORT',
  internalToken: 'ROOKERY_INTERNAL_TOKEN',
  logLevel: 'ROOKERY_LOG_LEVEL',
  tenantLogLevel: 'ROOKERY_TENANT_LOG_LEVEL',
  startDeadlineMs: 'ROOKERY_START_DEADLINE_MS',
  startTimeoutMs: 'ROOKERY_START_TIMEOUT_MS',
  idleStopMs: 'ROOKERY_IDLE_STOP_MS',
  stopTimeoutMs: 'ROOKERY_STOP_TIMEOUT_MS',
  shutdownDeadlineMs: 'ROOKERY_SHUTDOWN_DEADLINE_MS',
  restartBackoffMs: 'ROOKERY_RESTART_BACKOFF_MS',
  restartBackoffMaxMs: 'ROOKERY_RESTART_BACKOFF_MAX_MS',
  maxRestartsPerMinute: 'ROOKERY_MAX_RESTARTS_PER_MINUTE',
  spareProcesses: 'ROOKERY_SPARE_PROCESSES',
  tenantHeapMb: 'ROOKERY_TENANT_HEAP_MB',
  tenantMemoryMb: 'ROOKERY_TENANT_MEMORY_MB',
  tenantCpus: 'ROOKERY_TENANT_CPUS',
  cgroupRoot: 'ROOKERY_CGROUP_ROOT',
  tenantEntry: 'ROOKERY_TENANT_ENTRY',
  indexWorkerThreshold: 'ROOKERY_INDEX_WORKER_THRESHOLD',
  hostId: 'ROOKERY_HOST_ID',
  controlDatabaseUrl: 'ROOKERY_CONTROL_DATABASE_URL',
  advertiseUrl: 'ROOKERY_HOST_ADVERTISE_URL',
  leaseTtlMs: 'ROOKERY_LEASE_TTL_MS',
  hostCapacity: 'ROOKERY_HOST_CAPACITY',
  relayHost: 'ROOKERY_HOST_RELAY_ADDRESS',
  relayPort: 'ROOKERY_HOST_RELAY_PORT',
  relayNames: 'ROOKERY_HOST_RELAY_NAMES',
  caDir: 'ROOKERY_CA_DIR',
  relayMode: 'ROOKERY_RELAY_MODE',
  reaperIntervalMs: 'ROOKERY_REAPER_INTERVAL_MS',
  reaperGraceMs: 'ROOKERY_REAPER_GRACE_MS',
};

/** The settings of fleet mode only: the supervisor never reads them. */
export type FleetConfigKey =
  | 'hostId'
  | 'controlDatabaseUrl'
  | 'advertiseUrl'
  | 'leaseTtlMs'
  | 'hostCapacity'
  | 'relayHost'
  | 'relayPort'
  | 'relayNames'
  | 'caDir'
  | 'relayMode'
  | 'reaperIntervalMs'
  | 'reaperGraceMs';

/** Reads the configuration; a bad value stops start-up with a message naming the variable. */
export function loadHostConfig(
  env: NodeJS.ProcessEnv = process.env,
  overrides: Partial<HostConfig> = {},
): HostConfig {
  return loadEnvConfig('host', HostConfigSchema, ENV_NAMES, env, overrides);
}
