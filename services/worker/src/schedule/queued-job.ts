// What the schedulers read back from jobs already on the queue: the database a queued job is for. The
// payload went onto the queue through its schema, but a job enqueued by another version (a rolling
// upgrade) or written by hand is read through the same schema again rather than cast: fields this
// version does not know are ignored, and a payload without a database is no job for any database.
import { BackupJobPayloadSchema } from '@rookery/protocol';

/** Backups and lifecycle sweeps name their database the same way (protocol jobs.ts). */
const DatabasePayloadSchema = BackupJobPayloadSchema.pick({ database: true }).loose();

/** The queued job's database, lower-cased (names are case-insensitive), or null when it names none. */
export function databaseOfQueuedJob(payload: unknown): string | null {
  const parsed = DatabasePayloadSchema.safeParse(payload);
  return parsed.success ? parsed.data.database.toLowerCase() : null;
}
