// The embedded queue: one SQLite file that every process on the machine opens.
// Each change is one synchronous BEGIN IMMEDIATE transaction (no lock held
// across an await), so processes take turns on the write lock and a claim sees
// every other process's claims. Writes about a running attempt are fenced by
// its attempt number: an attempt that lost its lease changes nothing.
import type Database from 'better-sqlite3';
import { LEASE_EXPIRED_MESSAGE, retryDelayMs } from '../attempts.js';
import type { AttemptOutcome, Claim, ClaimRequest, NewJob, QueueBackend } from '../backend.js';
import type { ParsedListFilter } from '../requests.js';
import type { Job, JobProgress, JobState } from '../types.js';

interface JobRow {
  seq: number;
  id: string;
  type: string;
  tenant_id: string;
  payload: string;
  state: JobState;
  attempts: number;
  max_attempts: number;
  backoff_ms: number;
  lease_ms: number;
  dedupe_key: string | null;
  last_error: string | null;
  progress: string | null;
  lease_until: number | null;
  created_at: number;
  run_at: number;
  started_at: number | null;
  finished_at: number | null;
}

interface SqliteClaim extends Claim {
  /** The attempt number: the fencing token of this claim. */
  readonly attempt: number;
}

export interface SqliteBackendOptions {
  /** Finished jobs are deleted this long after they finished. */
  retentionMs: number;
}

/** Old finished jobs are pruned at most this often, by whichever process claims. */
const PRUNE_EVERY_MS = 60_000;

export class SqliteBackend implements QueueBackend<SqliteClaim> {
  private readonly statements;
  private readonly listStatements = new Map<string, Database.Statement>();
  private lastPrunedAt = 0;

  constructor(
    private readonly db: Database.Database,
    private readonly options: SqliteBackendOptions,
  ) {
    this.statements = {
      byId: db.prepare('SELECT * FROM jobs WHERE id = ?'),
      waitingDuplicate: db.prepare(
        "SELECT id FROM jobs WHERE type = ? AND dedupe_key = ? AND state = 'queued' AND attempts = 0",
      ),
      insert: db.prepare(`
        INSERT INTO jobs (id, type, tenant_id, payload, state, max_attempts, backoff_ms, lease_ms, dedupe_key,
                          created_at, run_at)
        VALUES (@id, @type, @tenantId, @payloadJson, 'queued', @maxAttempts, @backoffMs, @leaseMs, @dedupeKey,
                @createdAt, @runAt)`),
      expiredLeases: db.prepare("SELECT * FROM jobs WHERE state = 'active' AND lease_until <= ?"),
      prune: db.prepare('DELETE FROM jobs WHERE finished_at < ?'),
      // Due jobs of one type, oldest first, skipping each tenant's jobs beyond
      // what its active ones leave of the per-tenant limit.
      claimable: db.prepare(`
        WITH running AS (
          SELECT tenant_id, count(*) AS n FROM jobs
          WHERE type = @type AND state = 'active' GROUP BY tenant_id
        ), due AS (
          SELECT seq, run_at, tenant_id,
                 row_number() OVER (PARTITION BY tenant_id ORDER BY run_at, seq) AS nth
          FROM jobs WHERE type = @type AND state = 'queued' AND run_at <= @now
        )
        SELECT due.seq FROM due LEFT JOIN running ON running.tenant_id = due.tenant_id
        WHERE due.nth + coalesce(running.n, 0) <= @perTenant
        ORDER BY due.run_at, due.seq
        LIMIT @max`),
      startAttempt: db.prepare(`
        UPDATE jobs SET state = 'active', attempts = attempts + 1, started_at = @now,
                        lease_until = @now + lease_ms, progress = NULL
        WHERE seq = @seq AND state = 'queued'
        RETURNING *`),
      complete: db.prepare(`
        UPDATE jobs SET state = 'completed', finished_at = @now, lease_until = NULL
        WHERE id = @id AND state = 'active' AND attempts = @attempt`),
      failAttempt: db.prepare(`
        UPDATE jobs SET state = @state, run_at = @runAt, finished_at = @finishedAt, last_error = @message,
                        lease_until = NULL
        WHERE id = @id AND state = 'active' AND attempts = @attempt`),
      saveProgress: db.prepare(`
        UPDATE jobs SET progress = @progress WHERE id = @id AND state = 'active' AND attempts = @attempt`),
      isActiveAttempt: db.prepare("SELECT 1 FROM jobs WHERE id = ? AND state = 'active' AND attempts = ?"),
      cancel: db.prepare(`
        UPDATE jobs SET state = 'cancelled', finished_at = @now, lease_until = NULL
        WHERE id = @id AND state IN ('queued', 'active')`),
    };
  }

