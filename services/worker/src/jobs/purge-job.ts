// The tenant-purge job: after a tenant is deleted from the control plane, its data goes too. In
// this order: the host stops its process and deletes its local files (first, because a running
// tenant keeps writing its mirror), then its mirror directory, then every backup under its
// prefix in the backup storage. Each step is idempotent, so a failed attempt is simply retried by
// the queue from the start. A tenant id is not reused while its purge has not completed (the
// control plane answers TenantPurgePending), so this never reaches a newer tenant's data.
import fs from 'node:fs';
import path from 'node:path';
import type { JobHandler, JobQueue } from '@rookery/jobs';
import { RookeryError, type TenantPurgeJobPayload } from '@rookery/protocol';
import type { WorkerMetrics } from '../metrics.js';
import type { BackupStorage } from '../storage/backup-storage.js';
import { JobReporter } from './job-reporter.js';
import { hostApi, purgeTenantOnHost } from './tenant-http.js';
import { tenantDirectoryName } from './tenant-paths.js';

export interface PurgeJobDependencies {
  /** The host's internal API (ROOKERY_HOST_URL) and its token (ROOKERY_INTERNAL_TOKEN). */
  host: { url: string; token: string | undefined };
  mirrorDir: string;
  storage: BackupStorage;
  metrics: WorkerMetrics;
  /** The queue the job came from: to see the tenant's other jobs still running. */
  queue: Pick<JobQueue, 'list'>;
}

/** The reporter's database label: a purge is of the whole tenant. */
const ALL_DATABASES = '*';

export function purgeJobHandler(deps: PurgeJobDependencies): JobHandler<TenantPurgeJobPayload> {
  return async (job, context) => {
    const log = context.log.child({ tenant: job.tenantId });
    const reporter = new JobReporter(job, ALL_DATABASES, context, log, deps.metrics, null);
    const phase = (name: string) => reporter.update({ phase: name, bytesRead: 0, bytesToRead: 0 });
    log.info({ requestedBy: job.payload.requestedBy }, 'tenant purge started');
    try {
      // Checked before any path is built from it, whatever put the job on the queue.
      const tenant = tenantDirectoryName(job.tenantId);
      const host = hostApi(deps.host, `stop tenant ${tenant} and delete its files`);

      phase('host');
      const onHost = await purgeTenantOnHost(host, tenant, context.signal);

      phase('mirror');
      const mirror = path.join(deps.mirrorDir, tenant);
      const mirrorRemoved = fs.existsSync(mirror);
      await fs.promises.rm(mirror, { recursive: true, force: true });

      phase('backups');
      const prefix = `${tenant}/`;
      // Counted for the summary only: removeAll deletes whatever is there when it runs.
      const backupObjects = (await deps.storage.list(prefix)).length;
      await deps.storage.removeAll(prefix);

      // A job of the tenant that was already running (a backup writing objects, a sweep waking the
      // tenant) may leave data after the steps above: fail this attempt, so the queue runs the
      // purge again once it has had time to end. Queued ones were cancelled with the tenant.
      const others = (await deps.queue.list({ tenantId: tenant, state: 'active' })).filter(
        (other) => other.id !== job.id,
      );
      if (others.length > 0) {
        throw new RookeryError(
          'TenantUnavailable',
          `Tenant ${tenant} still has running jobs (${others.map((o) => `${o.type} ${o.id}`).join(', ')}); the purge runs again after them.`,
          { retryAfterSeconds: 60 },
        );
      }

      const summary = {
        hostWasRunning: onHost.wasRunning,
        hostFilesRemoved: onHost.removedFiles,
        mirrorRemoved,
        backupObjects,
        backups: deps.storage.location,
      };
      await reporter.finish('completed', summary);
      log.info(summary, `tenant ${tenant} purged`);
    } catch (error) {
      await reporter.finish('failed', {});
      log.error({ err: error }, `tenant purge of ${job.tenantId} failed; the queue retries it`);
      throw error;
    }
  };
}
