// The worker's configuration: one zod-validated object read from ROOKERY_* environment variables,
// with defaults that run on one machine beside the host and the gateway.
import path from 'node:path';
import { LogLevelSchema, loadEnvConfig } from '@rookery/protocol';
import { z } from 'zod';

const count = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

export const WorkerConfigSchema = z
  .object({
    /** Root of the embedded deployment (the job queue is `<data>/control/jobs.db`). */
    dataDir: z.string().min(1).default(path.resolve('.rookery/data')),
    /** PostgreSQL holding the control state and the job queue (pg-boss); unset: the embedded SQLite queue. */
    databaseUrl: z.string().url().optional(),
    /** The mirror's root (`<mirror>/<tenant>/<database>`); default `<data>/mirror`. */
    mirrorDir: z.string().min(1).optional(),
    /** Where backups are written; default `<data>/backups`. */
    backupDir: z.string().min(1).optional(),
    /** `s3://<bucket>/<prefix>`: write backups to an S3-compatible bucket instead of `backupDir`. */
    backupS3Url: z
      .string()
      .regex(
        /^s3:\/\/[a-z0-9][a-z0-9.-]{1,61}[a-z0-9](\/.*)?$/,
        'an S3 location looks like s3://bucket/prefix',
      )
      .optional(),
    /** An S3-compatible service's URL (MinIO, R2, …); unset: AWS S3. Credentials: AWS_ACCESS_KEY_ID and friends. */
    backupS3Endpoint: z.string().url().optional(),
    backupS3Region: z.string().min(1).default('us-east-1'),
    /** Where tenants keep their databases, for restores (`<tenants>/<tenant>/databases/<db>`); default `<data>/tenants`. */
    tenantsDir: z.string().min(1).optional(),
    /** Room for restores to lay backups out before replaying them; default `<data>/worker/scratch`. */
    scratchDir: z.string().min(1).optional(),
    /** The master key backup keys are derived from; default: the control plane's (`<data>/control/master.key`). */
    masterKeyFile: z.string().min(1).optional(),
    /** Metrics (`/metrics`) and health (`/healthz`) listen here; port 0 picks a free one. */
    host: z.string().min(1).default('127.0.0.1'),
    port: count(0, 65_535).default(8082),
    logLevel: LogLevelSchema.default('info'),
    /** Jobs of each type this worker runs at once. */
    concurrency: count(1, 64).default(2),
    /** Jobs of each type one tenant may have running at once, across every worker. */
    perTenantConcurrency: count(1, 64).default(1),
    pollMs: count(10, 60_000).default(1_000),
    /** zstd level of backups (1–19); 3 is zstd's own default. */
    compressionLevel: count(1, 19).default(3),
    /** Cap on how fast one backup reads the mirror (MB/s; 0: none). */
    backupMaxMbPerSecond: z.coerce.number().min(0).default(0),
    /** Cap on documents one index build indexes per second (0: none). */
    indexBuildMaxDocsPerSecond: z.coerce.number().min(0).default(0),
    /** Documents per batch of an index build (one index transaction each). */
    indexBuildBatch: count(1, 1_000_000).default(16_384),
    /** Incremental backups after a full one before the next is made full. */
    maxChainLength: count(1, 10_000).default(30),
    /** Scheduled backups of every mirrored database: one every this many minutes (0: none). */
    backupEveryMinutes: z.coerce.number().min(0).default(60),
    /** …full when the last full one is older than this. */
    fullBackupEveryHours: z.coerce.number().min(0).default(24),
    /** Per-database schedules (JSON, see README); unset: the defaults above for every database. */
    scheduleFile: z.string().min(1).optional(),
    /** How often the scheduler looks for due backups. */
    schedulerTickMs: count(100, 3_600_000).default(30_000),
    /** The host's internal API: sweep jobs wake tenants through it. */
    hostUrl: z.string().url().default('http://127.0.0.1:8081'),
    /** The host's internal token; unset: sweeps are not scheduled, and sweep jobs fail saying so. */
    internalToken: z.string().min(1).optional(),
    /** Scheduled lifecycle sweeps (archival, expiration) of every mirrored database: one every this many minutes (0: none). */
    sweepEveryMinutes: z.coerce.number().min(0).default(60),
  })
  .transform((config) => ({
    ...config,
    mirrorDir: config.mirrorDir ?? path.join(config.dataDir, 'mirror'),
    backupDir: config.backupDir ?? path.join(config.dataDir, 'backups'),
    tenantsDir: config.tenantsDir ?? path.join(config.dataDir, 'tenants'),
    scratchDir: config.scratchDir ?? path.join(config.dataDir, 'worker', 'scratch'),
  }));
export type WorkerConfig = z.output<typeof WorkerConfigSchema>;
type WorkerConfigInput = z.input<typeof WorkerConfigSchema>;

const ENV_NAMES: Record<keyof WorkerConfigInput, string> = {
  dataDir: 'ROOKERY_DATA',
  databaseUrl: 'ROOKERY_CONTROL_DATABASE_URL',
  mirrorDir: 'ROOKERY_MIRROR',
  backupDir: 'ROOKERY_BACKUP_DIR',
  backupS3Url: 'ROOKERY_BACKUP_S3_URL',
  backupS3Endpoint: 'ROOKERY_BACKUP_S3_ENDPOINT',
  backupS3Region: 'ROOKERY_BACKUP_S3_REGION',
  tenantsDir: 'ROOKERY_TENANTS_DIR',
  scratchDir: 'ROOKERY_WORKER_SCRATCH',
  masterKeyFile: 'ROOKERY_MASTER_KEY_FILE',
  host: 'ROOKERY_WORKER_HOST',
  port: 'ROOKERY_WORKER_PORT',
  logLevel: 'ROOKERY_LOG_LEVEL',
  concurrency: 'ROOKERY_WORKER_CONCURRENCY',
  perTenantConcurrency: 'ROOKERY_WORKER_TENANT_CONCURRENCY',
  pollMs: 'ROOKERY_WORKER_POLL_MS',
  compressionLevel: 'ROOKERY_BACKUP_COMPRESSION_LEVEL',
  backupMaxMbPerSecond: 'ROOKERY_BACKUP_MAX_MB_PER_S',
  maxChainLength: 'ROOKERY_BACKUP_MAX_CHAIN',
  indexBuildMaxDocsPerSecond: 'ROOKERY_INDEX_BUILD_MAX_DOCS_PER_S',
  indexBuildBatch: 'ROOKERY_INDEX_BUILD_BATCH',
  backupEveryMinutes: 'ROOKERY_BACKUP_EVERY_MINUTES',
  fullBackupEveryHours: 'ROOKERY_BACKUP_FULL_EVERY_HOURS',
  scheduleFile: 'ROOKERY_BACKUP_SCHEDULE_FILE',
  schedulerTickMs: 'ROOKERY_BACKUP_SCHEDULER_TICK_MS',
  hostUrl: 'ROOKERY_HOST_URL',
  internalToken: 'ROOKERY_INTERNAL_TOKEN',
  sweepEveryMinutes: 'ROOKERY_SWEEP_EVERY_MINUTES',
};

/** Reads the configuration; a bad value stops start-up with a message naming the variable. */
export function loadWorkerConfig(
  env: NodeJS.ProcessEnv = process.env,
  overrides: Partial<WorkerConfigInput> = {},
): WorkerConfig {
  return loadEnvConfig('worker', WorkerConfigSchema, ENV_NAMES, env, overrides);
}
