// Reading jobs back: our details joined with pg-boss's row for the job, in its
// live table or (once finished long enough) its archive. pg-boss 10 has no way
// to list jobs by anything but id, so this reads its tables directly; it never
// writes them (every change goes through pg-boss's API). Written against
// BOSS_SCHEMA_VERSION, which open() checks.
import type pg from 'pg';
import { LEASE_EXPIRED_MESSAGE } from '../attempts.js';
import type { ParsedListFilter } from '../requests.js';
import type { Job, JobProgress, JobState } from '../types.js';
import { BOSS_EXPIRED_MESSAGE, BOSS_SCHEMA, bossErrorSql, DETAILS } from './schema.js';

interface JobRow {
  id: string;
  type: string;
  tenant_id: string;
  dedupe_key: string | null;
  max_attempts: number;
  backoff_ms: number;
  last_error: string | null;
  progress: JobProgress | null;
  created_at: number;
  attempts: number;
  boss_state: 'created' | 'retry' | 'active' | 'completed' | 'cancelled' | 'failed';
  payload: unknown;
  run_at: number;
  started_at: number | null;
  finished_at: number | null;
}

const bossColumns = 'state, retry_count, started_on, start_after, completed_on, output, data';
const epochMs = (column: string) => `floor(extract(epoch FROM ${column}) * 1000)::float8`;

const SELECT = `
  SELECT d.id::text AS id, d.type, d.tenant_id, d.dedupe_key, d.max_attempts, d.backoff_ms, d.progress,
         d.created_at::float8 AS created_at,
         COALESCE(${bossErrorSql('j.output')}, d.last_error) AS last_error,
         -- pg-boss counts retries, and only once an attempt has started.
         d.attempts_before + CASE WHEN j.started_on IS NULL THEN 0 ELSE j.retry_count + 1 END AS attempts,
         j.state::text AS boss_state,
         j.data -> 'payload' AS payload,
         ${epochMs('j.start_after')} AS run_at,
         ${epochMs('j.started_on')} AS started_at,
         ${epochMs('j.completed_on')} AS finished_at
  FROM ${DETAILS} d
  CROSS JOIN LATERAL (
    SELECT ${bossColumns} FROM ${BOSS_SCHEMA}.job WHERE name = d.type AND id = d.id
    UNION ALL
    SELECT ${bossColumns} FROM ${BOSS_SCHEMA}.archive WHERE name = d.type AND id = d.id
    LIMIT 1
  ) j`;

/** pg-boss's states as ours: created (never started) and retry (waiting to retry) are both queued. */
const BOSS_STATES: Record<JobState, string[]> = {
  queued: ['created', 'retry'],
  active: ['active'],
  completed: ['completed'],
  failed: ['failed'],
  cancelled: ['cancelled'],
};

export async function readJobsById(db: pg.Pool | pg.PoolClient, ids: readonly string[]): Promise<Job[]> {
  const { rows } = await db.query<JobRow>(`${SELECT} WHERE d.id = ANY($1::uuid[])`, [ids]);
  return rows.map(toJob);
}

export async function listJobs(db: pg.Pool, filter: ParsedListFilter): Promise<Job[]> {
  const conditions: string[] = [];
  const values: unknown[] = [];
  const bind = (value: unknown) => {
    values.push(value);
    return `$${values.length}`;
  };
  if (filter.tenantId !== undefined) conditions.push(`d.tenant_id = ${bind(filter.tenantId)}`);
  if (filter.type !== undefined) conditions.push(`d.type = ${bind(filter.type)}`);
  if (filter.state !== undefined) conditions.push(`j.state::text = ANY(${bind(BOSS_STATES[filter.state])})`);
  const where = conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '';
  const { rows } = await db.query<JobRow>(
    `${SELECT} ${where} ORDER BY d.created_at DESC, d.id DESC LIMIT ${bind(filter.limit)}`,
    values,
  );
  return rows.map(toJob);
}

function toJob(row: JobRow): Job {
  return {
    id: row.id,
    type: row.type,
    tenantId: row.tenant_id,
    payload: row.payload,
    state: row.boss_state === 'created' || row.boss_state === 'retry' ? 'queued' : row.boss_state,
    attempts: row.attempts,
    maxAttempts: row.max_attempts,
    backoffMs: row.backoff_ms,
    dedupeKey: row.dedupe_key,
    // Both queues report a lost lease in the same words.
    lastError: row.last_error === BOSS_EXPIRED_MESSAGE ? LEASE_EXPIRED_MESSAGE : row.last_error,
    progress: row.progress,
    createdAt: row.created_at,
    runAt: row.run_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
  };
}
