// Attacks on side-by-side index replacement (a changed definition is built beside the old index, which
// answers until the new one caught up), end to end through the real gateway over mutual TLS, a real
// host, real tenant and indexer processes (README.md beside this file):
// - a flood of changed definitions of one index, back to back and concurrently: each replaces the
//   replacement before it (never a pile of files or a wedged index), and the last one answers;
// - a changed definition that does not compile: refused, and the answering index stays as it was.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Client, type Stack, startStack } from '../test-fixtures/stack.js';

let stack: Stack;
let admin: Client;

beforeAll(async () => {
  stack = await startStack();
  admin = await stack.tenantAdmin({ id: 'redefiner', name: 'Redefiner' }, 'redefiner-admin');
  expect((await admin.call('PUT', '/admin/databases', { Name: 'shop' })).status).toBe(201);
  const commands = Array.from({ length: 50 }, (_, i) => ({
    Type: 'PUT',
    Id: `items/${i}`,
    Document: { N: i, K: i % 5, '@metadata': { '@collection': 'Items' } },
  }));
  expect((await admin.call('POST', '/databases/shop/bulk_docs', { Commands: commands })).status).toBe(201);
}, 120_000);
afterAll(async () => {
  await stack?.close();
});

/** The index's definition number `n`: a field `V` holding N + n, so answers say which definition gave them. */
const version = (n: number) => ({
  Name: 'Items/Versioned',
  Maps: [`map('Items', x => ({ V: x.N + ${n} }))`],
});

async function count(where: string, wait: boolean): Promise<{ total: number; stale: boolean }> {
  const rql = encodeURIComponent(`from index 'Items/Versioned' where ${where}`);
  const reply = await admin.call(
    'GET',
    `/databases/shop/queries?waitForNonStaleResults=${wait}&waitForNonStaleResultsTimeoutMs=60000&query=${rql}`,
  );
  expect(reply.status, reply.text).toBe(200);
  return { total: reply.json.TotalResults as number, stale: reply.json.IsStale as boolean };
}

describe('changed index definitions', () => {
  it('a flood of changes, back to back and at once, ends with the last one answering', async () => {
    expect((await admin.call('PUT', '/databases/shop/indexes', version(0))).status).toBe(201);
    expect(await count('V = 0', true)).toEqual({ total: 1, stale: false });
    for (let n = 1; n <= 20; n++)
      expect((await admin.call('PUT', '/databases/shop/indexes', version(n * 1000))).status).toBe(201);
    const concurrent = await Promise.all(
      Array.from({ length: 10 }, () => admin.call('PUT', '/databases/shop/indexes', version(99_000))),
    );
    // The same change at once: one is built, the others find it already put.
    for (const reply of concurrent) expect([200, 201]).toContain(reply.status);
    expect(await count('V = 99000', true)).toEqual({ total: 1, stale: false });
    expect(await count('V = 20000', false)).toEqual({ total: 0, stale: false });
  });

  it('a changed definition that does not compile is refused and the answering index stays', async () => {
    const broken = { Name: 'Items/Versioned', Maps: ["map('Items', x => ({ V: x.N + ))"] };
    const refused = await admin.call('PUT', '/databases/shop/indexes', broken);
    expect(refused.status).toBe(400);
    expect(refused.json).toMatchObject({ code: 'InvalidIndexDefinition' });
    expect(await count('V = 99000', true)).toEqual({ total: 1, stale: false });
  });
});
