// Attacks through automatic indexes, end to end through the real gateway over mutual TLS, a real host and
// real tenant and indexer processes (README.md beside this file): queries that would make an automatic
// index the indexer cannot take. Each once hung 60 s waiting for an indexer that had refused its message in
// silence, and a few hundred of them held every connection to the tenant. Now each is refused up front
// with a 400 that names the limit, and the tenant keeps answering.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Client, type Reply, type Stack, startStack } from '../test-fixtures/stack.js';

/** The engine's limits (MAX_AUTO_INDEX_FIELDS, MAX_ORDER_BY_KEYS). */
const MAX_FIELDS = 64;
const MAX_SORT_KEYS = 16;
/** Sent at once: enough to have held a tenant's connections when each waited 60 s. */
const CROWD = 40;

let stack: Stack;
let admin: Client;

beforeAll(async () => {
  stack = await startStack();
  admin = await stack.tenantAdmin({ id: 'acme', name: 'Acme' }, 'acme-admin');
  expect((await admin.call('PUT', '/admin/databases', { Name: 'shop' })).status).toBe(201);
  const put = await admin.call('PUT', '/databases/shop/docs?id=things/1', {
    Name: 'Ada',
    '@metadata': { '@collection': 'Things' },
  });
  expect(put.status).toBe(201);
}, 120_000);
afterAll(async () => {
  await stack?.close();
});

const fields = (count: number) => Array.from({ length: count }, (_, i) => `F${i}`);
const query = (text: string): Promise<Reply> =>
  admin.call('POST', '/databases/shop/queries', { Query: text, WaitForNonStaleResults: true });
const wideWhere = `from Things where ${fields(200)
  .map((f) => `${f} = 1`)
  .join(' and ')}`;
const longOrderBy = `from Things order by ${fields(40).join(', ')}`;

function expectRefused(reply: Reply, detail: RegExp): void {
  expect({ status: reply.status, code: reply.json.code }).toEqual({ status: 400, code: 'InvalidQuery' });
  expect(reply.json.detail).toMatch(detail);
}

describe('automatic indexes under attack', () => {
  it('refuses a where on 200 fields with a 400 naming the limit and the way out', async () => {
    expectRefused(await query(wideWhere), new RegExp(`200 fields.*at most ${MAX_FIELDS}.*static index`));
  });

  it('refuses an order by on 40 fields with a 400 naming the limit', async () => {
    expectRefused(await query(longOrderBy), new RegExp(`40 keys.*at most ${MAX_SORT_KEYS}`));
  });

  it('refuses a field no index can name with a 400', async () => {
    expectRefused(await query("from Things where 'first name' = 'Ada'"), /"first name"/);
  });

  it('refuses a crowd of them at once, each with its 400', async () => {
    const replies = await Promise.all(
      Array.from({ length: CROWD }, (_, i) => query(i % 2 === 0 ? wideWhere : longOrderBy)),
    );
    const tally: Record<string, number> = {};
    for (const r of replies)
      tally[`${r.status} ${String(r.json.code)}`] = (tally[`${r.status} ${String(r.json.code)}`] ?? 0) + 1;
    expect(tally).toEqual({ '400 InvalidQuery': CROWD });
  });

  it('still answers an ordinary query and an admin request afterwards', async () => {
    const ordinary = await query("from Things where Name = 'Ada'");
    expect(ordinary.status).toBe(200);
    expect(ordinary.json.TotalResults).toBe(1);
    const listed = await admin.call('GET', '/databases');
    expect(listed.status).toBe(200);
    const indexes = await admin.call('GET', '/databases/shop/indexes');
    expect(indexes.status).toBe(200);
    // Nothing of the refused queries was created: only the ordinary query's index exists.
    expect((indexes.json.Results as { Name: string }[]).map((i) => i.Name)).toEqual(['Auto/Things/ByName']);
  });
});
