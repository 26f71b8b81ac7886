// The scale-out queue: pg-boss 10 does the queueing (SKIP LOCKED claims,
// retries with backoff, dedupe through its `short` queue policy, expiry of
// attempts that outlive their lease, cancellation, archiving); this class maps
// Rookery's jobs onto it and adds what pg-boss lacks: per-tenant limits
// (TenantSlots), progress and tenant listing (our details table), and fenced
// outcomes, so an attempt that lost its lease cannot complete a later one.
import type pg from 'pg';
import type PgBoss from 'pg-boss';
import type { Logger } from 'pino';
import type { AttemptOutcome, Claim, ClaimRequest, NewJob, QueueBackend } from '../backend.js';
import type { ParsedListFilter } from '../requests.js';
import type { Job, JobProgress } from '../types.js';
import { listJobs, readJobsById } from './job-reads.js';
import { BOSS_SCHEMA, bossErrorSql, DETAILS } from './schema.js';
import type { TenantSlot, TenantSlots } from './tenant-slots.js';
import { withTransaction } from './transaction.js';

/** What pg-boss stores as a job's data: the tenant rides along so a claim knows whose job it is. */
interface BossData {
  tenantId: string;
  payload: unknown;
}
type BossJob = PgBoss.JobWithMetadata<BossData>;

interface PostgresClaim extends Claim {
  /** When pg-boss started this attempt: with the job id, the fencing token of the claim. */
  readonly startedOnMs: number;
  readonly slot: TenantSlot;
}

export interface PostgresBackendOptions {
  /** How long a job claimed while its tenant was at its limit waits before it is offered again. */
  busyTenantDelayMs: number;
}

/**
 * The attempt still belongs to the claim: pg-boss's row is active and was
 * started when the claim started it (to the millisecond; JS dates hold no more).
 */
const ACTIVE_ATTEMPT = `
  name = $1 AND id = $2 AND state = 'active' AND abs(extract(epoch FROM started_on) * 1000 - $3::float8) < 1`;

export class PostgresBackend implements QueueBackend<PostgresClaim> {
  constructor(
    private readonly pool: pg.Pool,
    private readonly boss: PgBoss,
    private readonly slots: TenantSlots,
    private readonly log: Logger,
    private readonly options: PostgresBackendOptions,
  ) {}

  async insert(job: NewJob): Promise<string> {
    // A dedupe conflict finds the waiting job; if that job started in between,
    // the next round inserts ours after all.
    for (let round = 0; round < 3; round++) {
      const inserted = await withTransaction(this.pool, async ({ client, boss }) => {
        const data: BossData = { tenantId: job.tenantId, payload: JSON.parse(job.payloadJson) };
        const id = await this.boss.send(job.type, data, {
          ...boss,
          id: job.id,
          startAfter: new Date(job.runAt),
          retryLimit: job.maxAttempts - 1,
          // pg-boss counts whole seconds; with retryBackoff it doubles the delay
          // per retry and adds jitter, as attempts.ts's retryDelayMs describes.
          retryDelay: Math.ceil(job.backoffMs / 1000),
          retryBackoff: job.backoffMs > 0,
          expireInSeconds: Math.ceil(job.leaseMs / 1000),
          singletonKey: singletonKey(job.id, job.dedupeKey),
        });
        if (id === null) return null;
        await client.query(
          `INSERT INTO ${DETAILS} (id, type, tenant_id, dedupe_key, max_attempts, backoff_ms, created_at)
           VALUES ($1, $2, $3, $4, $5, $6, $7)`,
          [id, job.type, job.tenantId, job.dedupeKey, job.maxAttempts, job.backoffMs, job.createdAt],
        );
        return id;
      });
      if (inserted !== null) return inserted;
      if (job.dedupeKey === null) break;
      const waiting = await this.pool.query<{ id: string }>(
        `SELECT id::text AS id FROM ${BOSS_SCHEMA}.job WHERE name = $1 AND singleton_key = $2 AND state = 'created'`,
        [job.type, singletonKey(job.id, job.dedupeKey)],
      );
      if (waiting.rows[0]) return waiting.rows[0].id;
    }
    throw new Error(`pg-boss did not accept a "${job.type}" job (does its queue exist?)`);
  }

