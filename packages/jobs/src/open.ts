// One way to open the queue from configuration, as every service that uses it
// (control plane, workers) reads it: PostgreSQL (pg-boss) when a connection
// string is given, the embedded SQLite file under the data directory otherwise.
// The same two settings open the control store (see @rookery/control-store's openControlStore).

import type { QueueLoggerOption } from './logger.js';
import { openPostgresJobQueue } from './postgres/open.js';
import { jobQueueFile, openSqliteJobQueue } from './sqlite/open.js';
import type { JobQueue, JobTypes } from './types.js';

export interface OpenJobQueueOptions<Types extends JobTypes> extends QueueLoggerOption {
  /** The embedded deployment's data directory (holds control/jobs.db). */
  dataDir: string;
  /** A PostgreSQL connection string; when set, the SQLite file is not used. */
  databaseUrl?: string | undefined;
  types: Types;
}

export function openJobQueue<Types extends JobTypes>(
  options: OpenJobQueueOptions<Types>,
): Promise<JobQueue<Types>> {
  const { dataDir, databaseUrl, ...rest } = options;
  return databaseUrl
    ? openPostgresJobQueue({ ...rest, connectionString: databaseUrl })
    : openSqliteJobQueue({ ...rest, file: jobQueueFile(dataDir) });
}
