import fs from 'node:fs';
import path from 'node:path';
import { openControlStore } from '@rookery/control-store';
import { Database } from '@rookery/engine';
import { type JobQueue, jobQueueFile, openSqliteJobQueue } from '@rookery/jobs';
import { ROOKERY_JOB_TYPES, type RookeryJobTypes } from '@rookery/protocol';
import { makeTempDir } from '@rookery/testkit';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { BackupCatalog } from './backup/backup-catalog.js';
import { loadWorkerConfig } from './config.js';
import { BackupScheduler } from './schedule/scheduler.js';
import { Schedules } from './schedule/schedules.js';
import { DirectoryStorage } from './storage/directory-storage.js';
import { startFakeS3 } from './test-fixtures/fake-s3.js';
import { finished, waitForJob } from './test-fixtures/jobs.js';
import {
  createMirroredDatabase,
  DATABASE,
  documentsOf,
  prepareDatabase,
  queryResultsOf,
  TENANT,
  writeStep,
} from './test-fixtures/mirrored-database.js';
import { type RunningWorker, startWorker } from './worker.js';

let tmp: ReturnType<typeof makeTempDir>;
let dataDir: string;
let source: Database;
let worker: RunningWorker | null = null;
let queue: JobQueue<RookeryJobTypes>;
const opened: Database[] = [];
const masterKey = Buffer.alloc(32, 7);
const MINUTE = 60_000;

beforeEach(async () => {
  tmp = makeTempDir('rookery-worker-');
  dataDir = path.join(tmp.dir, 'data');
  source = createMirroredDatabase(path.join(tmp.dir, 'local'), path.join(dataDir, 'mirror'));
  opened.push(source);
  await prepareDatabase(source);
  for (let step = 0; step < 3; step++) await writeStep(source, step);
  await source.mirror!.flushed();
  // The control plane's side of the queue: the same file, opened on its own.
  queue = await openSqliteJobQueue({ file: jobQueueFile(dataDir), types: ROOKERY_JOB_TYPES });
});
afterEach(async () => {
  await worker?.close();
  worker = null;
  await queue.close();
  await Promise.all(opened.splice(0).map((db) => db.close()));
  tmp.cleanup();
});

async function start(overrides: Parameters<typeof loadWorkerConfig>[1] = {}): Promise<RunningWorker> {
  const config = loadWorkerConfig({}, { dataDir, port: 0, pollMs: 50, backupEveryMinutes: 0, ...overrides });
  worker = await startWorker({ config, masterKey, logger: pino({ level: 'silent' }) });
  return worker;
}