  async claim(request: ClaimRequest): Promise<PostgresClaim[]> {
    const fetched = await this.boss.fetch<BossData>(request.type, {
      batchSize: request.max,
      includeMetadata: true,
    });
    const admitted: { job: BossJob; slot: TenantSlot }[] = [];
    try {
      for (const job of fetched) {
        const slot = await this.slots.tryAcquire(request.type, job.data.tenantId, request.perTenant);
        if (slot) admitted.push({ job, slot });
        else await this.putBack(job);
      }
      if (admitted.length === 0) return [];
      const ids = admitted.map(({ job }) => job.id);
      // A new attempt starts without the last one's progress; the last failure
      // moves to our table, since pg-boss forgets it when this attempt completes.
      await this.pool.query(
        `UPDATE ${DETAILS} d SET progress = NULL, last_error = COALESCE(${bossErrorSql('j.output')}, d.last_error)
         FROM ${BOSS_SCHEMA}.job j WHERE j.name = $1 AND j.id = ANY($2::uuid[]) AND d.id = j.id`,
        [request.type, ids],
      );
      const jobs = new Map((await readJobsById(this.pool, ids)).map((job) => [job.id, job]));
      return admitted.map(({ job, slot }) => {
        const stored = jobs.get(job.id);
        if (!stored) throw new Error(`Job ${job.id} is in pg-boss but not in ${DETAILS}`);
        // node-postgres hands numerics over as strings.
        return {
          job: stored,
          leaseMs: Number(job.expireInSeconds) * 1000,
          startedOnMs: job.startedOn.getTime(),
          slot,
        };
      });
    } catch (error) {
      // The fetched attempts stay active until their leases run out, then retry.
      await Promise.all(admitted.map(({ slot }) => this.slots.release(slot)));
      throw error;
    }
  }

  async settle(claim: PostgresClaim, outcome: AttemptOutcome): Promise<boolean> {
    try {
      if (outcome.kind === 'abandoned') return true;
      return await withTransaction(this.pool, async ({ client, boss }) => {
        // Locking pg-boss's row keeps its lease expiry from failing the attempt
        // while we record it; a row no longer ours means the outcome is dropped.
        if (!(await this.lockAttempt(client, claim.job.type, claim.job.id, claim.startedOnMs))) return false;
        if (outcome.kind === 'completed') {
          await this.boss.complete(claim.job.type, claim.job.id, {}, boss);
        } else {
          await this.boss.fail(claim.job.type, claim.job.id, { message: outcome.message }, boss);
          await client.query(`UPDATE ${DETAILS} SET last_error = $2 WHERE id = $1`, [
            claim.job.id,
            outcome.message,
          ]);
        }
        return true;
      });
    } finally {
      await this.slots.release(claim.slot);
    }
  }

  async saveProgress(claim: PostgresClaim, progress: JobProgress): Promise<boolean> {
    const result = await this.pool.query(
      `UPDATE ${DETAILS} SET progress = $4
       WHERE id = $2 AND EXISTS (SELECT 1 FROM ${BOSS_SCHEMA}.job WHERE ${ACTIVE_ATTEMPT})`,
      [claim.job.type, claim.job.id, claim.startedOnMs, JSON.stringify(progress)],
    );
    return result.rowCount === 1;
  }

  async isStillMine(claim: PostgresClaim): Promise<boolean> {
    const result = await this.pool.query(`SELECT 1 FROM ${BOSS_SCHEMA}.job WHERE ${ACTIVE_ATTEMPT}`, [
      claim.job.type,
      claim.job.id,
      claim.startedOnMs,
    ]);
    return result.rowCount === 1;
  }

  async get(id: string): Promise<Job | null> {
    return (await readJobsById(this.pool, [id]))[0] ?? null;
  }

  list(filter: ParsedListFilter): Promise<Job[]> {
    return listJobs(this.pool, filter);
  }

