// @rookery/worker: the worker fleet's job runners (backups made from the mirror, restores from
// them) and the backup scheduler. This file is the package's one door; `main.ts` is the process.
export { type BackupKey, deriveBackupKey } from './backup/backup-key.js';
export {
  type BackupOutcome,
  type BackupProgress,
  type BackupRequest,
  type BackupSettings,
  DEFAULT_BACKUP_SETTINGS,
  makeBackup,
} from './backup/make-backup.js';
export type { BackupManifest } from './backup/manifest.js';
export {
  type RestoreOutcome,
  type RestoreProgress,
  type RestoreRequest,
  restoreBackup,
} from './backup/restore-backup.js';
export { loadWorkerConfig, type WorkerConfig, WorkerConfigSchema } from './config.js';
export { WorkerMetrics } from './metrics.js';
export { BackupScheduler } from './schedule/scheduler.js';
export { type BackupSchedule, Schedules } from './schedule/schedules.js';
export type { BackupStorage } from './storage/backup-storage.js';
export { DirectoryStorage } from './storage/directory-storage.js';
export { S3Storage, type S3StorageOptions } from './storage/s3-storage.js';
export { type RunningWorker, startWorker, type WorkerOptions } from './worker.js';