describe('the worker on the embedded job queue', () => {
  it('runs a backup job and a restore job enqueued by another process, reporting progress and metrics', async () => {
    const running = await start();
    const backupId = await queue.enqueue({
      type: 'backup',
      tenantId: TENANT,
      payload: { database: DATABASE, kind: 'full', requestedBy: 'test' },
    });
    const backup = await waitForJob(queue, backupId, finished, 'finished');
    expect(backup).toMatchObject({ state: 'completed', attempts: 1, lastError: null });
    expect(backup.progress).toMatchObject({
      outcome: 'completed',
      kind: 'full',
      phase: 'manifest',
      backupId: expect.stringMatching(/-full-/),
      transactions: expect.any(Number),
    });
    const metrics = await (await fetch(`${running.url}/metrics`)).text();
    expect(metrics).toMatch(
      new RegExp(`rookery_worker_mirror_bytes_read_total\\{tenant="${TENANT}"\\} [1-9]`),
    );
    expect(metrics).toMatch(/rookery_worker_jobs_total\{type="backup",outcome="completed"\} 1/);

    // The tenant as the control plane knows it: the restored database is recorded there.
    const control = await openControlStore({ dataDir });
    await control.createTenant({ id: TENANT, name: TENANT });
    const restoreId = await queue.enqueue({
      type: 'restore',
      tenantId: TENANT,
      payload: { database: DATABASE, targetDatabase: 'shop-restored' },
    });
    const restore = await waitForJob(queue, restoreId, finished, 'finished');
    expect(restore).toMatchObject({
      state: 'completed',
      progress: { outcome: 'completed', stoppedBy: 'end' },
    });
    const restored = Database.open(path.join(dataDir, 'tenants', TENANT, 'databases', 'shop-restored'));
    opened.push(restored);
    expect(documentsOf(restored)).toEqual(documentsOf(source));
    expect(await queryResultsOf(restored)).toEqual(await queryResultsOf(source));
    expect((await control.listDatabases(TENANT)).map((d) => d.name)).toContain('shop-restored');
    await control.close();

    // Restoring over a database that exists is refused, and says why.
    const again = await queue.enqueue({
      type: 'restore',
      tenantId: TENANT,
      payload: { database: DATABASE, targetDatabase: 'shop-restored' },
      maxAttempts: 1,
    });
    expect(await waitForJob(queue, again, finished, 'finished')).toMatchObject({
      state: 'failed',
      lastError: expect.stringContaining('"shop-restored" already exists'),
    });
  });

  it('writes backups to an S3-compatible bucket when configured (credentials from the AWS_* variables)', async () => {
    const s3 = await startFakeS3();
    const saved = { id: process.env.AWS_ACCESS_KEY_ID, secret: process.env.AWS_SECRET_ACCESS_KEY };
    process.env.AWS_ACCESS_KEY_ID = s3.credentials.accessKeyId;
    process.env.AWS_SECRET_ACCESS_KEY = s3.credentials.secretAccessKey;
    try {
      await start({ backupS3Url: `s3://${s3.bucket}/rookery`, backupS3Endpoint: s3.url });
      const id = await queue.enqueue({ type: 'backup', tenantId: TENANT, payload: { database: DATABASE } });
      const job = await waitForJob(queue, id, finished, 'finished');
      expect(job).toMatchObject({ state: 'completed', progress: { kind: 'full' } });
      const backupId = String(job.progress!.backupId);
      expect([...s3.objects.keys()].sort()).toEqual(
        ['manifest.json', 'snapshot.rkb', 'transactions.rkb'].map(
          (f) => `rookery/${TENANT}/${DATABASE}/${backupId}/${f}`,
        ),
      );
    } finally {
      await worker?.close();
      worker = null;
      process.env.AWS_ACCESS_KEY_ID = saved.id;
      process.env.AWS_SECRET_ACCESS_KEY = saved.secret;
      if (saved.id === undefined) delete process.env.AWS_ACCESS_KEY_ID;
      if (saved.secret === undefined) delete process.env.AWS_SECRET_ACCESS_KEY;
      await s3.close();
    }
  });

  it('schedules backups of every mirrored database: full first, then incremental, one at a time', async () => {
    await start();
    const storage = new DirectoryStorage(path.join(dataDir, 'backups'));
    let now = Date.now();
    const scheduler = new BackupScheduler({
      mirrorDir: path.join(dataDir, 'mirror'),
      storage,
      queue,
      schedules: new Schedules({ everyMs: 60 * MINUTE, fullEveryMs: 24 * 60 * MINUTE }),
      log: pino({ level: 'silent' }),
      tickMs: 60 * MINUTE,
      now: () => now,
    });
    const runScheduled = async () => {
      const enqueued = await scheduler.tick();
      // A second pass at the same moment enqueues nothing more.
      expect(await scheduler.tick()).toEqual([]);
      const [job] = await queue.list({ tenantId: TENANT, type: 'backup', limit: 1 });
      expect(job!.payload).toMatchObject({ requestedBy: 'scheduler' });
      await waitForJob(queue, job!.id, finished, 'finished');
      return enqueued;
    };
    expect(await runScheduled()).toEqual([{ tenant: TENANT, database: DATABASE, kind: 'full' }]);
    now += 30 * MINUTE;
    expect(await scheduler.tick()).toEqual([]); // not due yet
    await writeStep(source, 10);
    await source.mirror!.flushed();
    now += 31 * MINUTE;
    expect(await runScheduled()).toEqual([{ tenant: TENANT, database: DATABASE, kind: 'incremental' }]);
    now += 25 * 60 * MINUTE; // past the full interval
    expect(await runScheduled()).toEqual([{ tenant: TENANT, database: DATABASE, kind: 'full' }]);
    const { complete } = await new BackupCatalog(storage, TENANT, DATABASE).list();
    expect(complete.map((b) => b.kind)).toEqual(['full', 'incremental', 'full']);
  });
});

describe('what a failed job tells the tenant', () => {
  // lastError is what tenant admins read (GET /control/jobs/{id}): never a path of this server.
  const serverPath = /(^|[\s'"(:])\/[\w.-]/;

  async function failedRestore(payload: { database: string; targetDatabase: string }) {
    const id = await queue.enqueue({ type: 'restore', tenantId: TENANT, payload, maxAttempts: 1 });
    const job = await waitForJob(queue, id, finished, 'finished');
    expect(job.state).toBe('failed');
    expect(job.lastError).not.toContain(tmp.dir);
    expect(job.lastError).not.toMatch(serverPath);
    return job.lastError!;
  }

  it('says there is no backup without naming where backups are kept', async () => {
    await start();
    expect(await failedRestore({ database: 'never-backed-up', targetDatabase: 'copy' })).toMatch(
      new RegExp(`no backup of ${TENANT}/never-backed-up`),
    );
  });

  it('says the target database exists without naming its directory', async () => {
    await start();
    const taken = Database.create(path.join(dataDir, 'tenants', TENANT, 'databases', 'taken'), 'taken');
    await taken.close();
    expect(await failedRestore({ database: DATABASE, targetDatabase: 'taken' })).toMatch(
      /"taken" already exists/,
    );
  });

  it('answers an internal failure (here: the scratch directory is a file) with a message that points at the log', async () => {
    const scratch = path.join(tmp.dir, 'not-a-directory');
    fs.writeFileSync(scratch, 'x');
    await start({ scratchDir: scratch });
    const backup = await queue.enqueue({ type: 'backup', tenantId: TENANT, payload: { database: DATABASE } });
    expect(await waitForJob(queue, backup, finished, 'finished')).toMatchObject({ state: 'completed' });
    const message = await failedRestore({ database: DATABASE, targetDatabase: 'copy' });
    expect(message).toMatch(/internal error/i);
    expect(message).toMatch(/worker's log/);
  });
});
