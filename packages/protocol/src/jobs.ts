// The jobs Rookery's services put on the job queue (@rookery/jobs) for the worker fleet: each
// type's payload schema and lease. The control plane enqueues (POST /control/backups), the
// worker's scheduler enqueues, the workers run them: all of them open the queue with these
// definitions, so a payload is checked the same way wherever it comes from.
import { z } from 'zod';
import { DatabaseNameSchema } from './database.js';
import { IsoDateSchema } from './documents.js';
import { IndexDefinitionSchema } from './indexes.js';

const HOUR = 3600_000;

export const BackupKindSchema = z.enum(['full', 'incremental']);
export type BackupKind = z.infer<typeof BackupKindSchema>;

/** `<created at, 15 digits>-<full|incremental>-<8 hex>`: name order is time order. */
export const BackupIdSchema = z
  .string()
  .regex(/^\d{15}-(full|incremental)-[0-9a-f]{8}$/, 'a backup id looks like 001764000000000-full-1a2b3c4d');

export const BackupJobPayloadSchema = z
  .object({
    database: DatabaseNameSchema,
    /**
     * `incremental`: the transactions since the database's latest backup, chained to it; it is
     * made full when there is nothing to continue (no backup yet, a new mirror generation, or the
     * mirror no longer holds the transactions since). `full`: the newest snapshot and what follows.
     */
    kind: BackupKindSchema.default('incremental'),
    /**
     * Carry the database's index snapshots from the mirror (default): a restore of the backup then
     * gets its indexes from them instead of rebuilding each one (docs/mirror.md, "Index snapshots").
     */
    indexes: z.boolean().default(true),
    /** Who asked for it (a principal id, or "scheduler"), for the logs. */
    requestedBy: z.string().min(1).max(200).optional(),
  })
  .strict();
export type BackupJobPayload = z.output<typeof BackupJobPayloadSchema>;

export const RestoreJobPayloadSchema = z
  .object({
    /** The backed-up database. */
    database: DatabaseNameSchema,
    /** The backup to restore (with the chain it continues); default: the database's latest. */
    backupId: BackupIdSchema.optional(),
    /** Restore the state as of this time (ms since the epoch), within the chain; default: the backup's end. */
    until: z.number().int().nonnegative().optional(),
    /** A new database of the same tenant; restoring over an existing one is refused. */
    targetDatabase: DatabaseNameSchema,
    requestedBy: z.string().min(1).max(200).optional(),
  })
  .strict();
export type RestoreJobPayload = z.output<typeof RestoreJobPayloadSchema>;

export const LifecycleSweepJobPayloadSchema = z
  .object({
    database: DatabaseNameSchema,
    /**
     * The sweep's clock (ISO date-time with offset): what is due at this time is archived or
     * expired. Default: the time the attempt starts. Fixed for the whole job, so the batches it
     * asks for (while the tenant answers `More`) all agree on what is due.
     */
    now: IsoDateSchema.optional(),
  })
  .strict();
export type LifecycleSweepJobPayload = z.output<typeof LifecycleSweepJobPayloadSchema>;

/**
 * Removes a deleted tenant's data: the host stops its process and removes its local files, then
 * the worker removes its mirror and its backups. The tenant is the job's own `tenantId` (every job
 * has one), so the payload only says who asked. A tenant id is not reused while its purge is
 * queued, running or failed (TenantPurgePending), so a purge can never reach a newer tenant's data.
 */
export const TenantPurgeJobPayloadSchema = z
  .object({
    requestedBy: z.string().min(1).max(200).optional(),
  })
  .strict();
export type TenantPurgeJobPayload = z.output<typeof TenantPurgeJobPayloadSchema>;

/**
 * Creates or deletes one database in a tenant's container for the operator's CLI (`rookery
 * database create|delete`): the worker wakes the tenant through the host and calls its admin API,
 * as a tenant admin does through the gateway, then records the result in the control store. Done
 * is done: a database that already exists (or is already gone) completes the job.
 */
export const DatabaseJobPayloadSchema = z
  .object({
    database: DatabaseNameSchema,
    action: z.enum(['create', 'delete']),
    requestedBy: z.string().min(1).max(200).optional(),
  })
  .strict();
