// A changed index definition through the tenant: the old index answers (stale) while the new one is built
// beside it, across a restart too, and the stored definition (docs.db, what the mirror ships and a restore
// rebuilds from) stays the new one. The replacement is held mid-build deterministically: above the worker
// threshold it awaits a worker's build, and a tenant without a host never gets one. Real tenant server,
// real indexer process, real mirror directory.
import path from 'node:path';
import type { IndexStats } from '@rookery/protocol';
import { makeTempDir } from '@rookery/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../config.js';
import { buildTenantServer, type TenantServer } from '../server.js';
import { httpClient } from '../test-fixtures/http-client.js';

let tmp: ReturnType<typeof makeTempDir>;
let server: TenantServer | null = null;
let base = '';
const call = httpClient(() => base);
const saved = process.env.ROOKERY_INDEX_WORKER_THRESHOLD;

beforeEach(() => {
  tmp = makeTempDir('rookery-tenant-side-by-side-');
  // The indexer process reads its settings from the environment it inherits.
  process.env.ROOKERY_INDEX_WORKER_THRESHOLD = '5';
});
afterEach(async () => {
  await server?.close();
  server = null;
  if (saved === undefined) delete process.env.ROOKERY_INDEX_WORKER_THRESHOLD;
  else process.env.ROOKERY_INDEX_WORKER_THRESHOLD = saved;
  tmp.cleanup();
});

async function start(): Promise<void> {
  server = buildTenantServer(
    loadConfig(
      {},
      {
        dataDir: path.join(tmp.dir, 'tenants', 'acme'),
        logLevel: 'silent',
        mirrorDir: path.join(tmp.dir, 'mirror'),
        mirrorMode: 'sync',
      },
    ),
  );
  base = await server.app.listen({ host: '127.0.0.1', port: 0 });
}

const V1 = { Name: 'Users/ByColor', Maps: [{ Collection: 'Users', Fields: { Color: 'Color' } }] };
const V2 = { Name: 'Users/ByColor', Maps: [{ Collection: 'Users', Fields: { Color: 'Shade' } }] };

async function answer(color: string, wait = false): Promise<{ count: number; stale: boolean }> {
  const response = await call('POST', '/databases/shop/queries', {
    Query: `from index 'Users/ByColor' where Color = '${color}'`,
    WaitForNonStaleResults: wait,
  });
  expect(response.status).toBe(200);
  return { count: response.json.TotalResults as number, stale: response.json.IsStale as boolean };
}

async function statsOf(): Promise<IndexStats> {
  const response = await call('GET', `/databases/shop/indexes/stats?name=${encodeURIComponent(V1.Name)}`);
  expect(response.status).toBe(200);
  return response.json as unknown as IndexStats;
}

async function listed(): Promise<IndexStats> {
  const response = await call('GET', '/databases/shop/indexes');
  expect(response.status).toBe(200);
  return (response.json.Results as IndexStats[])[0]!;
}

/** Ten users, indexed by V1 (an empty database is under the threshold: built here). */
async function shopWithV1(): Promise<void> {
  expect((await call('PUT', '/admin/databases', { Name: 'shop' })).status).toBe(201);
  expect((await call('PUT', '/databases/shop/indexes', V1)).status).toBe(201);
  const users = Array.from({ length: 10 }, (_, i) => ({
    Type: 'PUT',
    Id: `users/${i}`,
    Document: { Color: 'red', Shade: 'blue', '@metadata': { '@collection': 'Users' } },
  }));
  expect((await call('POST', '/databases/shop/bulk_docs', { Commands: users })).status).toBe(201);
  expect(await answer('red', true)).toEqual({ count: 10, stale: false });
}

describe('a changed index definition through the tenant', () => {
  it('answers from the old definition while the new one is built beside it, across a restart', async () => {
    await start();
    expect((await call('PUT', '/admin/databases', { Name: 'shop' })).status).toBe(201);
    // An empty database, under the threshold: built here.
    expect((await call('PUT', '/databases/shop/indexes', V1)).status).toBe(201);
    const users = Array.from({ length: 10 }, (_, i) => ({
      Type: 'PUT',
      Id: `users/${i}`,
      Document: { Color: 'red', Shade: 'blue', '@metadata': { '@collection': 'Users' } },
    }));
    expect((await call('POST', '/databases/shop/bulk_docs', { Commands: users })).status).toBe(201);
    expect(await answer('red', true)).toEqual({ count: 10, stale: false });

    // Ten documents now: the changed definition awaits a worker's build, which never comes here.
    expect((await call('PUT', '/databases/shop/indexes', V2)).status).toBe(201);
    expect(await answer('red')).toEqual({ count: 10, stale: true });
    expect(await answer('blue')).toEqual({ count: 0, stale: true });

    await server!.close();
    await start();
    expect(await answer('red')).toEqual({ count: 10, stale: true });
    // The definition the database keeps is the one being built, not the one answering meanwhile.
    expect(
      server!.catalog
        .get('shop')
        .indexDefinitions()
        .map((d) => d.Maps),
    ).toEqual([V2.Maps]);
  });

  it('says in the index stats what queries say: stale, with the replacement’s own progress, until it is gone', async () => {
    await start();
    await shopWithV1();
    const caughtUp = await statsOf();
    expect(caughtUp).toMatchObject({ IsStale: false, Progress: null, LastIndexedEtag: 10 });
    expect(caughtUp.Replacement).toBeUndefined();

    // The changed definition awaits a worker's build (never comes here): the old index answers, caught up
    // on its own, but stale as the queries say, and the replacement shows where it is.
    expect((await call('PUT', '/databases/shop/indexes', V2)).status).toBe(201);
    expect(await answer('red')).toEqual({ count: 10, stale: true });
    for (const stats of [await statsOf(), await listed()]) {
      expect(stats).toMatchObject({ Name: V1.Name, IsStale: true, LastIndexedEtag: 10, EntriesCount: 10 });
      expect(stats.WorkerBuild).toBeUndefined();
      expect(stats.Replacement).toEqual({
        LastIndexedEtag: 0,
        Progress: { TotalDocuments: 10, DocumentsToProcess: 10, IsEstimate: false },
        EntriesCount: 0,
        // Asked of a host this tenant does not have: the request is where it stays.
        WorkerBuild: { State: 'requested', Phase: null, DocumentsIndexed: 0 },
      });
    }

    // The answering definition put back calls the replacement off: one index again, caught up.
    expect((await call('PUT', '/databases/shop/indexes', V1)).status).toBe(200);
    expect(await answer('red', true)).toEqual({ count: 10, stale: false });
    const back = await statsOf();
    expect(back).toMatchObject({ IsStale: false, Progress: null, LastIndexedEtag: 10 });
    expect(back.Replacement).toBeUndefined();
    expect(back.WorkerBuild).toBeUndefined();
  });

  it('after the replacement built here is promoted: no Replacement, and not stale', async () => {
    // No worker threshold: the changed definition is built beside the old index by the tenant's indexer.
    delete process.env.ROOKERY_INDEX_WORKER_THRESHOLD;
    await start();
    await shopWithV1();
    expect((await call('PUT', '/databases/shop/indexes', V2)).status).toBe(201);
    // A wait for non-stale results waits for the promotion.
    expect(await answer('blue', true)).toEqual({ count: 10, stale: false });
    const promoted = await statsOf();
    expect(promoted).toMatchObject({ IsStale: false, Progress: null, LastIndexedEtag: 10, EntriesCount: 10 });
    expect(promoted.Replacement).toBeUndefined();
  });
});
