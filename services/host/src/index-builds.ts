// Worker-built indexes (issue [10]; docs/mirror.md, "Worker-built indexes"): the host's part. A tenant's
// indexer does not build a new or reset index of a large mirrored database itself; the tenant asks its host
// over IPC (it has no access to the job queue), and the host puts the `index-build` job on the queue the
// worker fleet takes. While the job runs the host reads it every `pollMs` and passes its state and progress
// to the tenant's current process, which shows them in the index's stats. The indexer adopts the worker's
// snapshot from the mirror on its own: nothing here is on the path that decides what is adopted.
import { createHash } from 'node:crypto';
import type { JobQueue } from '@rookery/jobs';
import {
  type IndexBuildProgressMessage,
  type IndexBuildRequestMessage,
  indexBuildDedupeKey,
  type RookeryJobTypes,
} from '@rookery/protocol';
import type { Logger } from 'pino';

/** Documents above which a fleet builds a new index on a worker (ROOKERY_INDEX_WORKER_THRESHOLD). */
export const DEFAULT_INDEX_WORKER_THRESHOLD = 100_000;
const POLL_MS = 1_000;
/** Attempts of one build: a worker that dies mid-build is retried by the queue (after its lease). */
const MAX_ATTEMPTS = 3;
const BACKOFF_MS = 5_000;
const PHASES = new Set(['restore', 'index', 'snapshot']);

/** Sends to the tenant's process as it is now (it may have restarted since the request). */
export type SendToTenant = (tenantId: string, message: IndexBuildProgressMessage) => void;

export class IndexBuildQueue {
  /**
   * The job followed per `<tenant>/<db>/<index>`: a newer build of the index (a change that supersedes the
   * one being built) cancels it and is followed instead.
   */
  private readonly followed = new Map<string, { jobId: string; build: string; timer: NodeJS.Timeout }>();
  /** Requests are handled one after another, so that two changes sent at once cannot both miss each other. */
  private handling: Promise<void> = Promise.resolve();
  private closed = false;

  constructor(
    private readonly queue: JobQueue<RookeryJobTypes>,
    /** The documents threshold tenants are started with. */
    readonly threshold: number,
    private readonly log: Logger,
    private readonly pollMs = POLL_MS,
  ) {}

  /**
   * Enqueues the build (the same build still waiting for its first attempt is that job: the dedupe key) and
   * follows it. A different build of an index whose job this host follows supersedes it: that job is
   * cancelled first (a running one is stopped by the queue: its worker sees the attempt's signal abort), as
   * its snapshot would carry a label the indexer no longer adopts. A failure to enqueue is logged: the
   * indexer asks again at its next start.
   */
  request(tenantId: string, request: IndexBuildRequestMessage, send: SendToTenant): Promise<void> {
    const handled = this.handling.then(() => this.handle(tenantId, request, send));
    this.handling = handled.catch(() => undefined);
    return handled;
  }

  private async handle(
    tenantId: string,
    request: IndexBuildRequestMessage,
    send: SendToTenant,
  ): Promise<void> {
    const { database, definition, build } = request;
    const key = indexBuildDedupeKey(tenantId, database, definition.Name);
    const log = this.log.child({ tenant: tenantId, db: database, index: definition.Name, build });
    const superseded = this.followed.get(key);
    if (superseded && superseded.build !== build) await this.cancel(key, superseded.jobId, log);
    let jobId: string;
    try {
      jobId = await this.queue.enqueue({
        type: 'index-build',
        tenantId,
        payload: { database, definition, build, requestedBy: 'indexer' },
        maxAttempts: MAX_ATTEMPTS,
        backoffMs: BACKOFF_MS,
        dedupeKey: buildDedupeKey(key, build),
      });
    } catch (error) {
      log.error({ err: error }, 'could not enqueue an index build; the indexer asks again when it restarts');
      return;
    }
    if (this.closed) return;
    log.info({ jobId }, 'index build enqueued for the worker fleet');
    const previous = this.followed.get(key);
    if (previous) clearInterval(previous.timer);
    const timer = setInterval(() => void this.report(key, jobId, tenantId, request, send), this.pollMs);
    timer.unref();
    this.followed.set(key, { jobId, build, timer });
    await this.report(key, jobId, tenantId, request, send);
  }

  /** Cancels a superseded build's job and stops following it (a job that already ended is left as it is). */
  private async cancel(key: string, jobId: string, log: Logger): Promise<void> {
    const followed = this.followed.get(key);
    if (followed) clearInterval(followed.timer);
    this.followed.delete(key);
    try {
      const job = await this.queue.cancel(jobId);
      log.info({ jobId, state: job.state }, 'superseded index build cancelled');
    } catch (error) {
      // Its worker finishes it and writes a snapshot the indexer never adopts: wasted work, never a wrong index.
      log.warn({ err: error, jobId }, 'could not cancel a superseded index build');
    }
  }

  close(): void {
    this.closed = true;
    for (const { timer } of this.followed.values()) clearInterval(timer);
    this.followed.clear();
  }

  private async report(
    key: string,
    jobId: string,
    tenantId: string,
    request: IndexBuildRequestMessage,
    send: SendToTenant,
  ): Promise<void> {
    let job: Awaited<ReturnType<JobQueue['get']>>;
    try {
      job = await this.queue.get(jobId);
    } catch (error) {
      this.log.warn({ err: error, jobId }, 'could not read an index build job; trying again');
      return;
    }
    if (this.followed.get(key)?.jobId !== jobId) return; // replaced or closed meanwhile
    const final = job === null || ['completed', 'failed', 'cancelled'].includes(job.state);
    if (final) {
      clearInterval(this.followed.get(key)!.timer);
      this.followed.delete(key);
    }
    if (job === null) return;
    const phase = job.progress?.phase;
    const documents = Number(job.progress?.documents ?? 0);
    send(tenantId, {
      type: 'index-build-progress',
      database: request.database,
      index: request.definition.Name,
      build: request.build,
      state: job.state,
      phase:
        typeof phase === 'string' && PHASES.has(phase) ? (phase as 'restore' | 'index' | 'snapshot') : null,
      documents: Number.isSafeInteger(documents) && documents >= 0 ? documents : 0,
      final,
    });
  }
}

/**
 * One waiting job per build, not per index: a request made again (the tenant restarted) is that job, but a
 * newer build is never folded into a waiting older one, whose snapshot the indexer would not adopt. Hashed:
 * the index's key alone can pass the queue's 256 characters (an index name may have 200).
 */
function buildDedupeKey(indexKey: string, build: string): string {
  return `index-build:${createHash('sha256').update(indexKey).digest('hex')}/${build}`;
}
