// Worker-built indexes end to end (issue [10]; docs/mirror.md, "Worker-built indexes"): the supervisor
// with real tenant processes (and their indexer processes) mirroring to a real directory, the host's
// IndexBuildQueue on a real SQLite job queue, and a real worker process (services/worker's main). An index
// over a database above the threshold is built by the worker and adopted by the tenant — its stats say
// IsStale with the worker's progress meanwhile — while one below it, or any index on one machine without a
// worker fleet, is built beside the tenant and no job is enqueued.
import type { ChildProcess } from 'node:child_process';
import { readdir, readFile } from 'node:fs/promises';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { jobQueueFile, openSqliteJobQueue } from '@rookery/jobs';
import {
  type IndexBuildProgressMessage,
  IndexBuildRequestMessageSchema,
  type IndexStats,
  ROOKERY_JOB_TYPES,
} from '@rookery/protocol';
import { makeTempDir, spawnTs, untilReady, waitForExit } from '@rookery/testkit';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { loadHostConfig } from './config.js';
import { IndexBuildQueue } from './index-builds.js';
import { TenantSupervisor } from './supervisor.js';
import { sourceTenantCommand } from './tenant-command.js';
import { TenantClient } from './test-fixtures/tenant-client.js';

const WORKER_MAIN = fileURLToPath(new URL('../../worker/src/main.ts', import.meta.url));
const THRESHOLD = 500;
const NOTES = 1_200;
const BY_WORD = {
  Name: 'Notes/ByWord',
  Maps: [{ Collection: 'Notes', Fields: { Word: 'Word' } }],
};

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function setup(withWorkerFleet: boolean) {
  const tmp = makeTempDir('rookery-host-index-builds-');
  cleanups.push(() => tmp.cleanup());
  const mirror = path.join(tmp.dir, 'mirror');
  const queue = await openSqliteJobQueue({ file: jobQueueFile(tmp.dir), types: ROOKERY_JOB_TYPES });
  cleanups.push(() => queue.close());
  const indexBuilds = withWorkerFleet
    ? new IndexBuildQueue(queue, THRESHOLD, pino({ level: 'silent' }), 100)
    : undefined;
  if (indexBuilds) cleanups.push(() => indexBuilds.close());
  const config = loadHostConfig(
    {},
    {
      dataDir: tmp.dir,
      internalToken: 'test-token-0123456789',
      tenantLogLevel: 'error',
      spareProcesses: 0,
      idleStopMs: 0,
      startDeadlineMs: 60_000,
    },
  );
  const supervisor = new TenantSupervisor(config, {
    logger: pino({ level: 'silent' }),
    command: () => sourceTenantCommand(),
    env: { ...process.env, ROOKERY_MIRROR: mirror, ROOKERY_MIRROR_MODE: 'sync' },
    ...(indexBuilds && { indexBuilds }),
  });
  cleanups.push(() => supervisor.shutdown(5_000).then(() => undefined));
  const woken = await supervisor.wake('acme');
  const tenant = new TenantClient(woken.socketPath);
  cleanups.push(() => tenant.close());
  return { tmp, mirror, queue, tenant };
}

async function startWorker(
  dataDir: string,
  mirror: string,
  env: Record<string, string>,
): Promise<ChildProcess> {
  const child = spawnTs(WORKER_MAIN, [], {
    ROOKERY_DATA: dataDir,
    ROOKERY_MIRROR: mirror,
    ROOKERY_MASTER_KEY_FILE: path.join(dataDir, 'master.key'),
    ROOKERY_WORKER_PORT: '0',
    ROOKERY_WORKER_POLL_MS: '100',
    ROOKERY_BACKUP_EVERY_MINUTES: '0',
    ROOKERY_SWEEP_EVERY_MINUTES: '0',
    ROOKERY_INDEX_BUILD_BATCH: '100',
    ROOKERY_LOG_LEVEL: 'warn',
    ...env,
  });
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    await waitForExit(child);
  });
  child.stdout?.resume();
  await untilReady(child, 'the worker');
  return child;
}

const note = (i: number, word: string) => ({
  Type: 'PUT',
  Id: `notes/${i}`,
  Document: { Word: word, '@metadata': { '@collection': 'Notes' } },
});

async function fill(tenant: TenantClient, db: string, count: number): Promise<void> {
  expect((await tenant.call('PUT', '/admin/databases', { Name: db })).status).toBe(201);
  const commands = Array.from({ length: count }, (_, i) => note(i, i % 2 === 0 ? 'even' : 'odd'));
  expect((await tenant.call('POST', `/databases/${db}/bulk_docs`, { Commands: commands })).status).toBe(201);
}

