// Enqueues the lifecycle sweeps (archival, expiration) that are due: one per mirrored database
// every `everyMs`. A sweep wakes its tenant (the tenant runs no timer of its own), so a sleeping
// tenant is started once per interval: the known cost of sweeping on a schedule.
//
// Due-ness is read from the queue, which every worker shares: a database whose latest sweep job
// (in any state) is younger than the interval is left alone, so several workers running this loop
// sweep each database about once per interval, and the dedupe key keeps one waiting at a time.
import type { JobQueue } from '@rookery/jobs';
import { type RookeryJobTypes, sweepDedupeKey } from '@rookery/protocol';
import type { Logger } from 'pino';
import { mirroredDatabases } from './mirrored-databases.js';
import { Periodic } from './periodic.js';
import { databaseOfQueuedJob } from './queued-job.js';

export interface SweepSchedulerOptions {
  mirrorDir: string;
  queue: JobQueue<RookeryJobTypes>;
  everyMs: number;
  log: Logger;
  tickMs: number;
  now?: () => number;
}

/**
 * What a scheduled sweep looks like on the queue: a few attempts (a tenant that keeps failing is
 * swept again at the next interval anyway), a minute apart.
 */
export const SCHEDULED_SWEEP = { maxAttempts: 3, backoffMs: 60_000 } as const;

/** Sweep jobs of one tenant looked at to find each database's latest (newest first). */
const RECENT_JOBS = 1000;

export class SweepScheduler {
  private readonly periodic: Periodic;
  private readonly now: () => number;

  constructor(private readonly options: SweepSchedulerOptions) {
    this.now = options.now ?? Date.now;
    this.periodic = new Periodic(
      () => this.tick(),
      options.tickMs,
      (error) => options.log.error({ err: error }, 'scheduling lifecycle sweeps failed'),
    );
  }

  start(): void {
    this.periodic.start();
  }

  stop(): Promise<void> {
    return this.periodic.stop();
  }

  /** One pass over every mirrored database; returns the sweeps it enqueued. */
  async tick(): Promise<{ tenant: string; database: string }[]> {
    const enqueued: { tenant: string; database: string }[] = [];
    const latestByTenant = new Map<string, Map<string, number>>();
    for (const { tenant, database } of mirroredDatabases(this.options.mirrorDir)) {
      let latest = latestByTenant.get(tenant);
      if (!latest) {
        latest = await this.latestSweeps(tenant);
        latestByTenant.set(tenant, latest);
      }
      const now = this.now();
      if (now - (latest.get(database) ?? Number.NEGATIVE_INFINITY) < this.options.everyMs) continue;
      const jobId = await this.options.queue.enqueue({
        type: 'lifecycle-sweep',
        tenantId: tenant,
        // The time it was scheduled for: every batch, and every retry, sweeps what was due then.
        payload: { database, now: new Date(now).toISOString() },
        dedupeKey: sweepDedupeKey(tenant, database),
        ...SCHEDULED_SWEEP,
      });
      this.options.log.info({ tenant, db: database, job: jobId }, 'scheduled lifecycle sweep enqueued');
      enqueued.push({ tenant, database });
    }
    return enqueued;
  }

  /** When each database of the tenant last had a sweep enqueued (by any worker or anyone else). */
  private async latestSweeps(tenant: string): Promise<Map<string, number>> {
    const jobs = await this.options.queue.list({
      tenantId: tenant,
      type: 'lifecycle-sweep',
      limit: RECENT_JOBS,
    });
    const latest = new Map<string, number>();
    for (const job of jobs) {
      const database = databaseOfQueuedJob(job.payload);
      if (database === null) continue;
      latest.set(database, Math.max(latest.get(database) ?? 0, job.createdAt));
    }
    return latest;
  }
}
