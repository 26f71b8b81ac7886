// The tenant purge end to end, with real parts: a real host starting a real tenant that mirrors its
// database (sync mode) to a mirror directory, the whole worker (its configuration wires the
// handlers) making a real backup of that mirror into a directory storage, and then the purge: the
// tenant's process, local files, mirror and backups go, another tenant's stay, and purging again
// is a success with nothing left to do.
import fs from 'node:fs';
import path from 'node:path';
import { type JobQueue, jobQueueFile, openSqliteJobQueue } from '@rookery/jobs';
import { ROOKERY_JOB_TYPES, type RookeryJobTypes } from '@rookery/protocol';
import { makeTempDir } from '@rookery/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkerMetrics } from '../metrics.js';
import { DirectoryStorage } from '../storage/directory-storage.js';
import { HOST_TOKEN, startTestHost, type TestHost } from '../test-fixtures/host.js';
import { finished, waitForJob } from '../test-fixtures/jobs.js';
import { startWorkerForHost } from '../test-fixtures/worker.js';
import type { RunningWorker } from '../worker.js';
import { purgeJobHandler } from './purge-job.js';
import { callJson, wakeTenant } from './tenant-http.js';

let tmp: ReturnType<typeof makeTempDir>;
let host: TestHost;
let queue: JobQueue<RookeryJobTypes>;
let worker: RunningWorker;
let mirrorDir: string;
let backupDir: string;

/** A tenant with one database and a document in it, mirrored; its socket. */
async function tenantWithData(tenant: string): Promise<void> {
  const socketPath = await wakeTenant({ url: host.url, token: HOST_TOKEN }, tenant);
  const call = (method: string, url: string, body?: unknown) =>
    callJson({ socketPath }, method, url, { body });
  expect((await call('PUT', '/admin/databases', { Name: 'shop' })).status).toBe(201);
  expect((await call('PUT', '/databases/shop/docs?id=orders/1', { Total: 1 })).status).toBe(201);
}

async function runJob(type: 'backup' | 'tenant-purge', tenantId: string) {
  const id = await queue.enqueue(
    type === 'backup'
      ? { type, tenantId, payload: { database: 'shop', kind: 'full' } }
      : { type, tenantId, payload: { requestedBy: 'test' } },
  );
  return waitForJob(queue, id, finished, 'finished');
}

beforeAll(async () => {
  tmp = makeTempDir('rookery-purge-');
  mirrorDir = path.join(tmp.dir, 'mirror');
  backupDir = path.join(tmp.dir, 'backups');
  host = await startTestHost(tmp.dir, {
    ...process.env,
    ROOKERY_MIRROR: mirrorDir,
    ROOKERY_MIRROR_MODE: 'sync',
  });
  queue = await openSqliteJobQueue({ file: jobQueueFile(tmp.dir), types: ROOKERY_JOB_TYPES });
  worker = await startWorkerForHost(tmp.dir, { url: host.url, token: HOST_TOKEN }, { mirrorDir, backupDir });
}, 60_000);
afterAll(async () => {
  await worker?.close();
  await queue?.close();
  await host?.close();
  tmp?.cleanup();
});