async function stats(tenant: TenantClient, db: string): Promise<IndexStats> {
  const reply = await tenant.call(
    'GET',
    `/databases/${db}/indexes/stats?name=${encodeURIComponent(BY_WORD.Name)}`,
  );
  expect(reply.status).toBe(200);
  return reply.json as unknown as IndexStats;
}

/** Reads the index's stats until `until` holds: tests wait for states, never for durations. */
async function statsUntil(
  tenant: TenantClient,
  db: string,
  until: (stats: IndexStats) => boolean,
  what: string,
): Promise<IndexStats> {
  const deadline = Date.now() + 120_000;
  let last: IndexStats | null = null;
  while (Date.now() < deadline) {
    last = await stats(tenant, db);
    if (until(last)) return last;
    await sleep(50);
  }
  throw new Error(`index stats never showed ${what}; last: ${JSON.stringify(last)}`);
}

/** Counts by word, waiting for a non-stale answer as a client would. */
async function countOf(tenant: TenantClient, db: string, word: string): Promise<number> {
  const reply = await tenant.call('POST', `/databases/${db}/queries`, {
    Query: `from index '${BY_WORD.Name}' where Word = '${word}'`,
    WaitForNonStaleResults: true,
    WaitForNonStaleResultsTimeout: '00:02:00',
  });
  expect(reply.status).toBe(200);
  expect(reply.json.IsStale).toBe(false);
  return (reply.json.Results as unknown[]).length;
}

describe('an index over a database above the threshold', () => {
  it('is built by a worker process and adopted by the tenant, stale with the build progress until then', async () => {
    const { tmp, mirror, queue, tenant } = await setup(true);
    await fill(tenant, 'shop', NOTES);
    expect((await tenant.call('PUT', '/databases/shop/indexes', BY_WORD)).status).toBe(201);

    // No worker yet: the job waits on the queue, and the index is not built beside the tenant meanwhile.
    const queued = await statsUntil(
      tenant,
      'shop',
      (s) => s.WorkerBuild?.State === 'queued',
      'a queued build',
    );
    expect(queued).toMatchObject({ IsStale: true, LastIndexedEtag: 0, EntriesCount: 0 });
    expect(queued.Progress).toMatchObject({ TotalDocuments: NOTES, DocumentsToProcess: NOTES });
    const stale = await tenant.call('POST', '/databases/shop/queries', {
      Query: `from index '${BY_WORD.Name}' where Word = 'even'`,
    });
    expect(stale.json).toMatchObject({ IsStale: true, Results: [] });
    const [job] = await queue.list({ type: 'index-build' });
    expect(job).toMatchObject({ tenantId: 'acme', state: 'queued', payload: { database: 'shop' } });

    // A slow worker (200 documents/s): its progress shows in the index's stats while it builds.
    await startWorker(tmp.dir, mirror, { ROOKERY_INDEX_BUILD_MAX_DOCS_PER_S: '200' });
    const building = await statsUntil(
      tenant,
      'shop',
      (s) =>
        s.WorkerBuild?.State === 'active' && s.WorkerBuild.DocumentsIndexed > 0 && s.LastIndexedEtag === 0,
      'the worker indexing',
    );
    expect(building.IsStale).toBe(true);
    expect(building.Progress!.DocumentsToProcess).toBe(NOTES - building.WorkerBuild!.DocumentsIndexed);

    // Written while the worker builds from the mirror: the adopted index catches up with these too.
    expect(
      (
        await tenant.call('POST', '/databases/shop/bulk_docs', {
          Commands: [note(NOTES, 'even'), { Type: 'DELETE', Id: 'notes/1' }],
        })
      ).status,
    ).toBe(201);

    expect(await countOf(tenant, 'shop', 'even')).toBe(NOTES / 2 + 1);
    expect(await countOf(tenant, 'shop', 'odd')).toBe(NOTES / 2 - 1);
    const adopted = await stats(tenant, 'shop');
    expect(adopted).toMatchObject({ IsStale: false, Progress: null, EntriesCount: NOTES });
    expect(adopted.WorkerBuild).toBeUndefined();
    expect(await queue.get(job!.id)).toMatchObject({ state: 'completed', attempts: 1 });
  }, 300_000);
});

