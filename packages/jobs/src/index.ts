export { LEASE_EXPIRED_MESSAGE } from './attempts.js';
export { type OpenJobQueueOptions, openJobQueue } from './open.js';
export { openPostgresJobQueue, type PostgresJobQueueOptions } from './postgres/open.js';
export { DEFAULT_BACKOFF_MS, DEFAULT_LEASE_MS, DEFAULT_MAX_ATTEMPTS } from './requests.js';
export { jobQueueFile, openSqliteJobQueue, type SqliteJobQueueOptions } from './sqlite/open.js';
export {
  type EnqueueRequest,
  JOB_STATES,
  type Job,
  type JobHandler,
  type JobProgress,
  type JobQueue,
  type JobState,
  type JobTypeDefinition,
  type JobTypes,
  type JsonValue,
  type ListFilter,
  type StopWorking,
  type WorkContext,
  type WorkOptions,
} from './types.js';
