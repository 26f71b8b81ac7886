// The backup job: one backup of one database of the job's tenant, from the mirror to the backup
// storage, under the tenant's own key. Failures throw, so the queue retries the job (with its
// backoff) while attempts remain; an attempt that died leaves an incomplete backup the next one
// deletes before it starts over.
import path from 'node:path';
import type { JobHandler } from '@rookery/jobs';
import type { BackupJobPayload } from '@rookery/protocol';
import { deriveBackupKey } from '../backup/backup-key.js';
import { type BackupSettings, makeBackup } from '../backup/make-backup.js';
import type { WorkerMetrics } from '../metrics.js';
import type { BackupStorage } from '../storage/backup-storage.js';
import { JobReporter } from './job-reporter.js';
import { tenantDirectoryName } from './tenant-paths.js';

export interface BackupJobDependencies {
  /** The mirror's root: a database is at `<mirror>/<tenant>/<database in lower case>`. */
  mirrorDir: string;
  storage: BackupStorage;
  masterKey: Buffer;
  settings: BackupSettings;
  metrics: WorkerMetrics;
}

export function backupJobHandler(deps: BackupJobDependencies): JobHandler<BackupJobPayload> {
  return async (job, context) => {
    const { database, kind, indexes, requestedBy } = job.payload;
    const log = context.log.child({ db: database });
    const tenant = tenantDirectoryName(job.tenantId);
    const reporter = new JobReporter(job, database, context, log, deps.metrics, 'mirror');
    log.info({ kind, requestedBy, storage: deps.storage.location }, 'backup started');
    try {
      const outcome = await makeBackup({
        tenantId: tenant,
        database,
        kind,
        indexes,
        mirrorDirectory: path.join(deps.mirrorDir, tenant, database.toLowerCase()),
        storage: deps.storage,
        key: deriveBackupKey(deps.masterKey, tenant),
        settings: deps.settings,
        signal: context.signal,
        onProgress: (progress) => reporter.update({ ...progress }),
      });
      const summary = {
        backupId: outcome.backupId,
        kind: outcome.kind,
        reason: outcome.reason,
        bytesRead: outcome.bytesRead,
        bytesWritten: outcome.bytesWritten,
        transactions: outcome.transactions,
        txid: outcome.manifest?.position.txid ?? null,
        mbPerSecond: Number((outcome.bytesRead / 1e6 / Math.max(reporter.seconds, 1e-3)).toFixed(2)),
      };
      await reporter.finish(outcome.backupId ? 'completed' : 'skipped', summary);
      log.info(summary, outcome.backupId ? 'backup completed' : 'backup skipped: nothing new');
      if (outcome.manifest?.stoppedBy === 'gap') {
        log.warn(
          { txid: outcome.manifest.position.txid },
          'the mirror lacks the transaction after this backup; the next backup will be a full one',
        );
      }
    } catch (error) {
      await reporter.finish('failed', {});
      log.error({ err: error }, 'backup failed');
      throw error;
    }
  };
}
