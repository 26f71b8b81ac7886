// What pg-boss does not keep about a job lives in our own table beside its
// tables: the tenant (indexed, for list()), the attempt limit and backoff as the
// caller asked for them, progress, the last error, and attempts made by earlier
// copies of the job (see PostgresBackend.putBack). pg-boss's own schema is
// created and migrated by pg-boss.
import type pg from 'pg';
import { withTransaction } from './transaction.js';

export const BOSS_SCHEMA = 'pgboss';
/** pg-boss 10.4.2's schema version; our read-only SQL over its tables was written against it. */
export const BOSS_SCHEMA_VERSION = 24;
export const DETAILS = 'rookery_jobs.job_details';

const CREATE = [
  // Taken for the transaction: queues opening together create the table once.
  "SELECT pg_advisory_xact_lock(hashtextextended('rookery_jobs.schema', 0))",
  'CREATE SCHEMA IF NOT EXISTS rookery_jobs',
  `CREATE TABLE IF NOT EXISTS ${DETAILS} (
    id uuid PRIMARY KEY,
    type text NOT NULL,
    tenant_id text NOT NULL,
    dedupe_key text,
    max_attempts int NOT NULL,
    backoff_ms int NOT NULL,
    attempts_before int NOT NULL DEFAULT 0,
    last_error text,
    progress jsonb,
    created_at bigint NOT NULL
  )`,
  `CREATE INDEX IF NOT EXISTS job_details_newest ON ${DETAILS} (created_at DESC, id DESC)`,
  `CREATE INDEX IF NOT EXISTS job_details_by_tenant ON ${DETAILS} (tenant_id, created_at DESC, id DESC)`,
];

export async function createDetailsTable(pool: pg.Pool): Promise<void> {
  await withTransaction(pool, async ({ client }) => {
    for (const statement of CREATE) await client.query(statement);
  });
}

/**
 * The error a failed attempt left in pg-boss's `output` column: our failures
 * store `{ message }`, pg-boss's lease expiry `{ value: { message } }`.
 */
export function bossErrorSql(output: string): string {
  return `COALESCE(${output} ->> 'message', ${output} -> 'value' ->> 'message')`;
}

/** The message pg-boss 10 records when an active job outlives its expiration (our lease). */
export const BOSS_EXPIRED_MESSAGE = 'job failed by timeout in active state';
