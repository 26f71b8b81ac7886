// What the console reads, attacked end to end through the gateway over mutual TLS: an index's definition
// (GET …/indexes/definition, which shows a JavaScript index's source) from another tenant and with hostile
// names, and the principals' pages (GET …/principals?start=&pageSize=) of another tenant, with a page size
// past the bound, offsets no database takes, and by a principal who is not a tenant admin (README.md).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client, Stack } from '../test-fixtures/stack.js';
import { startTwoTenants } from '../test-fixtures/two-tenants.js';

const GLOBEX_MAP = "map('Users', u => ({ Name: u.Name, Secret: 'globex-only' }))";

let stack: Stack;
let adminA: Client;
let readerA: Client;

beforeAll(async () => {
  ({ stack, adminA, readerA } = await startTwoTenants());
  const adminB = await stack.program('globex-admin', 'globex');
  expect((await adminB.call('PUT', '/admin/databases', { Name: 'shop' })).status).toBe(201);
  const index = await adminB.call('PUT', '/databases/shop/indexes', {
    Name: 'Users/Secret',
    Maps: [GLOBEX_MAP],
  });
  expect(index.status).toBe(201);
  const own = await adminA.call('PUT', '/databases/shop/indexes', {
    Name: 'Users/ByName',
    Maps: [{ Collection: 'Users', Fields: { Name: 'Name' } }],
  });
  expect(own.status).toBe(201);
}, 120_000);
afterAll(async () => {
  await stack?.close();
});

const answerOf = (reply: { status: number; json: Record<string, unknown> }) => [
  reply.status,
  reply.json.code,
];

describe("an index's definition", () => {
  it("is another tenant's to read only: acme's admin and reader get 403 and never globex's source", async () => {
    for (const client of [adminA, readerA]) {
      for (const path of [
        '/tenants/globex/databases/shop/indexes/definition?name=Users/Secret',
        '/tenants/%67lobex/databases/shop/indexes/definition?name=Users/Secret',
      ]) {
        const reply = await client.call('GET', path);
        expect({ path, got: answerOf(reply) }).toEqual({ path, got: [403, 'Forbidden'] });
        expect(reply.text).not.toContain('globex-only');
      }
    }
  });

  it('is read by a read-only principal of the database, and hostile names are 400', async () => {
    const own = await readerA.call('GET', '/databases/shop/indexes/definition?name=users/byname');
    expect(own.status).toBe(200);
    expect(own.json).toEqual({
      Name: 'Users/ByName',
      Maps: [{ Collection: 'Users', Fields: { Name: 'Name' } }],
    });
    for (const name of ['..%2F..%2Fglobex', '%00', 'a'.repeat(10_000), '', 'Users%2FByName%0A']) {
      const reply = await readerA.call('GET', `/databases/shop/indexes/definition?name=${name}`);
      expect({ name: name.slice(0, 40), got: answerOf(reply) }).toEqual({
        name: name.slice(0, 40),
        got: [400, 'InvalidRequest'],
      });
    }
  });
});

describe("a tenant's principals, paged", () => {
  it("are another tenant's to list only: pages of globex are 403 for acme's admin", async () => {
    for (const query of ['', '?start=0&pageSize=1000', '?start=1&pageSize=1']) {
      const reply = await adminA.call('GET', `/control/tenants/globex/principals${query}`);
      expect({ query, got: answerOf(reply) }).toEqual({ query, got: [403, 'Forbidden'] });
      expect(reply.json).not.toHaveProperty('principals');
      expect(reply.json).not.toHaveProperty('total');
    }
  });

  it('are refused past the page bound and at offsets no database takes, with the limit named', async () => {
    const tooBig = await adminA.call('GET', '/control/principals?pageSize=1000000000');
    expect(answerOf(tooBig)).toEqual([400, 'InvalidRequest']);
    expect(tooBig.json.detail).toContain('pageSize is at most 1000');
    for (const query of ['start=1e20', 'start=-1', 'start=NaN', 'pageSize=0', 'pageSize=2&pageSize=3']) {
      const reply = await adminA.call('GET', `/control/principals?${query}`);
      expect({ query, got: answerOf(reply) }).toEqual({ query, got: [400, 'InvalidRequest'] });
    }
    // Still answering, as before.
    const page = await adminA.call('GET', '/control/principals?start=0&pageSize=1');
    expect(page.status).toBe(200);
    expect(page.json).toMatchObject({ total: 2, start: 0, pageSize: 1 });
  });

  it('are not listed to a principal who is not a tenant admin, in any page', async () => {
    for (const query of ['', '?start=0&pageSize=1', '?pageSize=1000']) {
      const reply = await readerA.call('GET', `/control/principals${query}`);
      expect({ query, got: answerOf(reply) }).toEqual({ query, got: [403, 'Forbidden'] });
    }
  });
});
