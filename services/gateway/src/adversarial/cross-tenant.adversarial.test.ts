// Reaching another tenant's data by the path: the other tenant named outright, in other cases, percent-
// encoded once or twice, behind dot segments (raw, encoded, with backslashes), through an encoded
// slash in a database name, and through the control API's /control/tenants/{id}/…. Every request is
// written byte for byte on a raw mutual-TLS socket, so no client normalises the path first. Each
// attack must get its refusal, never globex's data, and wake no tenant that does not exist
// (README.md beside this file).
import fs from 'node:fs';
import path from 'node:path';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { rawGet } from '../test-fixtures/raw-tls.js';
import type { Client, Stack } from '../test-fixtures/stack.js';
import { startTwoTenants } from '../test-fixtures/two-tenants.js';

const SECRET = 'Grace of Globex';
const DOC = 'databases/shop/docs?id=users/1';

let stack: Stack;
let adminA: Client;
let readerA: Client;
let operator: Client;
let adminB: Client;

beforeAll(async () => {
  ({ stack, adminA, readerA, operator } = await startTwoTenants());
  adminB = await stack.program('globex-admin', 'globex');
  expect((await adminB.call('PUT', '/admin/databases', { Name: 'shop' })).status).toBe(201);
  const put = await adminB.call('PUT', `/${DOC}`, { Name: SECRET, '@metadata': { '@collection': 'Users' } });
  expect(put.status).toBe(201);
}, 120_000);
afterAll(async () => {
  await stack?.close();
});

type Expected = readonly [status: number, code: string];
const FORBIDDEN: Expected = [403, 'Forbidden'];
const NO_ROUTE: Expected = [404, 'RouteNotFound'];

/**
 * Attacks by acme's principals on globex; `[admin, reader]` answers where they differ (the reader may
 * not even name a database of its own other than `shop`).
 */
const ATTACKS: readonly [path: string, answer: Expected | readonly [admin: Expected, reader: Expected]][] = [
  [`/tenants/globex/${DOC}`, FORBIDDEN],
  [`/tenants/GLOBEX/${DOC}`, FORBIDDEN],
  [`/tenants/Globex/${DOC}`, FORBIDDEN],
  [`/tenants/%67lobex/${DOC}`, FORBIDDEN],
  [`/tenants/%2567lobex/${DOC}`, FORBIDDEN],
  [`/tenants/acme/../globex/${DOC}`, NO_ROUTE],
  [`/tenants/acme/%2e%2e/globex/${DOC}`, NO_ROUTE],
  [`/tenants/acme%2F..%2Fglobex/${DOC}`, FORBIDDEN],
  [`/tenants/acme%2f%2e%2e%2fglobex/${DOC}`, FORBIDDEN],
  [`/tenants/acme%252F..%252Fglobex/${DOC}`, FORBIDDEN],
  [`/tenants/acme\\..\\globex/${DOC}`, FORBIDDEN],
  [
    '/databases/..%2F..%2F..%2Fglobex%2Fdatabases%2Fshop/docs?id=users/1',
    [[400, 'InvalidDatabaseName'], FORBIDDEN],
  ],
  ['/databases/%2e%2e%2f%2e%2e%2fglobex/docs?id=users/1', [[400, 'InvalidDatabaseName'], FORBIDDEN]],
  ['/databases/%252e%252e%252fglobex/docs?id=users/1', [[400, 'InvalidDatabaseName'], FORBIDDEN]],
  [`/databases/shop/../../tenants/globex/${DOC}`, NO_ROUTE],
  [`/databases/shop/%2e%2e/%2e%2e/tenants/globex/${DOC}`, NO_ROUTE],
  [`//tenants/globex/${DOC}`, NO_ROUTE],
  [`/TENANTS/globex/${DOC}`, NO_ROUTE],
  [`/tenants//globex/${DOC}`, NO_ROUTE],
  [`https://localhost/tenants/globex/${DOC}`, NO_ROUTE],
  ['/control/tenants/globex/principals', FORBIDDEN],
  ['/control/tenants/GLOBEX/principals', FORBIDDEN],
  ['/control/tenants/%67lobex/principals', FORBIDDEN],
  ['/control/tenants/acme/../globex/principals', NO_ROUTE],
  ['/control/tenants/acme%2F..%2Fglobex/principals', FORBIDDEN],
  [`/control/../tenants/globex/${DOC}`, NO_ROUTE],
];

async function answerOf(client: Client, requestPath: string): Promise<[number, string | undefined]> {
  const answer = await rawGet(stack, client, requestPath);
  expect(answer.statuses, requestPath).toHaveLength(1);
  expect(answer.text, requestPath).not.toContain(SECRET);
  return [answer.statuses[0]!, /"code":"(\w+)"/.exec(answer.text)?.[1]];
}

describe("another tenant's data by the path", () => {
  it("refuses every spelling of globex's routes to acme's tenant admin and to its read-only principal", async () => {
    for (const [requestPath, answer] of ATTACKS) {
      const [admin, reader] = typeof answer[0] === 'number' ? [answer, answer] : answer;
      expect({ requestPath, got: await answerOf(adminA, requestPath) }).toEqual({
        requestPath,
        got: admin,
      });
      expect({ requestPath, got: await answerOf(readerA, requestPath) }).toEqual({
        requestPath,
        got: reader,
      });
    }
  });

  it('gives an operator globex by its id only: other cases, double encoding and dot segments do not alias it', async () => {
    // An operator may read globex (a single %67 decodes to the id itself, as the tenant's router reads it).
    for (const requestPath of [`/tenants/globex/${DOC}`, `/tenants/%67lobex/${DOC}`]) {
      const answer = await rawGet(stack, operator, requestPath);
      expect(answer.statuses).toEqual([200]);
      expect(answer.text).toContain(SECRET);
    }
    const refused: [string, Expected][] = [
      [`/tenants/GLOBEX/${DOC}`, FORBIDDEN],
      [`/tenants/Globex/${DOC}`, FORBIDDEN],
      [`/tenants/%2567lobex/${DOC}`, FORBIDDEN],
      [`/tenants/acme/../globex/${DOC}`, NO_ROUTE],
      [`/tenants/acme%2F..%2Fglobex/${DOC}`, FORBIDDEN],
      [`/TENANTS/globex/${DOC}`, NO_ROUTE],
      ['/control/tenants/GLOBEX/principals', [404, 'TenantNotFound']],
      ['/control/tenants/acme%2F..%2Fglobex/principals', [404, 'TenantNotFound']],
    ];
    for (const [requestPath, answer] of refused) {
      expect({ requestPath, got: await answerOf(operator, requestPath) }).toEqual({
        requestPath,
        got: answer,
      });
    }
  });

  it("leaves globex's data as it was and wakes no tenant but the two that exist", async () => {
    const b = await adminB.call('GET', `/${DOC}`);
    expect(b.status).toBe(200);
    expect(b.text).toContain(SECRET);
    expect(fs.readdirSync(path.join(stack.dir, 'tenants')).sort()).toEqual(['acme', 'globex']);
  });
});
