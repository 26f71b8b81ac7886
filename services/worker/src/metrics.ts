// Prometheus metrics of one worker. Backups are labelled by tenant, unlike the host's metrics: a
// worker runs a handful of backups at a time, and the question these answer is exactly "which
// tenant's backup is doing the I/O right now, and how far along is it".
import { Counter, Gauge, Histogram, Registry } from 'prom-client';

export class WorkerMetrics {
  readonly registry = new Registry();
  readonly jobs = new Counter({
    name: 'rookery_worker_jobs_total',
    help: 'Job attempts run by this worker, by type and outcome (completed, failed, skipped).',
    labelNames: ['type', 'outcome'] as const,
    registers: [this.registry],
  });
  readonly jobDuration = new Histogram({
    name: 'rookery_worker_job_duration_seconds',
    help: 'How long job attempts ran, by type.',
    labelNames: ['type'] as const,
    buckets: [0.1, 0.5, 1, 5, 15, 60, 300, 900, 3600, 4 * 3600],
    registers: [this.registry],
  });
  readonly mirrorBytesRead = new Counter({
    name: 'rookery_worker_mirror_bytes_read_total',
    help: 'Bytes backups read from the mirror, by tenant: the I/O they put on the network disk.',
    labelNames: ['tenant'] as const,
    registers: [this.registry],
  });
  readonly backupBytesWritten = new Counter({
    name: 'rookery_worker_backup_bytes_written_total',
    help: 'Bytes written to the backup storage (compressed and encrypted), by tenant.',
    labelNames: ['tenant'] as const,
    registers: [this.registry],
  });
  readonly restoreBytesRead = new Counter({
    name: 'rookery_worker_restore_bytes_read_total',
    help: 'Bytes restores read from the backup storage, by tenant.',
    labelNames: ['tenant'] as const,
    registers: [this.registry],
  });
  readonly running = new Gauge({
    name: 'rookery_worker_jobs_running',
    help: 'Jobs running on this worker now, by type and tenant.',
    labelNames: ['type', 'tenant'] as const,
    registers: [this.registry],
  });
  readonly progress = new Gauge({
    name: 'rookery_worker_job_progress_ratio',
    help: 'Fraction of the bytes a running backup or restore will read that it has read (0–1), by job.',
    labelNames: ['type', 'tenant', 'database', 'job'] as const,
    registers: [this.registry],
  });

  get contentType(): string {
    return this.registry.contentType;
  }

  text(): Promise<string> {
    return this.registry.metrics();
  }
}
