// Opening the embedded queue: `<data>/control/jobs.db`, beside the control
// store, shared by the control plane, the workers and the CLI on one machine.
import fs from 'node:fs';
import path from 'node:path';
import Database from 'better-sqlite3';
import { JobTypeRegistry } from '../job-types.js';
import { type QueueLoggerOption, queueLogger } from '../logger.js';
import { createJobQueue } from '../queue.js';
import type { JobQueue, JobTypes } from '../types.js';
import { migrate } from './schema.js';
import { SqliteBackend } from './sqlite-backend.js';

export interface SqliteJobQueueOptions<Types extends JobTypes> extends QueueLoggerOption {
  /** The database file; created (with its directory) on first open. See `jobQueueFile()`. */
  file: string;
  types: Types;
  /** How long a writer waits for another process's write lock (ms, default 10 s). */
  busyTimeoutMs?: number;
  /** How long finished jobs stay visible (ms, default 7 days). */
  retentionMs?: number;
}

const DAY = 24 * 3600 * 1000;

/** Where the embedded queue lives under a data directory. */
export function jobQueueFile(dataDir: string): string {
  return path.join(path.resolve(dataDir), 'control', 'jobs.db');
}

export async function openSqliteJobQueue<Types extends JobTypes>(
  options: SqliteJobQueueOptions<Types>,
): Promise<JobQueue<Types>> {
  const registry = new JobTypeRegistry(options.types);
  fs.mkdirSync(path.dirname(options.file), { recursive: true });
  const db = new Database(options.file);
  try {
    // busy_timeout first: switching to WAL itself needs a lock another process may hold.
    db.pragma(`busy_timeout = ${Math.max(0, Math.floor(options.busyTimeoutMs ?? 10_000))}`);
    db.pragma('journal_mode = WAL');
    // FULL: an acknowledged enqueue or completion survives power loss.
    db.pragma('synchronous = FULL');
    migrate(db);
  } catch (error) {
    db.close();
    throw error;
  }
  const backend = new SqliteBackend(db, { retentionMs: options.retentionMs ?? 7 * DAY });
  return createJobQueue<Types>(backend, registry, queueLogger(options));
}
