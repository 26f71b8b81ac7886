// Index snapshots in backups (docs/mirror.md, "Index snapshots"): a backup request's `indexes` says
// whether the backup carries them. Whatever a tenant admin sends in its place — a string that reads
// like a boolean, an operator object, null, an array, a huge string — is refused at the control API
// (400 InvalidRequest; 413 PayloadTooLarge past its body limit),
// through the gateway over mutual TLS, and nothing is enqueued (README.md beside this file).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client, Stack } from '../test-fixtures/stack.js';
import { startStack } from '../test-fixtures/stack.js';

let stack: Stack;
let admin: Client;

beforeAll(async () => {
  stack = await startStack();
  admin = await stack.tenantAdmin({ id: 'acme', name: 'Acme' }, 'acme-admin');
  await stack.running('acme');
  expect((await admin.call('PUT', '/admin/databases', { Name: 'shop' })).status).toBe(201);
}, 120_000);
afterAll(async () => {
  await stack?.close();
});

const INVALID = [400, 'InvalidRequest'];
const HOSTILE: [string, unknown, unknown[]][] = [
  ['a string that reads like a boolean', 'false', INVALID],
  ['an operator object', { $ne: true }, INVALID],
  ['null', null, INVALID],
  ['an array', [false], INVALID],
  ['a number', 0, INVALID],
  // Refused before it is parsed: past the control API's body limit.
  ['a 1 MB string', 'x'.repeat(1_000_000), [413, 'PayloadTooLarge']],
];

describe('backup requests with hostile `indexes`', () => {
  it.each(HOSTILE)('%s: refused (%j), nothing enqueued', async (_what, value, expected) => {
    const answer = await admin.call('POST', '/control/backups', { database: 'shop', indexes: value });
    expect([answer.status, answer.json?.code]).toEqual(expected);
    const queued = await admin.call('GET', '/control/jobs?type=backup');
    expect(queued.status).toBe(200);
    expect(queued.json.jobs).toEqual([]);
  });

  it('a well-formed request is still taken, with the snapshots left out as asked', async () => {
    const answer = await admin.call('POST', '/control/backups', { database: 'shop', indexes: false });
    expect(answer.status).toBe(202);
    expect(answer.json.payload).toMatchObject({ database: 'shop', indexes: false });
  });
});
