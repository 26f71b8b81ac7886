// The worker as a process of its own (src/main.ts, configured by ROOKERY_* variables), killed with
// SIGKILL in the middle of a backup: the job must be retried by the next worker once its lease has
// run out, the half-written backup must be deleted, and the backup made must restore to the source.
import path from 'node:path';
import { Database } from '@rookery/engine';
import { type JobQueue, jobQueueFile, openSqliteJobQueue } from '@rookery/jobs';
import { loadOrCreateMasterKey } from '@rookery/pki';
import type { RookeryJobTypes } from '@rookery/protocol';
import { makeTempDir, waitForExit } from '@rookery/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BackupCatalog } from './backup/backup-catalog.js';
import { deriveBackupKey } from './backup/backup-key.js';
import { restoreBackup } from './backup/restore-backup.js';
import { DirectoryStorage } from './storage/directory-storage.js';
import { finished, SHORT_LEASE_JOB_TYPES, waitForJob } from './test-fixtures/jobs.js';
import {
  createMirroredDatabase,
  DATABASE,
  documentsOf,
  prepareDatabase,
  TENANT,
} from './test-fixtures/mirrored-database.js';
import { type WorkerProcesses, workerProcesses } from './test-fixtures/worker-process.js';

let tmp: ReturnType<typeof makeTempDir>;
let dataDir: string;
let source: Database;
let queue: JobQueue<RookeryJobTypes>;
let workers: WorkerProcesses;

beforeEach(async () => {
  tmp = makeTempDir('rookery-worker-process-');
  dataDir = path.join(tmp.dir, 'data');
  workers = workerProcesses(dataDir);
  source = createMirroredDatabase(path.join(tmp.dir, 'local'), path.join(dataDir, 'mirror'));
  await prepareDatabase(source);
  // About 6 MB of documents, varied enough not to compress to nothing.
  let seed = 1;
  const word = () => {
    seed = (seed * 48271) % 2147483647;
    return (seed % 100_000).toString(36);
  };
  const text = () => Array.from({ length: 300 }, word).join(' ');
  for (let chunk = 0; chunk < 6; chunk++) {
    await source.insertMany(
      Array.from({ length: 500 }, (_, i) => ({
        Id: `notes/${chunk * 500 + i}`,
        Document: { Text: text(), '@metadata': { '@collection': 'Notes' } },
      })),
    );
  }
  await source.mirror!.snapshotNow();
  queue = await openSqliteJobQueue({ file: jobQueueFile(dataDir), types: SHORT_LEASE_JOB_TYPES });
});

afterEach(async () => {
  await workers.stopAll();
  await queue.close();
  await source.close();
  tmp.cleanup();
});

const startWorkerProcess = (env: Record<string, string>) => workers.start(env);

describe('a worker process killed mid-backup', () => {
  it('leaves the job to be retried after its lease; the retry deletes the half-written backup and completes', async () => {
    // Reading the mirror at 0.5 MB/s, the first worker is still busy when it is killed.
    const first = await startWorkerProcess({ ROOKERY_BACKUP_MAX_MB_PER_S: '0.5' });
    const id = await queue.enqueue({
      type: 'backup',
      tenantId: TENANT,
      payload: { database: DATABASE, kind: 'full' },
      maxAttempts: 3,
      backoffMs: 0,
    });
    const busy = await waitForJob(
      queue,
      id,
      (job) => job.state === 'active' && Number(job.progress?.bytesWritten ?? 0) > 0,
      'active, with bytes written',
    );
    expect(busy.attempts).toBe(1);
    first.kill('SIGKILL');
    expect(await waitForExit(first)).toMatchObject({ signal: 'SIGKILL' });

    const storage = new DirectoryStorage(path.join(dataDir, 'backups'));
    const catalog = new BackupCatalog(storage, TENANT, DATABASE);
    const left = await catalog.list();
    expect(left.complete).toEqual([]);
    expect(left.incomplete).toHaveLength(1);

    const second = await startWorkerProcess({});
    const done = await waitForJob(queue, id, finished, 'finished');
    expect(done).toMatchObject({ state: 'completed', attempts: 2, progress: { outcome: 'completed' } });
    expect(done.lastError).toBeTruthy(); // the first attempt's lease ran out
    const after = await catalog.list();
    expect(after.incomplete).toEqual([]);
    expect(after.complete.map((b) => b.id)).toEqual([done.progress!.backupId]);

    const target = path.join(tmp.dir, 'restored');
    await restoreBackup({
      tenantId: TENANT,
      database: DATABASE,
      storage,
      key: deriveBackupKey(await loadOrCreateMasterKey(path.join(tmp.dir, 'master.key')), TENANT),
      targetDirectory: target,
      scratchDirectory: path.join(tmp.dir, 'scratch'),
    });
    const restored = Database.open(target);
    try {
      expect(documentsOf(restored)).toEqual(documentsOf(source));
    } finally {
      await restored.close();
    }

    second.kill('SIGTERM');
    expect(await waitForExit(second)).toEqual({ code: 0, signal: null });
  });
});
