import { makeTempDir } from '@rookery/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import { sharedTenantServer } from '../test-fixtures/tenant-server.js';

// `GET /databases/{db}/indexes/definition?name=` against the real tenant server and its indexer process:
// what it answers is what PUT took, so an editor (the console's) can start from any index.

// Above five documents a new index (or a changed definition) awaits a worker's build, which a tenant
// without a host never gets: a changed definition is held mid-replacement deterministically, as in
// indexing/side-by-side.test.ts. The indexer process reads it from the environment it inherits; the
// other tests' database stays under it.
process.env.ROOKERY_INDEX_WORKER_THRESHOLD = '5';
// Only a mirrored database's indexes are left to workers.
const mirror = makeTempDir('rookery-definition-mirror-');
afterAll(() => mirror.cleanup());
const { call } = sharedTenantServer({
  database: 'Shop',
  config: { mirrorDir: mirror.dir, mirrorMode: 'sync', tenantId: 'acme' },
});

const definition = (name: string) => call('GET', `/databases/shop/indexes/definition?name=${name}`);

describe('GET /databases/{db}/indexes/definition', () => {
  it('answers a declarative definition exactly as PUT took it, so PUT → GET → PUT is identity', async () => {
    const sent = {
      Name: 'Users/Search',
      Maps: [{ Collection: 'Users', Fields: { Text: ['Name', 'Address.City'], City: 'Address.City' } }],
      Reduce: undefined,
      Fields: { Text: { Indexing: 'Search', Suggestions: true } },
      IncludeArchived: true,
    };
    expect((await call('PUT', '/databases/shop/indexes', sent)).status).toBe(201);
    // Case-insensitive like every index route; `Reduce: undefined` is not sent by JSON.
    const first = await definition('users%2Fsearch');
    expect(first.status).toBe(200);
    const { Reduce: _, ...expected } = sent;
    expect(first.json).toEqual(expected);
    const again = await call('PUT', '/databases/shop/indexes', first.json);
    expect(again.status).toBe(200);
    expect((await definition('Users/Search')).json).toEqual(first.json);
  });

  it('answers a JavaScript map-reduce definition with its sources unchanged', async () => {
    const sent = {
      Name: 'Users/Decades',
      Maps: ["map('Users', u => ({ Decade: Math.floor(u.Age / 10) * 10, Count: 1 }))"],
      Reduce:
        'groupBy(x => x.Decade).aggregate(g => ({ Decade: g.key, Count: g.values.reduce((s, v) => s + v.Count, 0) }))',
    };
    expect((await call('PUT', '/databases/shop/indexes', sent)).status).toBe(201);
    const got = await definition('Users/Decades');
    expect(got.json).toEqual(sent);
    expect((await call('PUT', '/databases/shop/indexes', got.json)).status).toBe(200);
  });

  it('answers the changed definition while it is built beside the old one, which answers queries meanwhile', async () => {
    const v1 = { Name: 'Colors/ByColor', Maps: [{ Collection: 'Colors', Fields: { Color: 'Color' } }] };
    const v2 = { Name: 'Colors/ByColor', Maps: [{ Collection: 'Colors', Fields: { Color: 'Shade' } }] };
    expect((await call('PUT', '/databases/shop/indexes', v1)).status).toBe(201);
    const colors = Array.from({ length: 10 }, (_, i) => ({
      Type: 'PUT',
      Id: `colors/${i}`,
      Document: { Color: 'red', Shade: 'blue', '@metadata': { '@collection': 'Colors' } },
    }));
    expect((await call('POST', '/databases/shop/bulk_docs', { Commands: colors })).status).toBe(201);
    const caughtUp = await call('POST', '/databases/shop/queries', {
      Query: "from index 'Colors/ByColor' where Color = 'red'",
      WaitForNonStaleResults: true,
    });
    expect(caughtUp.json.TotalResults).toBe(10);
    expect((await call('PUT', '/databases/shop/indexes', v2)).status).toBe(201);
    // The old definition still answers queries (stale); an editor must start from the one last PUT.
    const old = await call('POST', '/databases/shop/queries', {
      Query: "from index 'Colors/ByColor' where Color = 'red'",
    });
    expect({ total: old.json.TotalResults, stale: old.json.IsStale }).toEqual({ total: 10, stale: true });
    expect((await definition('Colors/ByColor')).json).toEqual(v2);
  });

  it('answers 404 IndexNotFound for an index that does not exist, and 400 without a valid name', async () => {
    const missing = await definition('Nope');
    expect(missing.status).toBe(404);
    expect(missing.json).toMatchObject({
      code: 'IndexNotFound',
      detail: 'There is no index named Nope; list them with GET /databases/Shop/indexes',
    });
    const unnamed = await call('GET', '/databases/shop/indexes/definition');
    expect({ status: unnamed.status, code: unnamed.json.code }).toEqual({
      status: 400,
      code: 'InvalidRequest',
    });
    const hostile = await definition('..%2F..%2Fetc');
    expect({ status: hostile.status, code: hostile.json.code }).toEqual({
      status: 400,
      code: 'InvalidRequest',
    });
    const noDatabase = await call('GET', '/databases/nope/indexes/definition?name=X');
    expect({ status: noDatabase.status, code: noDatabase.json.code }).toEqual({
      status: 404,
      code: 'DatabaseNotFound',
    });
  });
});