  async cancel(id: string): Promise<Job | null> {
    const { rows } = await this.pool.query<{ type: string }>(`SELECT type FROM ${DETAILS} WHERE id = $1`, [
      id,
    ]);
    if (!rows[0]) return null;
    await this.boss.cancel(rows[0].type, id);
    return this.get(id);
  }

  async close(): Promise<void> {
    await this.boss.stop({ graceful: false, close: false });
    await this.slots.close();
    await this.pool.end();
  }

  /** Drops details whose pg-boss job is gone (pg-boss deletes archived jobs after a week). */
  async pruneDetails(): Promise<void> {
    await this.pool.query(
      `DELETE FROM ${DETAILS} d
       WHERE d.created_at < $1
         AND NOT EXISTS (SELECT 1 FROM ${BOSS_SCHEMA}.job j WHERE j.name = d.type AND j.id = d.id)
         AND NOT EXISTS (SELECT 1 FROM ${BOSS_SCHEMA}.archive a WHERE a.name = d.type AND a.id = d.id)`,
      // Young rows are spared: their job may be committing in another transaction.
      [Date.now() - 24 * 3600 * 1000],
    );
  }

  private async lockAttempt(client: pg.PoolClient, type: string, id: string, startedOnMs: number) {
    const result = await client.query(`SELECT 1 FROM ${BOSS_SCHEMA}.job WHERE ${ACTIVE_ATTEMPT} FOR UPDATE`, [
      type,
      id,
      startedOnMs,
    ]);
    return result.rowCount === 1;
  }

  /**
   * Gives back a job claimed while its tenant had no free slot, as if it had
   * never been claimed: pg-boss 10 has no "release", so in one transaction the
   * claimed copy is deleted and sent again under the same id, due after a short
   * delay, with the retries it had left. Attempts of earlier copies are kept in
   * our `attempts_before`. (Backoff doubling restarts with the new copy.)
   */
  private async putBack(job: BossJob): Promise<void> {
    await withTransaction(this.pool, async ({ client, boss }) => {
      if (!(await this.lockAttempt(client, job.name, job.id, job.startedOn.getTime()))) return;
      const { rows } = await client.query<{ dedupe_key: string | null; attempts_before: number }>(
        `UPDATE ${DETAILS} d SET attempts_before = d.attempts_before + $2,
                last_error = COALESCE(${bossErrorSql('j.output')}, d.last_error)
         FROM ${BOSS_SCHEMA}.job j
         WHERE d.id = $1 AND j.name = $3 AND j.id = d.id
         RETURNING d.dedupe_key, d.attempts_before`,
        [job.id, job.retryCount, job.name],
      );
      const details = rows[0];
      await this.boss.deleteJob(job.name, job.id, boss);
      const options: PgBoss.SendOptions = {
        ...boss,
        id: job.id,
        startAfter: new Date(Date.now() + this.options.busyTenantDelayMs),
        retryLimit: job.retryLimit - job.retryCount,
        retryDelay: job.retryDelay,
        retryBackoff: job.retryBackoff,
        expireInSeconds: Number(job.expireInSeconds),
      };
      // Deduplicated only while no attempt has started, as at enqueue; if another
      // job took the key meanwhile, this one keeps its place under its own key.
      const stillFirst = details !== undefined && details.attempts_before === 0;
      const sent =
        (await this.boss.send(job.name, job.data, {
          ...options,
          singletonKey: singletonKey(job.id, stillFirst ? details.dedupe_key : null),
        })) ??
        (await this.boss.send(job.name, job.data, { ...options, singletonKey: singletonKey(job.id, null) }));
      if (sent === null) throw new Error(`pg-boss did not take back job ${job.id}`);
    });
    this.log.debug({ job: job.id, tenant: job.data.tenantId }, 'Tenant at its limit; job given back');
  }
}

/**
 * The queues use pg-boss's `short` policy: one job per singleton key may wait
 * in `created`. A dedupe key is that key; a job without one gets a key of its own.
 */
function singletonKey(id: string, dedupeKey: string | null): string {
  return dedupeKey === null ? `job:${id}` : `dedupe:${dedupeKey}`;
}