describe('a change that supersedes a replacement a worker is building', () => {
  it('cancels the superseded job and adopts the newest build', async () => {
    const { tmp, mirror, queue, tenant } = await setup(true);
    // At the threshold the first definition is built beside the tenant; the changes after are the worker's.
    await fill(tenant, 'shop', THRESHOLD);
    const v2 = { ...BY_WORD, Maps: [{ Collection: 'Notes', Fields: { Word: 'Word', Kind: 'Word' } }] };
    const v3 = { ...BY_WORD, Maps: [{ Collection: 'Notes', Fields: { Word: 'Word', Tag: 'Word' } }] };
    expect((await tenant.call('PUT', '/databases/shop/indexes', BY_WORD)).status).toBe(201);
    expect(await countOf(tenant, 'shop', 'even')).toBe(THRESHOLD / 2);
    const more = Array.from({ length: NOTES - THRESHOLD }, (_, i) =>
      note(THRESHOLD + i, i % 2 === 0 ? 'even' : 'odd'),
    );
    expect((await tenant.call('POST', '/databases/shop/bulk_docs', { Commands: more })).status).toBe(201);
    expect(await countOf(tenant, 'shop', 'even')).toBe(NOTES / 2);
    // A slow worker (5 documents/s from a build's first batch, however long its restore took: 4 minutes
    // for these documents), stopped mid-build below — a worker lost while the replacement builds, so that
    // the job is surely still active, whatever the load, when the next change supersedes it. (A live
    // worker stopping a cancelled job is the job queue's contract: packages/jobs.)
    const slow = await startWorker(tmp.dir, mirror, { ROOKERY_INDEX_BUILD_MAX_DOCS_PER_S: '5' });

    expect((await tenant.call('PUT', '/databases/shop/indexes', v2)).status).toBe(201);
    const building = await statsUntil(
      tenant,
      'shop',
      (s) => s.Replacement?.WorkerBuild?.State === 'active' && s.Replacement.WorkerBuild.DocumentsIndexed > 0,
      'the worker building the replacement',
    );
    // The old definition answers, caught up, but stale while the replacement builds: the stats say so.
    expect(building).toMatchObject({ IsStale: true, LastIndexedEtag: NOTES, EntriesCount: NOTES });
    expect(building.Replacement).toMatchObject({ LastIndexedEtag: 0, EntriesCount: 0 });
    const [superseded] = await queue.list({ type: 'index-build', state: 'active' });
    expect(superseded!.payload).toMatchObject({ definition: v2 });
    slow.kill('SIGKILL');
    await waitForExit(slow);
    // A worker at full speed for the newest definition's build.
    await startWorker(tmp.dir, mirror, {});

    expect((await tenant.call('PUT', '/databases/shop/indexes', v3)).status).toBe(201);
    const tagged = await tenant.call('POST', '/databases/shop/queries', {
      Query: `from index '${BY_WORD.Name}' where Tag = 'even'`,
      WaitForNonStaleResults: true,
      WaitForNonStaleResultsTimeout: '00:05:00',
    });
    expect(tagged.json).toMatchObject({ IsStale: false });
    expect((tagged.json.Results as unknown[]).length).toBe(NOTES / 2);
    const promoted = await stats(tenant, 'shop');
    expect(promoted).toMatchObject({ IsStale: false, Progress: null });
    expect(promoted.Replacement).toBeUndefined();

    // The superseded job was cancelled, not run to its end: its build never reached the mirror.
    expect(await queue.get(superseded!.id)).toMatchObject({ state: 'cancelled' });
    const states = (await queue.list({ type: 'index-build' })).map((job) => job.state);
    expect(states.filter((state) => state === 'completed')).toHaveLength(1); // v3's
    expect(await snapshotBuildsOn(mirror)).not.toContain(buildOf(superseded!));
  }, 600_000);
});

/** The build label an index-build job's payload carries. */
function buildOf(job: { payload: unknown }): string {
  return (job.payload as { build: string }).build;
}

/** The build labels of every index snapshot on the mirror (a worker's build writes its label there). */
async function snapshotBuildsOn(mirror: string): Promise<string[]> {
  const found: string[] = [];
  for (const entry of await readdir(mirror, { recursive: true })) {
    if (path.basename(entry) !== 'manifest.json') continue;
    const manifest = JSON.parse(await readFile(path.join(mirror, entry), 'utf8')) as { build?: unknown };
    if (typeof manifest.build === 'string') found.push(manifest.build);
  }
  return found;
}

describe('built beside the tenant', () => {
  it('below the threshold: no job, the index answers from the tenant’s own indexer', async () => {
    const { queue, tenant } = await setup(true);
    await fill(tenant, 'small', THRESHOLD);
    expect((await tenant.call('PUT', '/databases/small/indexes', BY_WORD)).status).toBe(201);
    expect(await countOf(tenant, 'small', 'even')).toBe(THRESHOLD / 2);
    expect((await stats(tenant, 'small')).WorkerBuild).toBeUndefined();
    expect(await queue.list({ type: 'index-build' })).toEqual([]);
  }, 180_000);

  it('on one machine without a worker fleet, whatever the size: as before, no job', async () => {
    const { queue, tenant } = await setup(false);
    await fill(tenant, 'shop', NOTES);
    expect((await tenant.call('PUT', '/databases/shop/indexes', BY_WORD)).status).toBe(201);
    expect(await countOf(tenant, 'shop', 'even')).toBe(NOTES / 2);
    expect(await queue.list({ type: 'index-build' })).toEqual([]);
  }, 180_000);
});

