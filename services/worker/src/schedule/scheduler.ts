// Enqueues the backups that are due. Each tick it walks the mirror (`<mirror>/<tenant>/<database>`:
// every mirrored database that was not deleted), and for each database whose latest backup — or
// the backup this scheduler last asked for — is older than its schedule, enqueues one: full when
// its last full backup is older than the schedule's full interval, incremental otherwise.
//
// Several workers may run this loop on one queue. The dedupe key keeps one waiting backup per
// database, a database with a backup running is left alone, and due-ness is read from the backup
// storage, which every worker sees: a backup made by one worker is not made again by another.
import type { JobQueue } from '@rookery/jobs';
import { type BackupKind, backupDedupeKey, type RookeryJobTypes } from '@rookery/protocol';
import type { Logger } from 'pino';
import { BackupCatalog } from '../backup/backup-catalog.js';
import type { BackupStorage } from '../storage/backup-storage.js';
import { mirroredDatabases } from './mirrored-databases.js';
import { Periodic } from './periodic.js';
import { databaseOfQueuedJob } from './queued-job.js';
import type { Schedules } from './schedules.js';

export interface SchedulerOptions {
  mirrorDir: string;
  storage: BackupStorage;
  queue: JobQueue<RookeryJobTypes>;
  schedules: Schedules;
  log: Logger;
  tickMs: number;
  now?: () => number;
}

/** What a scheduled backup job looks like on the queue. */
export const SCHEDULED_BACKUP = { maxAttempts: 3, backoffMs: 60_000 } as const;

export class BackupScheduler {
  private readonly requested = new Map<string, number>();
  private readonly periodic: Periodic;
  private readonly now: () => number;

  constructor(private readonly options: SchedulerOptions) {
    this.now = options.now ?? Date.now;
    this.periodic = new Periodic(
      () => this.tick(),
      options.tickMs,
      (error) => options.log.error({ err: error }, 'scheduling backups failed'),
    );
  }

  start(): void {
    this.periodic.start();
  }

  stop(): Promise<void> {
    return this.periodic.stop();
  }

  /** One pass over every mirrored database; returns the backups it enqueued. */
  async tick(): Promise<{ tenant: string; database: string; kind: BackupKind }[]> {
    const enqueued: { tenant: string; database: string; kind: BackupKind }[] = [];
    for (const { tenant, database } of mirroredDatabases(this.options.mirrorDir)) {
      const kind = await this.dueBackup(tenant, database);
      if (!kind) continue;
      const jobId = await this.options.queue.enqueue({
        type: 'backup',
        tenantId: tenant,
        payload: { database, kind, requestedBy: 'scheduler' },
        dedupeKey: backupDedupeKey(tenant, database),
        ...SCHEDULED_BACKUP,
      });
      this.requested.set(`${tenant}/${database}`, this.now());
      this.options.log.info({ tenant, db: database, kind, job: jobId }, 'scheduled backup enqueued');
      enqueued.push({ tenant, database, kind });
    }
    return enqueued;
  }

  /** The kind of backup due now, or null. */
  private async dueBackup(tenant: string, database: string): Promise<BackupKind | null> {
    const schedule = this.options.schedules.for(tenant, database);
    if (schedule.everyMs <= 0) return null;
    const now = this.now();
    const { complete } = await new BackupCatalog(this.options.storage, tenant, database).list();
    const latest = Math.max(
      complete.at(-1)?.createdAt ?? 0,
      this.requested.get(`${tenant}/${database}`) ?? 0,
    );
    if (latest > 0 && now - latest < schedule.everyMs) return null;
    if (await this.backupPending(tenant, database)) return null;
    const lastFull = complete.findLast((b) => b.kind === 'full');
    return !lastFull || now - lastFull.createdAt >= schedule.fullEveryMs ? 'full' : 'incremental';
  }

  private async backupPending(tenant: string, database: string): Promise<boolean> {
    for (const state of ['queued', 'active'] as const) {
      const jobs = await this.options.queue.list({ tenantId: tenant, type: 'backup', state, limit: 1000 });
      if (jobs.some((job) => databaseOfQueuedJob(job.payload) === database)) return true;
    }
    return false;
  }
}