describe('the tenant-purge job', () => {
  it("deletes the tenant's process, local files, mirror and backups, and only that tenant's", async () => {
    await tenantWithData('doomed');
    await tenantWithData('kept');
    for (const tenant of ['doomed', 'kept'])
      expect(await runJob('backup', tenant)).toMatchObject({ state: 'completed' });
    const pid = host.supervisor.info('doomed').pid!;
    const where = (tenant: string) => [
      path.join(tmp.dir, 'tenants', tenant),
      path.join(mirrorDir, tenant),
      path.join(backupDir, tenant),
    ];
    for (const dir of [...where('doomed'), ...where('kept')])
      expect([dir, fs.existsSync(dir)]).toEqual([dir, true]);

    const job = await runJob('tenant-purge', 'doomed');
    expect(job).toMatchObject({ state: 'completed', attempts: 1, lastError: null });
    expect(job.progress).toMatchObject({
      outcome: 'completed',
      hostWasRunning: true,
      hostFilesRemoved: true,
      mirrorRemoved: true,
      backupObjects: expect.any(Number),
    });
    expect((job.progress as { backupObjects: number }).backupObjects).toBeGreaterThan(0);
    for (const dir of where('doomed')) expect([dir, fs.existsSync(dir)]).toEqual([dir, false]);
    expect(() => process.kill(pid, 0)).toThrow();
    expect(host.supervisor.info('doomed')).toMatchObject({ state: 'stopped', pid: null });
    // The other tenant is untouched and still running.
    for (const dir of where('kept')) expect([dir, fs.existsSync(dir)]).toEqual([dir, true]);
    expect(host.supervisor.info('kept').state).toBe('running');

    // A retry (or a second delete) finds nothing left and still succeeds.
    const again = await runJob('tenant-purge', 'doomed');
    expect(again).toMatchObject({ state: 'completed', attempts: 1 });
    expect(again.progress).toMatchObject({
      hostWasRunning: false,
      hostFilesRemoved: false,
      mirrorRemoved: false,
      backupObjects: 0,
    });
  }, 120_000);

  it('refuses a job whose tenant id is not a tenant id, before touching any path', async () => {
    const id = await queue.enqueue({ type: 'tenant-purge', tenantId: '..', payload: {}, maxAttempts: 1 });
    const job = await waitForJob(queue, id, finished, 'finished');
    expect(job).toMatchObject({ state: 'failed' });
    expect(job.lastError).toMatch(/InvalidTenantId|not a tenant id/);
    expect(fs.existsSync(mirrorDir)).toBe(true);
    expect(fs.existsSync(backupDir)).toBe(true);
  });

  it('fails the attempt while another job of the tenant is still running, so the queue runs it again after', async () => {
    // A queue of its own, so that only the handlers of this test take its jobs.
    const own = makeTempDir('rookery-purge-busy-');
    const busyQueue = await openSqliteJobQueue({ file: jobQueueFile(own.dir), types: ROOKERY_JOB_TYPES });
    let release!: () => void;
    const released = new Promise<void>((resolve) => {
      release = resolve;
    });
    let backupStarted!: () => void;
    const started = new Promise<void>((resolve) => {
      backupStarted = resolve;
    });
    const stops = [
      // Stands for a backup of the tenant that was already running when it was deleted.
      busyQueue.work('backup', async () => {
        backupStarted();
        await released;
      }),
      busyQueue.work(
        'tenant-purge',
        purgeJobHandler({
          host: { url: host.url, token: HOST_TOKEN },
          mirrorDir: path.join(own.dir, 'mirror'),
          storage: new DirectoryStorage(path.join(own.dir, 'backups')),
          metrics: new WorkerMetrics(),
          queue: busyQueue,
        }),
        { pollMs: 20 },
      ),
    ];
    try {
      await busyQueue.enqueue({ type: 'backup', tenantId: 'busy', payload: { database: 'shop' } });
      await started;
      const purge = (maxAttempts: number) =>
        busyQueue
          .enqueue({ type: 'tenant-purge', tenantId: 'busy', payload: {}, maxAttempts })
          .then((id) => waitForJob(busyQueue, id, finished, 'finished'));
      const blocked = await purge(1);
      expect(blocked).toMatchObject({ state: 'failed' });
      expect(blocked.lastError).toMatch(/still has running jobs \(backup /);
      release();
      await waitForJob(
        busyQueue,
        (await busyQueue.list({ tenantId: 'busy', type: 'backup' }))[0]!.id,
        finished,
        'finished',
      );
      expect(await purge(1)).toMatchObject({ state: 'completed' });
    } finally {
      release();
      await Promise.all(stops.map((stop) => stop()));
      await busyQueue.close();
      own.cleanup();
    }
  });
});
