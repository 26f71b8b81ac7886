// The database job end to end, with real parts: a real host starting a real tenant, the whole
// worker (its configuration wires the handler), the control store in the same data directory. The
// job creates the database in the tenant's container and records it; asked again it is done with
// nothing to do; delete removes both.
import { type ControlStore, openControlStore } from '@rookery/control-store';
import { type JobQueue, jobQueueFile, openSqliteJobQueue } from '@rookery/jobs';
import { type DatabaseJobPayload, ROOKERY_JOB_TYPES, type RookeryJobTypes } from '@rookery/protocol';
import { makeTempDir } from '@rookery/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HOST_TOKEN, startTestHost, type TestHost } from '../test-fixtures/host.js';
import { finished, waitForJob } from '../test-fixtures/jobs.js';
import { startWorkerForHost } from '../test-fixtures/worker.js';
import type { RunningWorker } from '../worker.js';
import { callJson, wakeTenant } from './tenant-http.js';

let tmp: ReturnType<typeof makeTempDir>;
let host: TestHost;
let queue: JobQueue<RookeryJobTypes>;
let store: ControlStore;
let worker: RunningWorker;

async function runJob(tenantId: string, payload: DatabaseJobPayload) {
  const id = await queue.enqueue({ type: 'database', tenantId, payload });
  return waitForJob(queue, id, finished, 'finished');
}

/** The tenant's own answer for the database's stats: 200 when it exists there. */
async function statsStatus(tenant: string, database: string): Promise<number> {
  const socketPath = await wakeTenant({ url: host.url, token: HOST_TOKEN }, tenant);
  return (await callJson({ socketPath }, 'GET', `/databases/${database}/stats`)).status;
}

beforeAll(async () => {
  tmp = makeTempDir('rookery-database-job-');
  host = await startTestHost(tmp.dir);
  queue = await openSqliteJobQueue({ file: jobQueueFile(tmp.dir), types: ROOKERY_JOB_TYPES });
  store = await openControlStore({ dataDir: tmp.dir });
  await store.createTenant({ id: 'acme', name: 'Acme Ltd' });
  worker = await startWorkerForHost(tmp.dir, { url: host.url, token: HOST_TOKEN });
}, 60_000);
afterAll(async () => {
  await worker?.close();
  await queue?.close();
  await store?.close();
  await host?.close();
  tmp?.cleanup();
});

describe('the database job', () => {
  it("creates the database in the tenant's container and records it, and is done when asked again", async () => {
    const job = await runJob('acme', { database: 'orders', action: 'create', requestedBy: 'test' });
    expect(job).toMatchObject({ state: 'completed', attempts: 1, lastError: null });
    expect(job.progress).toMatchObject({ outcome: 'completed', action: 'create', changed: true });
    expect(await statsStatus('acme', 'orders')).toBe(200);
    expect((await store.listDatabases('acme')).map((d) => d.name)).toEqual(['orders']);

    const again = await runJob('acme', { database: 'orders', action: 'create' });
    expect(again).toMatchObject({ state: 'completed', attempts: 1 });
    expect(again.progress).toMatchObject({ changed: false });
  });

  it('deletes the database and its record, and is done when it is already gone', async () => {
    await runJob('acme', { database: 'scratch', action: 'create' });
    expect(await statsStatus('acme', 'scratch')).toBe(200);
    const job = await runJob('acme', { database: 'scratch', action: 'delete' });
    expect(job).toMatchObject({ state: 'completed' });
    expect(job.progress).toMatchObject({ action: 'delete', changed: true });
    expect(await statsStatus('acme', 'scratch')).toBe(404);
    expect((await store.listDatabases('acme')).map((d) => d.name)).not.toContain('scratch');
    const again = await runJob('acme', { database: 'scratch', action: 'delete' });
    expect(again.progress).toMatchObject({ changed: false });
  });

  it('refuses a payload that names no valid database before it reaches the queue', async () => {
    await expect(
      queue.enqueue({ type: 'database', tenantId: 'acme', payload: { database: '../x', action: 'create' } }),
    ).rejects.toMatchObject({ code: 'InvalidJobPayload' });
  });
});
