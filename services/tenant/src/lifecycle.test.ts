import { describe, expect, it } from 'vitest';
import { sharedTenantServer } from './test-fixtures/tenant-server.js';

// Archival and expiration end to end: the sweep endpoint the worker's jobs call, with the clock
// controlled through its `now`, and queries answered by the real indexer process.
const { call } = sharedTenantServer({ database: 'Shop' });

const SWEEP = '/databases/shop/admin/sweep';
const docs = (id: string) => `/databases/shop/docs?id=${encodeURIComponent(id)}`;
const order = (n: number, color: string, metadata: Record<string, unknown> = {}) => ({
  Type: 'PUT',
  Id: `orders/${n}`,
  Document: { Number: n, Color: color, '@metadata': { '@collection': 'Orders', ...metadata } },
});
const query = async (q: string) => {
  const reply = await call('POST', '/databases/shop/queries', { Query: q, WaitForNonStaleResults: true });
  expect(reply.status, reply.text).toBe(200);
  return reply.json as { Results: { Number: number }[]; TotalResults: number; IndexName: string | null };
};
const numbers = (result: { Results: { Number: number }[] }) => result.Results.map((r) => r.Number).sort();

describe('POST /databases/{db}/admin/sweep', () => {
  it('archives and expires documents when their time has come, and indexes and queries follow', async () => {
    const batch = await call('POST', '/databases/shop/bulk_docs', {
      Commands: [
        order(1, 'red', { '@archive-at': '2031-01-01T00:00:00Z' }),
        order(2, 'red', { '@expires': '2031-01-01T00:00:00Z' }),
        order(3, 'blue', { '@archive-at': '2031-01-01T00:00:00Z', '@expires': '2031-06-01T00:00:00Z' }),
        order(4, 'blue'),
      ],
    });
    expect(batch.status).toBe(201);
    const live = {
      Name: 'Orders/ByColor',
      Maps: [{ Collection: 'Orders', Fields: { Color: 'Color' } }],
    };
    const everything = {
      Name: 'Orders/Everything',
      Maps: ["map('Orders', o => ({ Color: o.Color, Archived: o['@metadata']['@archived'] === true }))"],
      IncludeArchived: true,
    };
    for (const definition of [live, everything])
      expect((await call('PUT', '/databases/shop/indexes', definition)).status).toBe(201);
    expect(numbers(await query("from Orders where Color = 'red'"))).toEqual([1, 2]);

    // Not yet: a second before the time.
    const early = await call('POST', SWEEP, { now: '2030-12-31T23:59:59Z' });
    expect(early.status).toBe(200);
    expect(early.json).toEqual({ Archived: 0, Expired: 0, More: false });
    expect(early.headers.get('cache-control')).toBe('no-store');

    const due = await call('POST', SWEEP, { now: '2031-01-01T00:00:00Z', limit: 2 });
    expect(due.json).toEqual({ Archived: 1, Expired: 1, More: true });
    expect((await call('POST', SWEEP, { now: '2031-01-01T00:00:00Z', limit: 2 })).json).toEqual({
      Archived: 1,
      Expired: 0,
      More: false,
    });

    // Loading by id works as before, and says the document is archived.
    const loaded = await call('GET', docs('orders/1'));
    expect(loaded.status).toBe(200);
    expect((loaded.json.Results as Record<string, unknown>[])[0]).toMatchObject({
      Number: 1,
      '@metadata': { '@archived': true, '@collection': 'Orders' },
    });
    expect((await call('GET', docs('orders/2'))).status).toBe(404);

    // Collection queries and automatic indexes leave archived documents out; a static index does
    // unless it includes them.
    const collection = await query('from Orders');
    expect({ numbers: numbers(collection), total: collection.TotalResults }).toEqual({
      numbers: [4],
      total: 1,
    });
    const auto = await query("from Orders where Color = 'red' or Color = 'blue'");
    expect(auto.IndexName).toMatch(/^Auto\/Orders\//);
    expect(numbers(auto)).toEqual([4]);
    expect(numbers(await query("from index 'Orders/ByColor'"))).toEqual([4]);
    expect(numbers(await query("from index 'Orders/Everything'"))).toEqual([1, 3, 4]);
    expect(numbers(await query("from index 'Orders/Everything' where Archived = true"))).toEqual([1, 3]);

    // The archived document that also expires goes from everywhere at its expiry.
    expect((await call('POST', SWEEP, { now: '2031-06-01T00:00:00Z' })).json).toEqual({
      Archived: 0,
      Expired: 1,
      More: false,
    });
    expect(numbers(await query("from index 'Orders/Everything'"))).toEqual([1, 4]);
    const stats = await call('GET', '/databases/shop/stats');
    expect(stats.json).toMatchObject({ CountOfDocuments: 2, CountOfTombstones: 2 });

    // Stored again without @archived: un-archived, back in queries.
    expect((await call('PUT', docs('orders/1'), order(1, 'red').Document)).status).toBe(201);
    expect(numbers(await query("from Orders where Color = 'red'"))).toEqual([1]);
    expect(numbers(await query('from Orders'))).toEqual([1, 4]);
  });

  it('takes no body, or an empty one, as "now, the default limit"', async () => {
    expect((await call('POST', SWEEP)).json).toEqual({ Archived: 0, Expired: 0, More: false });
    expect((await call('POST', SWEEP, {})).status).toBe(200);
  });

  it('refuses bad input with 400 problem+json naming the field', async () => {
    const cases: { body: unknown; field: string }[] = [
      { body: { now: 'tomorrow' }, field: 'now' },
      { body: { now: 1_790_000_000_000 }, field: 'now' },
      { body: { limit: 0 }, field: 'limit' },
      { body: { limit: 10_001 }, field: 'limit' },
      { body: { limit: 2.5 }, field: 'limit' },
      { body: { Now: '2031-01-01T00:00:00Z' }, field: '' },
      { body: [], field: '' },
    ];
    for (const { body, field } of cases) {
      const reply = await call('POST', SWEEP, body);
      expect({ body, status: reply.status, code: reply.json.code }).toEqual({
        body,
        status: 400,
        code: 'InvalidRequest',
      });
      expect(reply.headers.get('content-type')).toContain('application/problem+json');
      expect(JSON.stringify(reply.json.issues)).toContain(field);
    }
    const invalidJson = await call('POST', SWEEP, '{"now":', { 'content-type': 'application/json' });
    expect(invalidJson.json.code).toBe('InvalidJson');
  });

  it('answers 404 for a database that does not exist', async () => {
    const reply = await call('POST', '/databases/nowhere/admin/sweep', {});
    expect(reply.status).toBe(404);
    expect(reply.json.code).toBe('DatabaseNotFound');
  });
});