export type DatabaseJobPayload = z.output<typeof DatabaseJobPayloadSchema>;

/**
 * Builds one index of a database on the worker fleet (issue [10]): a worker restores the database
 * from the mirror into its own scratch directory, builds the index file with the engine's code and
 * writes it to the mirror as an index snapshot, which the tenant's indexer adopts and catches up.
 * The definition travels whole: the snapshot is labelled with its hash, and the indexer adopts only
 * a snapshot of the definition it holds.
 */
export const IndexBuildJobPayloadSchema = z
  .object({
    database: DatabaseNameSchema,
    definition: IndexDefinitionSchema,
    /** The build's label, written into the snapshot: the indexer adopts only the build it asked for. */
    build: z.string().regex(/^[0-9a-z-]{1,64}$/),
    requestedBy: z.string().min(1).max(200).optional(),
  })
  .strict();
export type IndexBuildJobPayload = z.output<typeof IndexBuildJobPayloadSchema>;

/**
 * Every job type, as `openSqliteJobQueue` / `openPostgresJobQueue` take them. A lease is how long
 * one attempt may run before the queue counts it failed and retries it (the queue has no
 * heartbeat): long enough for an honest backup of a large database, and the bound on how long a
 * crashed worker's job waits before another worker retries it.
 */
// A type alias, not an interface: the queue's JobTypes is a string-indexed record, which only
// object-literal types are assignable to.
export type RookeryJobTypes = {
  backup: { payload: typeof BackupJobPayloadSchema; leaseMs: number };
  restore: { payload: typeof RestoreJobPayloadSchema; leaseMs: number };
  'lifecycle-sweep': { payload: typeof LifecycleSweepJobPayloadSchema; leaseMs: number };
  'tenant-purge': { payload: typeof TenantPurgeJobPayloadSchema; leaseMs: number };
  database: { payload: typeof DatabaseJobPayloadSchema; leaseMs: number };
  'index-build': { payload: typeof IndexBuildJobPayloadSchema; leaseMs: number };
};
export const ROOKERY_JOB_TYPES: RookeryJobTypes = {
  backup: { payload: BackupJobPayloadSchema, leaseMs: 2 * HOUR },
  restore: { payload: RestoreJobPayloadSchema, leaseMs: 2 * HOUR },
  // Batches of at most MAX_SWEEP_LIMIT documents through the tenant's writer: minutes, not hours.
  'lifecycle-sweep': { payload: LifecycleSweepJobPayloadSchema, leaseMs: HOUR / 2 },
  // Deleting directories and objects; a tenant with very many backups in S3 is the long case.
  'tenant-purge': { payload: TenantPurgeJobPayloadSchema, leaseMs: HOUR },
  // Waking a tenant and one admin call; deleting a large database's files is the long case.
  database: { payload: DatabaseJobPayloadSchema, leaseMs: HOUR / 6 },
  // A restore from the mirror and a build from zero: 1M documents take minutes per index.
  'index-build': { payload: IndexBuildJobPayloadSchema, leaseMs: 2 * HOUR },
};
export type RookeryJobType = keyof RookeryJobTypes;

/**
 * The dedupe key of a database's backups: while one waits for its first attempt, asking for
 * another (the scheduler, POST /control/backups) returns the waiting one.
 */
export function backupDedupeKey(tenantId: string, database: string): string {
  return `backup:${tenantId}/${database.toLowerCase()}`;
}

/** The dedupe key of a database's lifecycle sweeps: one waiting sweep per database. */
export function sweepDedupeKey(tenantId: string, database: string): string {
  return `lifecycle-sweep:${tenantId}/${database.toLowerCase()}`;
}

/** The dedupe key of a tenant's purge: one waiting purge per tenant id. */
export function tenantPurgeDedupeKey(tenantId: string): string {
  return `tenant-purge:${tenantId}`;
}

/**
 * An index's worker builds: the host follows one build per key, and its jobs' dedupe key is this (hashed)
 * with the build label, one waiting job per build (services/host/src/index-builds.ts).
 */
export function indexBuildDedupeKey(tenantId: string, database: string, index: string): string {
  return `index-build:${tenantId}/${database.toLowerCase()}/${index.toLowerCase()}`;
}
