export { type CatalogMirrorOptions, DatabaseCatalog, type RestoredDatabase } from './catalog.js';
export {
  type ChangeEntry,
  type CommitHook,
  type CommitListener,
  type CommittedTransaction,
  Database,
  type DatabaseOptions,
  type DocumentsAfter,
  type LoadedDocument,
} from './database.js';
export { bytesUnder } from './disk-usage.js';
export { idKey } from './ids.js';
export {
  awaitedBuildOf,
  DatabaseIndexer,
  type DatabaseIndexerOptions,
  DEFAULT_MAX_INDEXES,
  type IndexProgress,
} from './indexing/database-indexer.js';
export {
  DEFAULT_INDEX_SNAPSHOT_ETAGS,
  DEFAULT_INDEX_SNAPSHOT_MS,
  type IndexSnapshotPolicy,
} from './indexing/index-snapshot-schedule.js';
export { collectionsOf, indexStatsOf } from './indexing/index-stats.js';
export { PrepareThread } from './indexing/prepare-thread.js';
export { DEFAULT_SANDBOX_LIMITS, SandboxError, type SandboxLimits } from './indexing/sandbox/index.js';
export { SandboxBudget } from './indexing/sandbox-budget.js';
export {
  type MirrorSnapshot,
  newestMirrorGeneration,
  newestMirrorSnapshot,
  readTransactionRun,
  StagedMirror,
  segmentBytesAfter,
  type TransactionRun,
} from './mirror/backup-source.js';
export {
  type BuildIndexOptions,
  buildIndexOnMirror,
  type IndexBuildOutcome,
  type IndexBuildProgress as MirrorIndexBuildProgress,
} from './mirror/index-build.js';
export {
  definitionHash,
  type IndexRestoreOutcome,
  type IndexSnapshotEntry,
  type IndexSnapshotManifest,
  indexSnapshotFile,
  indexSnapshotsForBackup,
  listIndexSnapshots,
} from './mirror/index-snapshots.js';
export { hasMirror, isDeleted } from './mirror/layout.js';
export {
  type MirrorLogger,
  type MirrorMode,
  MirrorModeSchema,
  type MirrorOptions,
  MirrorOptionsSchema,
} from './mirror/options.js';
export { type RestoreOptions, type RestoreResult, restoreDatabase } from './mirror/restore.js';
export type { ShippedListener } from './mirror/shipper.js';
export { MAX_AUTO_INDEX_FIELDS } from './query/auto-index.js';
export { IndexCatalog } from './query/index-catalog.js';
export type { IndexReader } from './query/index-reader.js';
export {
  DEFAULT_RESULT_CACHE_BYTES,
  type IndexingControl,
  MAX_ORDER_BY_KEYS,
  type PreparedQuery,
  type QueryOptions,
  QueryRunner,
  type QueryRunnerOptions,
} from './query/query-runner.js';
export type { QueryStream } from './query/query-stream.js';
export { DEFAULT_MAX_RESPONSE_BYTES, ResponseBudget } from './response-budget.js';
export { readDatabaseStatsWithoutOpening } from './stats-reader.js';
export type { SynchronousMode } from './storage/schema.js';
export {
  type BatchOptions,
  DEFAULT_MAX_BATCH_CHARS,
  type SubscriptionBatch,
  SubscriptionCursor,
} from './subscriptions/cursor.js';
export { compileSubscriptionQuery, type SubscriptionQuery } from './subscriptions/query.js';
export type { NewSubscription, SubscriptionRecord } from './subscriptions/record.js';
export { SiblingWorker, type SiblingWorkerEvents } from './worker-thread.js';
export type { DocumentChange } from './write-transaction.js';
