import path from 'node:path';
import {
  type CatalogMirrorOptions,
  DEFAULT_INDEX_SNAPSHOT_ETAGS,
  DEFAULT_INDEX_SNAPSHOT_MS,
  DEFAULT_MAX_INDEXES,
  DEFAULT_MAX_RESPONSE_BYTES,
  DEFAULT_SANDBOX_LIMITS,
  MirrorModeSchema,
} from '@rookery/engine';
import {
  DatabaseNameSchema,
  LeaseMeasuredAtMsSchema,
  LeaseRemainingMsSchema,
  LogLevelSchema,
  loadEnvConfig,
  PlacementEpochSchema,
  TenantIdSchema,
} from '@rookery/protocol';
import { z } from 'zod';
import { DEFAULT_INDEXER_REQUEST_TIMEOUT_MS } from './indexing/indexer-process.js';

/** A switch: 'true'/'1'/'false'/'0' from the environment, or a boolean from an override. */
const boolFromEnv = z.union([
  z.boolean(),
  z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1'),
]);

/** `orders=sync,scratch=off`: per-database mirror modes (database names are case-insensitive). */
const MirrorDatabasesSchema = z.string().transform((text, ctx) => {
  const modes: Record<string, z.infer<typeof MirrorModeSchema>> = {};
  for (const entry of text
    .split(',')
    .map((e) => e.trim())
    .filter((e) => e !== '')) {
    const [name = '', mode = ''] = entry.split('=').map((p) => p.trim());
    const parsedName = DatabaseNameSchema.safeParse(name);
    const parsedMode = MirrorModeSchema.safeParse(mode);
    if (!parsedName.success || !parsedMode.success) {
      ctx.addIssue({ code: 'custom', message: `"${entry}" is not <database>=<off|async|sync>` });
      return z.NEVER;
    }
    modes[parsedName.data.toLowerCase()] = parsedMode.data;
  }
  return modes;
});

