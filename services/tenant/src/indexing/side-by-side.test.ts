// A changed index definition through the tenant: the old index answers (stale) while the new one is built
// beside it, across a restart too, and the stored definition (docs.db, what the mirror ships and a restore
// rebuilds from) stays the new one. The replacement is held mid-build deterministically: above the worker
// threshold it awaits a worker's build, and a tenant without a host never gets one. Real tenant server,
// real indexer process, real mirror directory.
import path from 'node:path';
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
});
