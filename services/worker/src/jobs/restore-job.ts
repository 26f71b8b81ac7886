// The restore job: a backup chain of one of the tenant's databases into a new database of the same
// tenant. Embedded, the worker shares the machine with the host, so the new database is written
// where the tenant keeps its databases (`<data>/tenants/<tenant>/databases/<name>`); the tenant
// opens it on first use and rebuilds its indexes from the definitions it holds, and the mirror
// starts a new generation for it. The control store records the new database, so it is listed (and
// managed) like one created through the API.
import path from 'node:path';
import type { ControlStore } from '@rookery/control-store';
import type { JobHandler } from '@rookery/jobs';
import { isRookeryError, type RestoreJobPayload } from '@rookery/protocol';
import { deriveBackupKey } from '../backup/backup-key.js';
import { restoreBackup } from '../backup/restore-backup.js';
import type { WorkerMetrics } from '../metrics.js';
import type { BackupStorage } from '../storage/backup-storage.js';
import { JobReporter } from './job-reporter.js';
import { tenantDirectoryName } from './tenant-paths.js';

export interface RestoreJobDependencies {
  /** Where tenants live: `<tenants>/<tenant>/databases/<database>`. */
  tenantsDir: string;
  scratchDir: string;
  storage: BackupStorage;
  masterKey: Buffer;
  metrics: WorkerMetrics;
  /** The control store, to record the restored database in. */
  records: Pick<ControlStore, 'createDatabase'>;
}

export function restoreJobHandler(deps: RestoreJobDependencies): JobHandler<RestoreJobPayload> {
  return async (job, context) => {
    const { database, backupId, until, targetDatabase, requestedBy } = job.payload;
    const log = context.log.child({ db: database, targetDb: targetDatabase });
    const tenant = tenantDirectoryName(job.tenantId);
    const reporter = new JobReporter(job, database, context, log, deps.metrics, 'restore');
    const targetDirectory = path.join(deps.tenantsDir, tenant, 'databases', targetDatabase.toLowerCase());
    log.info({ backupId, until, requestedBy, targetDirectory }, 'restore started');
    try {
      const outcome = await restoreBackup({
        tenantId: tenant,
        database,
        backupId,
        until,
        storage: deps.storage,
        key: deriveBackupKey(deps.masterKey, tenant),
        targetDirectory,
        scratchDirectory: deps.scratchDir,
        signal: context.signal,
        onProgress: (progress) => reporter.update({ ...progress }),
      });
      const summary = {
        targetDatabase,
        chain: outcome.chain.join(','),
        txid: outcome.txid,
        committedAt: outcome.committedAt,
        transactionsReplayed: outcome.transactionsReplayed,
        stoppedBy: outcome.stoppedBy,
        bytesRead: outcome.bytesRead,
      };
      await recordDatabase(deps.records, job.tenantId, targetDatabase, log);
      await reporter.finish('completed', summary);
      log.info(summary, 'restore completed');
    } catch (error) {
      await reporter.finish('failed', {});
      log.error({ err: error }, 'restore failed');
      throw error;
    }
  };
}

/**
 * Records the restored database in the control store. The restore itself succeeded and its files are in
 * place, so a failure here is logged, not thrown: the next database creation through a gateway records
 * every database the host holds that the store lacks (services/gateway/src/database-records.ts).
 */
async function recordDatabase(
  records: Pick<ControlStore, 'createDatabase'>,
  tenantId: string,
  name: string,
  log: { warn(details: object, message: string): void },
): Promise<void> {
  try {
    await records.createDatabase(tenantId, name);
  } catch (error) {
    if (isRookeryError(error) && error.code === 'DatabaseAlreadyExists') return;
    log.warn(
      { err: error, tenant: tenantId, targetDb: name },
      'restored, but not recorded in the control store',
    );
  }
}
