// Opening the scale-out queue: the control plane's PostgreSQL database (or any
// other) gets pg-boss's schema (`pgboss`, created and migrated by pg-boss) and
// ours (`rookery_jobs`); one queue per job type, with the `short` policy that
// carries dedupe keys.
import pg from 'pg';
import PgBoss from 'pg-boss';
import { JobTypeRegistry } from '../job-types.js';
import { type QueueLoggerOption, queueLogger } from '../logger.js';
import { createJobQueue } from '../queue.js';
import type { JobQueue, JobTypes } from '../types.js';
import { PostgresBackend } from './postgres-backend.js';
import { BOSS_SCHEMA, BOSS_SCHEMA_VERSION, createDetailsTable } from './schema.js';
import { TenantSlots } from './tenant-slots.js';

export interface PostgresJobQueueOptions<Types extends JobTypes> extends QueueLoggerOption {
  connectionString: string;
  types: Types;
  /** Pool size, shared by pg-boss and this queue (default 10); tenant slots use one more connection. */
  maxConnections?: number;
  /**
   * How often pg-boss's maintenance runs (ms, whole seconds, at least 1 s;
   * default 60 s): it fails attempts past their lease (so a dead worker's job
   * is retried up to this long after its lease ends) and archives old jobs.
   */
  maintenanceIntervalMs?: number;
  /** How long a job claimed while its tenant was at its limit waits to be offered again (ms, default 1 s). */
  busyTenantDelayMs?: number;
}

export async function openPostgresJobQueue<Types extends JobTypes>(
  options: PostgresJobQueueOptions<Types>,
): Promise<JobQueue<Types>> {
  const registry = new JobTypeRegistry(options.types);
  const logger = queueLogger(options);
  const pool = new pg.Pool({
    connectionString: options.connectionString,
    max: options.maxConnections ?? 10,
    application_name: 'rookery-jobs',
  });
  // Without a listener an idle client's error would crash the process.
  pool.on('error', (error) => logger.warn({ err: error }, 'An idle job-queue connection failed'));
  const boss = new PgBoss({
    db: { executeSql: (text, values) => pool.query(text, values) },
    schema: BOSS_SCHEMA,
    // Maintenance (lease expiry, archiving) runs in every queue; pg-boss lets
    // one of them do it per interval. Cron scheduling is not used.
    supervise: true,
    schedule: false,
    maintenanceIntervalSeconds: Math.max(1, Math.ceil((options.maintenanceIntervalMs ?? 60_000) / 1000)),
  });
  boss.on('error', (error) => logger.error({ err: error }, 'pg-boss reported an error'));
  const slots = new TenantSlots(options.connectionString, logger);
  try {
    try {
      await pool.query('SELECT 1');
    } catch (error) {
      // node-postgres names the address or the database it could not reach, never the password.
      throw new Error(`Cannot reach the PostgreSQL job queue: ${(error as Error).message}`, { cause: error });
    }
    await boss.start();
    const version = Number(await boss.schemaVersion());
    if (version !== BOSS_SCHEMA_VERSION) {
      throw new Error(
        `pg-boss schema version ${version} found; @rookery/jobs reads pg-boss's tables as of version ` +
          `${BOSS_SCHEMA_VERSION} and must be checked against the new one first.`,
      );
    }
    await createDetailsTable(pool);
    await createQueues(pool, boss, registry.names());
  } catch (error) {
    await boss.stop({ graceful: false, close: false }).catch(() => undefined);
    await pool.end().catch(() => undefined);
    throw error;
  }
  const backend = new PostgresBackend(pool, boss, slots, logger, {
    busyTenantDelayMs: options.busyTenantDelayMs ?? 1000,
  });
  boss.on('maintenance', () => {
    backend.pruneDetails().catch((error) => logger.warn({ err: error }, 'Pruning job details failed'));
  });
  return createJobQueue<Types>(backend, registry, logger);
}

/**
 * One pg-boss queue per job type, `short` policy. pg-boss 10's createQueue
 * deadlocks when two processes create the same queue at once (it creates and
 * attaches a partition), so queue creation takes turns under an advisory lock.
 */
async function createQueues(pool: pg.Pool, boss: PgBoss, names: readonly string[]): Promise<void> {
  const lock = await pool.connect();
  try {
    await lock.query("SELECT pg_advisory_lock(hashtextextended('rookery_jobs.queues', 0))");
    try {
      for (const name of names) {
        if (!(await boss.getQueue(name))) await boss.createQueue(name, { name, policy: 'short' });
      }
    } finally {
      await lock.query("SELECT pg_advisory_unlock(hashtextextended('rookery_jobs.queues', 0))");
    }
  } finally {
    lock.release();
  }
}