  async insert(job: NewJob): Promise<string> {
    const run = this.db.transaction(() => {
      if (job.dedupeKey !== null) {
        const waiting = this.statements.waitingDuplicate.get(job.type, job.dedupeKey) as
          | { id: string }
          | undefined;
        if (waiting) return waiting.id;
      }
      this.statements.insert.run(job);
      return job.id;
    });
    return run.immediate();
  }

  async claim(request: ClaimRequest): Promise<SqliteClaim[]> {
    const run = this.db.transaction(() => {
      const now = Date.now();
      this.expireLeases(now);
      this.pruneFinished(now);
      const seqs = this.statements.claimable.all({ ...request, now }) as { seq: number }[];
      return seqs.map(({ seq }) => this.statements.startAttempt.get({ seq, now }) as JobRow);
    });
    return run.immediate().map((row) => ({ job: toJob(row), leaseMs: row.lease_ms, attempt: row.attempts }));
  }

  async settle(claim: SqliteClaim, outcome: AttemptOutcome): Promise<boolean> {
    const { job, attempt } = claim;
    switch (outcome.kind) {
      case 'abandoned':
        return true;
      case 'completed':
        return this.statements.complete.run({ id: job.id, attempt, now: Date.now() }).changes === 1;
      case 'failed':
        return this.recordFailure(job, attempt, outcome.message, Date.now());
    }
  }

  async saveProgress(claim: SqliteClaim, progress: JobProgress): Promise<boolean> {
    const { job, attempt } = claim;
    return (
      this.statements.saveProgress.run({ id: job.id, attempt, progress: JSON.stringify(progress) })
        .changes === 1
    );
  }

  async isStillMine(claim: SqliteClaim): Promise<boolean> {
    return this.statements.isActiveAttempt.get(claim.job.id, claim.attempt) !== undefined;
  }

  async get(id: string): Promise<Job | null> {
    const row = this.statements.byId.get(id) as JobRow | undefined;
    return row ? toJob(row) : null;
  }

  async list(filter: ParsedListFilter): Promise<Job[]> {
    const conditions: string[] = [];
    if (filter.tenantId !== undefined) conditions.push('tenant_id = @tenantId');
    if (filter.type !== undefined) conditions.push('type = @type');
    if (filter.state !== undefined) conditions.push('state = @state');
    const where = conditions.length > 0 ? `WHERE ${conditions.join(' AND ')}` : '';
    const sql = `SELECT * FROM jobs ${where} ORDER BY seq DESC LIMIT @limit`;
    let statement = this.listStatements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.listStatements.set(sql, statement);
    }
    return (statement.all(filter) as JobRow[]).map(toJob);
  }

  async cancel(id: string): Promise<Job | null> {
    this.statements.cancel.run({ id, now: Date.now() });
    return this.get(id);
  }

  async close(): Promise<void> {
    this.db.close();
  }

  /** Attempts whose worker never came back (killed, stopped) fail, as if they had thrown. */
  private expireLeases(now: number): void {
    for (const row of this.statements.expiredLeases.all(now) as JobRow[]) {
      this.recordFailure(toJob(row), row.attempts, LEASE_EXPIRED_MESSAGE, now);
    }
  }

  private pruneFinished(now: number): void {
    if (now - this.lastPrunedAt < PRUNE_EVERY_MS) return;
    this.lastPrunedAt = now;
    this.statements.prune.run(now - this.options.retentionMs);
  }

  /** Queues a retry after the backoff, or fails the job when it has no attempts left. */
  private recordFailure(job: Job, attempt: number, message: string, now: number): boolean {
    const retry = attempt < job.maxAttempts;
    return (
      this.statements.failAttempt.run({
        id: job.id,
        attempt,
        message,
        state: retry ? 'queued' : 'failed',
        runAt: retry ? now + retryDelayMs(job.backoffMs, attempt) : job.runAt,
        finishedAt: retry ? null : now,
      }).changes === 1
    );
  }
}

function toJob(row: JobRow): Job {
  return {
    id: row.id,
    type: row.type,
    tenantId: row.tenant_id,
    payload: JSON.parse(row.payload),
    state: row.state,
    attempts: row.attempts,
    maxAttempts: row.max_attempts,
    backoffMs: row.backoff_ms,
    dedupeKey: row.dedupe_key,
    lastError: row.last_error,
    progress: row.progress === null ? null : JSON.parse(row.progress),
    createdAt: row.created_at,
    runAt: row.run_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
  };
}