describe('the host’s IndexBuildQueue', () => {
  it('enqueues for the sending tenant, once while a build waits, and passes the job’s state on', async () => {
    const tmp = makeTempDir('rookery-host-index-build-queue-');
    cleanups.push(() => tmp.cleanup());
    const queue = await openSqliteJobQueue({ file: jobQueueFile(tmp.dir), types: ROOKERY_JOB_TYPES });
    cleanups.push(() => queue.close());
    const builds = new IndexBuildQueue(queue, THRESHOLD, pino({ level: 'silent' }), 50);
    cleanups.push(() => builds.close());
    const sent: { tenantId: string; message: IndexBuildProgressMessage }[] = [];
    const send = (tenantId: string, message: IndexBuildProgressMessage) => sent.push({ tenantId, message });
    const request = { type: 'index-build' as const, database: 'Shop', definition: BY_WORD, build: 'b-1' };
    await builds.request('acme', request, send);
    // The tenant restarted and asks again (same build, as its indexer does at every start).
    await builds.request('acme', request, send);
    const jobs = await queue.list({ type: 'index-build' });
    expect(jobs).toHaveLength(1);
    expect(jobs[0]).toMatchObject({
      tenantId: 'acme',
      payload: { database: 'Shop', build: 'b-1', definition: BY_WORD },
    });
    expect(sent.at(-1)).toEqual({
      tenantId: 'acme',
      message: {
        type: 'index-build-progress',
        database: 'Shop',
        index: BY_WORD.Name,
        build: 'b-1',
        state: 'queued',
        phase: null,
        documents: 0,
        final: false,
      },
    });
    // The job ends (cancelled here): the last report says so, and the host stops reading it.
    await queue.cancel(jobs[0]!.id);
    const deadline = Date.now() + 60_000;
    while (!sent.at(-1)!.message.final && Date.now() < deadline) await sleep(20);
    expect(sent.at(-1)!.message).toMatchObject({ state: 'cancelled', final: true });
    const reports = sent.length;
    await sleep(200);
    expect(sent).toHaveLength(reports);
  });

  it('a newer build of the index cancels the one it supersedes and is enqueued itself, also when asked at once', async () => {
    const tmp = makeTempDir('rookery-host-index-build-supersede-');
    cleanups.push(() => tmp.cleanup());
    const queue = await openSqliteJobQueue({ file: jobQueueFile(tmp.dir), types: ROOKERY_JOB_TYPES });
    cleanups.push(() => queue.close());
    const builds = new IndexBuildQueue(queue, THRESHOLD, pino({ level: 'silent' }), 50);
    cleanups.push(() => builds.close());
    const send = () => undefined;
    const changed = { ...BY_WORD, Maps: [{ Collection: 'Notes', Fields: { Word: 'Word', Kind: 'Word' } }] };
    const first = { type: 'index-build' as const, database: 'shop', definition: BY_WORD, build: 'b-1' };
    await builds.request('acme', first, send);
    await builds.request('acme', { ...first, definition: changed, build: 'b-2' }, send);
    // Two more changes at once (the tenant sends them as they come; the host must not interleave them).
    await Promise.all([
      builds.request('acme', { ...first, build: 'b-3' }, send),
      builds.request('acme', { ...first, definition: changed, build: 'b-4' }, send),
    ]);
    const byBuild = new Map((await queue.list({ type: 'index-build' })).map((j) => [buildOf(j), j]));
    expect([...byBuild.keys()].sort()).toEqual(['b-1', 'b-2', 'b-3', 'b-4']);
    expect(byBuild.get('b-1')!.state).toBe('cancelled');
    expect(byBuild.get('b-2')!.state).toBe('cancelled');
    expect(byBuild.get('b-3')!.state).toBe('cancelled');
    expect(byBuild.get('b-4')).toMatchObject({ state: 'queued', payload: { definition: changed } });
  });

  it('the IPC contract refuses what a job payload would refuse', () => {
    const valid = { type: 'index-build', database: 'shop', definition: BY_WORD, build: 'b-1' };
    expect(IndexBuildRequestMessageSchema.safeParse(valid).success).toBe(true);
    for (const hostile of [
      { ...valid, build: '../../other-tenant' },
      { ...valid, build: 'x'.repeat(65) },
      { ...valid, database: '../etc' },
      { ...valid, tenantId: 'other-tenant' },
      { ...valid, definition: { Name: 'X', Maps: [] } },
    ])
      expect(IndexBuildRequestMessageSchema.safeParse(hostile).success).toBe(false);
  });
});