/** The tenant service's configuration, read from `ROOKERY_*` environment variables. */
export const TenantConfigSchema = z.object({
  /** Where the tenant's databases live (`<dataDir>/databases/<name>/docs.db`). */
  dataDir: z.string().min(1).default(path.resolve('.rookery/data')),
  host: z.string().min(1).default('127.0.0.1'),
  /** 0 picks a free port (tests). */
  port: z.coerce.number().int().min(0).max(65535).default(8080),
  /**
   * A Unix socket to listen on instead of host:port: how the host runs one container per tenant
   * (`<ROOKERY_DATA>/tenants/<id>/tenant.sock`) and the gateway reaches it. At most 107 bytes (the OS limit).
   */
  socketPath: z
    .string()
    .min(1)
    .refine((p) => Buffer.byteLength(p) <= 107, 'a Unix socket path is at most 107 bytes long')
    .optional(),
  logLevel: LogLevelSchema.default('info'),
  /** Largest JSON request body (documents, batches), in bytes. Bigger ones get 413. */
  maxBodyBytes: z.coerce
    .number()
    .int()
    .min(1024)
    .default(32 * 1024 * 1024),
  /** Largest single NDJSON line of a bulk insert, in bytes. */
  maxDocumentBytes: z.coerce
    .number()
    .int()
    .min(1024)
    .default(16 * 1024 * 1024),
  /**
   * Characters of JSON one answer may hold (documents, includes, projections; one streamed row): more is
   * refused with 413 ResponseTooLarge before it is built. Well below the tenant's heap (512 MiB by default),
   * which also holds the answer's parsed documents while it is made.
   */
  maxResponseBytes: z.coerce
    .number()
    .int()
    .min(64 * 1024)
    .default(DEFAULT_MAX_RESPONSE_BYTES),
  /** `full` fsyncs every commit; `normal` only at checkpoints (faster, loses the last commits on power loss). */
  synchronous: z.enum(['full', 'normal']).default('full'),
  compressionThresholdBytes: z.coerce.number().int().min(64).default(4096),
  mergeTransactions: boolFromEnv.default(true),
  /**
   * The tenant's id: its directory on the mirror. The host starts a tenant in `<data>/tenants/<id>`,
   * so by default it is the data directory's name. The control plane's ids only (protocol's TenantIdSchema):
   * the worker purges and restores `<mirror>/<id>` by those.
   */
  tenantId: TenantIdSchema.optional(),
  /** The mirror (a network disk in production): each database ships to `<mirror>/<tenant id>/<database>/`. Unset: not mirrored. */
  mirrorDir: z.string().min(1).optional(),
  /** Mirror mode of every database not named in `mirrorDatabases`. */
  mirrorMode: MirrorModeSchema.default('async'),
  mirrorDatabases: MirrorDatabasesSchema.default({}),
  mirrorSnapshotMb: z.coerce.number().int().min(1).optional(),
  mirrorSnapshotMinutes: z.coerce.number().min(0.02).optional(),
  mirrorRetentionHours: z.coerce.number().min(0).optional(),
  /** Async mode: acknowledgments wait while the mirror is further behind than this. */
  mirrorMaxLagMs: z.coerce.number().int().min(10).optional(),
  /** Sync mode: a write the mirror has not confirmed within this fails with MirrorUnavailable (it stays committed locally). */
  mirrorConfirmTimeoutMs: z.coerce.number().int().min(100).optional(),
  /**
   * This owner's placement epoch (set by a host in a fleet; docs/scale-out.md): the tenant's mirror
   * generations carry it and a restore takes the highest. 0 on one machine.
   */
  placementEpoch: z.coerce.number().pipe(PlacementEpochSchema).default(0),
  /**
   * Milliseconds the host's lease had left when it started this process: past them, writes are
   * refused with 503 LeaseExpired until the host renews (an IPC `lease` message). Unset: no lease
   * (one machine), writes are never refused for it.
   */
  leaseRemainingMs: z.coerce.number().pipe(LeaseRemainingMsSchema).optional(),
  /** When the host measured `leaseRemainingMs`, on the machine's monotonic clock (protocol's lease.ts). */
  leaseMeasuredAtMs: z.coerce.number().pipe(LeaseMeasuredAtMsSchema).optional(),
  /** A request to the indexer process (define, delete or reset an index) not answered within this fails with 503. */
  indexerRequestTimeoutMs: z.coerce.number().int().min(100).default(DEFAULT_INDEXER_REQUEST_TIMEOUT_MS),
  // What the tenant's index code may cost its indexer process (see the engine's README, "Limits on index code").
  /** Indexes one database may hold; one more is refused with 409 TooManyIndexes. */
  indexMaxPerDatabase: z.coerce.number().int().min(1).default(DEFAULT_MAX_INDEXES),
  /** Sandbox memory all JavaScript indexes of the tenant may hold, in MB; one more is refused with 409. */
  indexSandboxBudgetMb: z.coerce.number().int().min(0).default(256),
  /** Heap limit of one JavaScript index sandbox, in MB (a map/reduce index has two). */
  indexSandboxMemoryMb: z.coerce.number().int().min(8).default(DEFAULT_SANDBOX_LIMITS.memoryMb),
  /** Time one document's JavaScript maps may take, in ms; over it the document is an index error. */
  indexDocumentTimeoutMs: z.coerce.number().int().min(1).default(DEFAULT_SANDBOX_LIMITS.documentTimeoutMs),
  /** Time one index's batch may spend in JavaScript maps before it is cut short for the other indexes, in ms. */
  indexBatchTimeMs: z.coerce.number().int().min(1).default(DEFAULT_SANDBOX_LIMITS.batchTimeMs),
  /**
   * A caught-up index is copied to the mirror once it moved this many etags past its last copy, or
   * `indexSnapshotMinutes` after it with anything new (docs/mirror.md, "Index snapshots").
   */
  indexSnapshotEtags: z.coerce.number().int().min(1).default(DEFAULT_INDEX_SNAPSHOT_ETAGS),
  indexSnapshotMinutes: z.coerce
    .number()
    .min(1 / 60)
    .default(DEFAULT_INDEX_SNAPSHOT_MS / 60_000),
  /**
   * A new or reset index of a mirrored database holding more documents than this is built by the worker
   * fleet and adopted here (docs/mirror.md, "Worker-built indexes"); 0: always built here. The host sets
   * it (100,000 by default) when it can put jobs on a queue that workers take; a tenant alone has none.
   */
  indexWorkerThreshold: z.coerce.number().int().min(0).default(0),
  /** Entries one document may emit into one index; over it the document is an index error. */
  indexMaxEntriesPerDocument: z.coerce
    .number()
    .int()
    .min(1)
    .default(DEFAULT_SANDBOX_LIMITS.maxEntriesPerDocument),
});
export type TenantConfig = z.infer<typeof TenantConfigSchema>;

