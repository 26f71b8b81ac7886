// How a running backup or restore shows itself: its progress on the job (what GET /control/jobs/{id}
// answers), a log line every few seconds, and metrics by tenant. The backup and restore code report
// every piece they read; this turns that stream into a write to the queue at most once a second,
// and counts bytes into the per-tenant counters as they happen.
import type { Job, JobProgress, WorkContext } from '@rookery/jobs';
import type { Logger } from 'pino';
import type { WorkerMetrics } from '../metrics.js';

const PROGRESS_EVERY_MS = 1_000;
const LOG_EVERY_MS = 5_000;

export interface ReportedProgress {
  phase: string;
  bytesRead: number;
  bytesToRead: number;
  bytesWritten?: number;
  [detail: string]: string | number | null | undefined;
}

export class JobReporter {
  private readonly started = performance.now();
  private readonly labels: { type: string; tenant: string; database: string; job: string };
  private counted = { read: 0, written: 0 };
  private latest: ReportedProgress | null = null;
  private savedAt = 0;
  private loggedAt = 0;
  private saving: Promise<void> = Promise.resolve();

  constructor(
    private readonly job: Job,
    database: string,
    private readonly context: WorkContext,
    private readonly log: Logger,
    private readonly metrics: WorkerMetrics,
    /** Which counter the bytes read go to; null for jobs that read no bytes of their own (sweeps). */
    private readonly reads: 'mirror' | 'restore' | null,
  ) {
    this.labels = { type: job.type, tenant: job.tenantId, database, job: job.id };
    metrics.running.inc({ type: job.type, tenant: job.tenantId });
  }

  /** Called for every piece read; cheap, never waits. */
  update(progress: Readonly<ReportedProgress>): void {
    this.latest = { ...progress };
    const tenant = { tenant: this.job.tenantId };
    const read = progress.bytesRead - this.counted.read;
    if (read > 0 && this.reads !== null)
      (this.reads === 'mirror' ? this.metrics.mirrorBytesRead : this.metrics.restoreBytesRead).inc(
        tenant,
        read,
      );
    const written = (progress.bytesWritten ?? 0) - this.counted.written;
    if (written > 0) this.metrics.backupBytesWritten.inc(tenant, written);
    this.counted = { read: progress.bytesRead, written: progress.bytesWritten ?? 0 };
    this.metrics.progress.set(this.labels, ratio(progress));

    const now = performance.now();
    if (now - this.loggedAt >= LOG_EVERY_MS) {
      this.loggedAt = now;
      this.log.info(
        { ...this.latest, percent: Math.round(ratio(progress) * 100) },
        `${this.job.type} progress`,
      );
    }
    if (now - this.savedAt >= PROGRESS_EVERY_MS) {
      this.savedAt = now;
      this.save(this.asJson(this.latest));
    }
  }

  /** Records the outcome as the job's last progress and ends the job's metrics. */
  async finish(outcome: 'completed' | 'skipped' | 'failed', summary: JobProgress): Promise<void> {
    this.metrics.running.dec({ type: this.job.type, tenant: this.job.tenantId });
    this.metrics.progress.remove(this.labels);
    this.metrics.jobs.inc({ type: this.job.type, outcome });
    this.metrics.jobDuration.observe({ type: this.job.type }, (performance.now() - this.started) / 1000);
    if (outcome !== 'failed')
      this.save({ ...(this.latest ? this.asJson(this.latest) : {}), ...summary, outcome });
    await this.saving;
  }

  get seconds(): number {
    return (performance.now() - this.started) / 1000;
  }

  private save(progress: JobProgress): void {
    // One write at a time, in order; a write refused because the attempt lost its lease only matters to the log.
    this.saving = this.saving
      .then(() => this.context.progress(progress))
      .catch((error: unknown) => this.log.warn({ err: error }, 'could not record the job progress'));
  }

  private asJson(progress: ReportedProgress): JobProgress {
    const json: JobProgress = {};
    for (const [key, value] of Object.entries(progress)) if (value !== undefined) json[key] = value;
    return json;
  }
}

function ratio(progress: Readonly<ReportedProgress>): number {
  return progress.bytesToRead > 0 ? Math.min(1, progress.bytesRead / progress.bytesToRead) : 0;
}
