import { describe, expect, it } from 'vitest';
import { sharedTenantServer } from '../test-fixtures/tenant-server.js';

// `GET /databases/{db}/indexes/definition?name=` against the real tenant server and its indexer process:
// what it answers is what PUT took, so an editor (the console's) can start from any index.
const { call } = sharedTenantServer({ database: 'Shop' });

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