const ENV_NAMES: Record<keyof TenantConfig, string> = {
  dataDir: 'ROOKERY_DATA',
  host: 'ROOKERY_HOST',
  port: 'ROOKERY_PORT',
  socketPath: 'ROOKERY_SOCKET',
  logLevel: 'ROOKERY_LOG_LEVEL',
  maxBodyBytes: 'ROOKERY_MAX_BODY_BYTES',
  maxDocumentBytes: 'ROOKERY_MAX_DOCUMENT_BYTES',
  maxResponseBytes: 'ROOKERY_MAX_RESPONSE_BYTES',
  synchronous: 'ROOKERY_SYNCHRONOUS',
  compressionThresholdBytes: 'ROOKERY_COMPRESSION_THRESHOLD_BYTES',
  mergeTransactions: 'ROOKERY_MERGE_TRANSACTIONS',
  tenantId: 'ROOKERY_TENANT_ID',
  mirrorDir: 'ROOKERY_MIRROR',
  mirrorMode: 'ROOKERY_MIRROR_MODE',
  mirrorDatabases: 'ROOKERY_MIRROR_DATABASES',
  mirrorSnapshotMb: 'ROOKERY_MIRROR_SNAPSHOT_MB',
  mirrorSnapshotMinutes: 'ROOKERY_MIRROR_SNAPSHOT_MINUTES',
  mirrorRetentionHours: 'ROOKERY_MIRROR_RETENTION_HOURS',
  mirrorMaxLagMs: 'ROOKERY_MIRROR_MAX_LAG_MS',
  mirrorConfirmTimeoutMs: 'ROOKERY_MIRROR_CONFIRM_TIMEOUT_MS',
  placementEpoch: 'ROOKERY_PLACEMENT_EPOCH',
  leaseRemainingMs: 'ROOKERY_LEASE_REMAINING_MS',
  leaseMeasuredAtMs: 'ROOKERY_LEASE_MEASURED_AT_MS',
  indexerRequestTimeoutMs: 'ROOKERY_INDEXER_REQUEST_TIMEOUT_MS',
  indexMaxPerDatabase: 'ROOKERY_INDEX_MAX_PER_DATABASE',
  indexSnapshotEtags: 'ROOKERY_INDEX_SNAPSHOT_ETAGS',
  indexSnapshotMinutes: 'ROOKERY_INDEX_SNAPSHOT_MINUTES',
  indexWorkerThreshold: 'ROOKERY_INDEX_WORKER_THRESHOLD',
  indexSandboxBudgetMb: 'ROOKERY_INDEX_SANDBOX_BUDGET_MB',
  indexSandboxMemoryMb: 'ROOKERY_INDEX_SANDBOX_MEMORY_MB',
  indexDocumentTimeoutMs: 'ROOKERY_INDEX_DOCUMENT_TIMEOUT_MS',
  indexBatchTimeMs: 'ROOKERY_INDEX_BATCH_TIME_MS',
  indexMaxEntriesPerDocument: 'ROOKERY_INDEX_MAX_ENTRIES_PER_DOCUMENT',
};

/**
 * Where the tenant's databases are mirrored and how, or null when they are not. Every tenant has
 * its own directory on the mirror, named by its id.
 */
export function mirrorOf(config: TenantConfig): CatalogMirrorOptions | null {
  if (config.mirrorDir === undefined) return null;
  const tenantId = config.tenantId ?? path.basename(path.resolve(config.dataDir));
  if (!TenantIdSchema.safeParse(tenantId).success) {
    throw new Error(
      `Invalid configuration: ROOKERY_TENANT_ID: "${tenantId}" (the data directory's name) cannot name a directory on the mirror; set ROOKERY_TENANT_ID`,
    );
  }
  return {
    root: path.join(config.mirrorDir, tenantId),
    mode: config.mirrorMode,
    modes: config.mirrorDatabases,
    tuning: {
      // Epoch 0 is the mirror's default: one machine's options stay as they were.
      ...(config.placementEpoch !== 0 && { epoch: config.placementEpoch }),
      ...(config.mirrorSnapshotMb !== undefined && {
        snapshotEveryBytes: config.mirrorSnapshotMb * 1024 * 1024,
      }),
      ...(config.mirrorSnapshotMinutes !== undefined && {
        snapshotEveryMs: Math.round(config.mirrorSnapshotMinutes * 60_000),
      }),
      ...(config.mirrorRetentionHours !== undefined && {
        retentionMs: Math.round(config.mirrorRetentionHours * 3_600_000),
      }),
      ...(config.mirrorMaxLagMs !== undefined && { maxLagMs: config.mirrorMaxLagMs }),
      ...(config.mirrorConfirmTimeoutMs !== undefined && { confirmTimeoutMs: config.mirrorConfirmTimeoutMs }),
    },
  };
}

/** Reads the configuration from the environment; a bad value stops start-up with a message naming the variable. */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  overrides: Partial<z.input<typeof TenantConfigSchema>> = {},
): TenantConfig {
  return loadEnvConfig('tenant', TenantConfigSchema, ENV_NAMES, env, overrides);
}

const IndexerConfigSchema = TenantConfigSchema.pick({
  indexMaxPerDatabase: true,
  indexSandboxBudgetMb: true,
  indexSandboxMemoryMb: true,
  indexDocumentTimeoutMs: true,
  indexBatchTimeMs: true,
  indexMaxEntriesPerDocument: true,
  indexSnapshotEtags: true,
  indexSnapshotMinutes: true,
  indexWorkerThreshold: true,
});
export type IndexerConfig = z.infer<typeof IndexerConfigSchema>;

/**
 * The indexer process's part of the configuration, from the environment it
 * inherits from the tenant (which already refused bad values at start-up).
 */
export function loadIndexerConfig(env: NodeJS.ProcessEnv = process.env): IndexerConfig {
  const names = Object.fromEntries(
    Object.keys(IndexerConfigSchema.shape).map((key) => [key, ENV_NAMES[key as keyof IndexerConfig]]),
  ) as Record<keyof IndexerConfig, string>;
  return loadEnvConfig('indexer', IndexerConfigSchema, names, env);
}
