// The lifecycle sweep end to end, with real parts: the host's supervisor and internal API on a
// free port, a real tenant process it starts, the embedded SQLite job queue, and the worker's
// handler. The tenant is woken through the host exactly as the job does, and the documents are
// written and read back over the tenant's socket.
import { existsSync } from 'node:fs';
import path from 'node:path';
import { type ControlStore, openControlStore } from '@rookery/control-store';
import { type JobQueue, jobQueueFile, openSqliteJobQueue, type StopWorking } from '@rookery/jobs';
import { ROOKERY_JOB_TYPES, type RookeryJobTypes } from '@rookery/protocol';
import { makeTempDir } from '@rookery/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { WorkerMetrics } from '../metrics.js';
import { HOST_TOKEN, startTestHost, type TestHost } from '../test-fixtures/host.js';
import { finished, waitForJob } from '../test-fixtures/jobs.js';
import { startWorkerForHost } from '../test-fixtures/worker.js';
import { sweepJobHandler } from './sweep-job.js';
import { callJson, wakeTenant } from './tenant-http.js';

const TOKEN = HOST_TOKEN;
const TENANT = 'acme';
const PAST = '2020-01-01T00:00:00Z';
const FUTURE = '2099-01-01T00:00:00Z';

let tmp: ReturnType<typeof makeTempDir>;
let host: TestHost;
let hostUrl: string;
let socketPath: string;
let queue: JobQueue<RookeryJobTypes>;
/** The control store the worker reads (the embedded file in the data directory): acme exists there. */
let control: ControlStore;

const tenant = (method: string, url: string, body?: unknown) =>
  callJson({ socketPath }, method, url, { body });
const order = (n: number, metadata: Record<string, string>) => ({
  Type: 'PUT',
  Id: `orders/${n}`,
  Document: { Number: n, '@metadata': { '@collection': 'Orders', ...metadata } },
});
const loaded = async (id: string) => {
  const answer = await tenant('GET', `/databases/shop/docs?id=${encodeURIComponent(id)}`);
  const results = (answer.body as { Results?: { '@metadata': Record<string, unknown> }[] }).Results;
  return { status: answer.status, metadata: results?.[0]?.['@metadata'] };
};

beforeAll(async () => {
  tmp = makeTempDir('rookery-sweep-');
  host = await startTestHost(tmp.dir);
  hostUrl = host.url;
  socketPath = await wakeTenant({ url: hostUrl, token: TOKEN }, TENANT);
  expect((await tenant('PUT', '/admin/databases', { Name: 'Shop' })).status).toBe(201);
  queue = await openSqliteJobQueue({ file: jobQueueFile(tmp.dir), types: ROOKERY_JOB_TYPES });
  control = await openControlStore({ dataDir: tmp.dir });
  await control.createTenant({ id: TENANT, name: TENANT });
}, 60_000);
afterAll(async () => {
  await control?.close();
  await queue?.close();
  await host?.close();
  tmp?.cleanup();
});

describe('the lifecycle-sweep job', () => {
  it('archives and expires the due documents in batches through the tenant, leaving the others', async () => {
    const written = await tenant('POST', '/databases/shop/bulk_docs', {
      Commands: [
        order(1, { '@expires': PAST }),
        order(2, { '@archive-at': PAST }),
        order(3, { '@archive-at': PAST }),
        order(4, { '@expires': FUTURE }),
        order(5, { '@archive-at': FUTURE }),
      ],
    });
    expect(written.status).toBe(201);

    // Batches of two: three due documents take two rounds, the second answering More: false.
    const stop: StopWorking = queue.work(
      'lifecycle-sweep',
      sweepJobHandler({
        host: { url: hostUrl, token: TOKEN },
        metrics: new WorkerMetrics(),
        tenants: control,
        batchSize: 2,
      }),
      { pollMs: 50 },
    );
    try {
      const id = await queue.enqueue({
        type: 'lifecycle-sweep',
        tenantId: TENANT,
        payload: { database: 'Shop' },
      });
      const job = await waitForJob(queue, id, finished, 'finished');
      expect(job).toMatchObject({ state: 'completed', attempts: 1, lastError: null });
      expect(job.progress).toMatchObject({
        outcome: 'completed',
        archived: 2,
        expired: 1,
        rounds: 2,
        more: false,
      });
    } finally {
      await stop();
    }

    expect((await loaded('orders/1')).status).toBe(404);
    for (const id of ['orders/2', 'orders/3']) {
      const doc = await loaded(id);
      expect(doc.status).toBe(200);
      expect(doc.metadata).toMatchObject({ '@archived': true });
      expect(doc.metadata).not.toHaveProperty('@archive-at');
    }
    expect((await loaded('orders/4')).metadata).toMatchObject({ '@expires': expect.any(String) });
    const future = await loaded('orders/5');
    expect(future.metadata).toMatchObject({ '@archive-at': expect.any(String) });
    expect(future.metadata).not.toHaveProperty('@archived', true);
  });

  it("fails with the tenant's DatabaseNotFound when the database does not exist, without retrying forever", async () => {
    // The whole worker this time: its configuration wires the handler to the host.
    const worker = await startWorkerForHost(tmp.dir, { url: hostUrl, token: TOKEN });
    try {
      const direct = await tenant('POST', '/databases/nope/admin/sweep', {});
      expect(direct.body).toMatchObject({ code: 'DatabaseNotFound' });
      const id = await queue.enqueue({
        type: 'lifecycle-sweep',
        tenantId: TENANT,
        payload: { database: 'nope' },
        maxAttempts: 2,
        backoffMs: 0,
      });
      const job = await waitForJob(queue, id, finished, 'finished');
      expect(job).toMatchObject({
        state: 'failed',
        attempts: 2,
        lastError: (direct.body as { detail: string }).detail,
      });
      expect(await worker.metrics.text()).toMatch(
        /rookery_worker_jobs_total\{type="lifecycle-sweep",outcome="failed"\} 2/,
      );
    } finally {
      await worker.close();
    }
  });

  it('leaves a deleted tenant asleep: a sweep scheduled before the deletion is skipped, not woken', async () => {
    const stop: StopWorking = queue.work(
      'lifecycle-sweep',
      sweepJobHandler({
        host: { url: hostUrl, token: TOKEN },
        metrics: new WorkerMetrics(),
        tenants: control,
      }),
      { pollMs: 50 },
    );
    try {
      // 'gone' is not in the control store (deleted, its purge perhaps running).
      const id = await queue.enqueue({
        type: 'lifecycle-sweep',
        tenantId: 'gone',
        payload: { database: 'shop' },
      });
      const job = await waitForJob(queue, id, finished, 'finished');
      expect(job).toMatchObject({
        state: 'completed',
        progress: { outcome: 'skipped', reason: 'tenant deleted' },
      });
      expect(existsSync(path.join(tmp.dir, 'tenants', 'gone'))).toBe(false);
    } finally {
      await stop();
    }
  });
});
