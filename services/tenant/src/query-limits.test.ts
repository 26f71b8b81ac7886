import { beforeAll, describe, expect, it } from 'vitest';
import { sharedTenantServer } from './test-fixtures/tenant-server.js';

// Queries that would make an automatic index the indexer cannot take (too many fields, a name too long,
// a field name an index cannot have) are refused with a 400 before anything reaches the indexer; the
// real tenant server with its real indexer process answers them, and ordinary queries still work after.
const { call } = sharedTenantServer({ database: 'Shop' });

const query = (q: string) =>
  call('POST', '/databases/shop/queries', { Query: q, WaitForNonStaleResults: true });

const fields = (count: number, prefix = 'F') => Array.from({ length: count }, (_, i) => `${prefix}${i}`);

beforeAll(async () => {
  const document: Record<string, unknown> = { Name: 'Ada', '@metadata': { '@collection': 'Things' } };
  for (const f of fields(30, 'AVeryLongFieldNameThatMakesTheAutomaticIndexNameLong')) document[f] = 1;
  const put = await call('PUT', '/databases/shop/docs?id=things/1', document);
  expect(put.status).toBe(201);
});

describe('automatic index limits', () => {
  it('refuses a where on 200 fields with a 400 that names the limit and what to do', async () => {
    const reply = await query(
      `from Things where ${fields(200)
        .map((f) => `${f} = 1`)
        .join(' and ')}`,
    );
    expect(reply.status).toBe(400);
    expect(reply.json.code).toBe('InvalidQuery');
    expect(reply.json.detail).toMatch(/200 fields.*at most 64.*static index/);
  });

  it('refuses an order by on 40 fields with a 400 that names the limit', async () => {
    const reply = await query(`from Things order by ${fields(40).join(', ')}`);
    expect(reply.status).toBe(400);
    expect(reply.json.code).toBe('InvalidQuery');
    expect(reply.json.detail).toMatch(/40 keys.*at most 16/);
  });

  it('gives an automatic index whose full name would be too long a shortened, stable name', async () => {
    const long = fields(30, 'AVeryLongFieldNameThatMakesTheAutomaticIndexNameLong');
    const text = `from Things where ${long.map((f) => `${f} = 1`).join(' and ')}`;
    const first = await query(text);
    expect(first.status).toBe(200);
    expect(first.json.TotalResults).toBe(1);
    const name = String(first.json.IndexName);
    expect(name.length).toBeLessThanOrEqual(200);
    expect(name).toMatch(/^Auto\/Things\/ByAVeryLongFieldName.*-[0-9a-f]{16}$/);
    const again = await query(text);
    expect(again.json.IndexName).toBe(name);
    const listed = await call('GET', '/databases/shop/indexes');
    expect(JSON.stringify(listed.json)).toContain(name);
  });

  it('refuses a field an index cannot name with a 400, not a hang', async () => {
    const reply = await query("from Things where 'first name' = 'Ada'");
    expect(reply.status).toBe(400);
    expect(reply.json.code).toBe('InvalidQuery');
    expect(reply.json.detail).toMatch(/first name/);
  });

  it('refuses a static index whose name is longer than 200 characters', async () => {
    const reply = await call('PUT', '/databases/shop/indexes', {
      Name: `Things/${'x'.repeat(200)}`,
      Maps: [{ Collection: 'Things', Fields: { Name: 'Name' } }],
    });
    expect(reply.status).toBe(400);
    expect(reply.json.code).toBe('InvalidRequest');
    expect(reply.json.detail).toMatch(/at most 200 characters/);
  });

  it('still answers ordinary queries afterwards', async () => {
    const reply = await query("from Things where Name = 'Ada'");
    expect(reply.status).toBe(200);
    expect(reply.json.TotalResults).toBe(1);
  });
});
