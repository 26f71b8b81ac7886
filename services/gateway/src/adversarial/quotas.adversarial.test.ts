// Attacks on a tenant's quotas and on the gateway's connections to it, end to end through the real gateway
// over mutual TLS, a real host and real tenant processes (README.md beside this file):
// - one long write (a bulk insert) meant to store far more than the storage quota in one request;
// - a tenant over its quota must still be able to free space (deletes, index drops and resets, database
//   deletion, sweeps), or it is locked out for good;
// - slow requests of one class (queries whose answers are never read) meant to take every connection the
//   gateway holds to the tenant, so that nothing else of the tenant's gets through.
import { randomBytes } from 'node:crypto';
import { STORAGE_QUOTA_HEADER } from '@rookery/protocol';
import { type Dispatcher, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { HostClient } from '../host-client.js';
import { createLargeDocuments } from '../test-fixtures/large-documents.js';
import { type Client, type Stack, startStack, TOKEN } from '../test-fixtures/stack.js';

const MiB = 1024 * 1024;
/** The gateway's connections to one tenant in this suite, and what each slow class may hold of them. */
const TENANT_CONNECTIONS = 5;
const QUERIES_PER_TENANT = 2;
/** Queries that may wait for a place over that limit; a wait never times out in this suite. */
const QUEUED_PER_TENANT = 1;

let stack: Stack;
let hosts: HostClient;

beforeAll(async () => {
  stack = await startStack({
    tenantConnections: TENANT_CONNECTIONS,
    liveLimits: {
      streamsPerTenant: 1,
      queriesPerTenant: QUERIES_PER_TENANT,
      bulkPerTenant: 1,
      queuedPerTenant: QUEUED_PER_TENANT,
      queueWaitMs: 600_000,
    },
  });
  hosts = new HostClient(stack.hostUrl, TOKEN);
}, 120_000);
afterAll(async () => {
  await stack?.close();
});

const ndjson = { 'content-type': 'application/x-ndjson' };
const user = (name: string) => ({ Name: name, '@metadata': { '@collection': 'Users' } });

/** `count` documents of ~2 KB of incompressible text each, as bulk insert lines. */
function incompressibleLines(count: number): string {
  const lines: string[] = [];
  for (let i = 0; i < count; i++) {
    const Text = randomBytes(1_500).toString('base64');
    lines.push(
      JSON.stringify({ Id: `rows/${i}`, Document: { Text, '@metadata': { '@collection': 'Rows' } } }),
    );
  }
  return `${lines.join('\n')}\n`;
}

describe('storage quota', () => {
  it('stops a bulk insert with 507 after the last chunk that fits, reporting what it stored', async () => {
    const quota = 12 * MiB;
    const admin = await stack.tenantAdmin(
      { id: 'bulky', name: 'Bulky', quota: { requestsPerSecond: 1000, storageBytes: quota } },
      'bulky-admin',
    );
    await stack.running('bulky');
    expect((await admin.call('PUT', '/admin/databases', { Name: 'load' })).status).toBe(201);
    // ~48 MB in one request, four times the quota: admitted, since the tenant stores almost nothing yet.
    // The client also tries to name a quota of its own for the tenant to hold it to: the gateway drops it.
    const count = 24_000;
    const reply = await admin.call('POST', '/databases/load/bulk_insert', incompressibleLines(count), {
      ...ndjson,
      [STORAGE_QUOTA_HEADER]: String(2 ** 50),
    });
    expect(reply.status).toBe(200);
    const lines = reply.text
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line) as Record<string, unknown>);
    const last = lines.at(-1)!;
    expect(last.Type).toBe('Failed');
    expect(last.Error).toMatchObject({
      status: 507,
      code: 'StorageQuotaExceeded',
      limit: 'storageBytes',
      value: quota,
    });
    const processed = last.Processed as number;
    expect(processed).toBeGreaterThan(0);
    expect(processed).toBeLessThan(count);
    // What it reports is what is stored: every document of the chunks that fit, none after.
    const stats = await admin.call('GET', '/databases/load/stats');
    expect(stats.json.CountOfDocuments).toBe(processed);
    expect((await admin.call('GET', `/databases/load/docs?id=rows/${processed - 1}`)).status).toBe(200);
    expect((await admin.call('GET', `/databases/load/docs?id=rows/${processed}`)).status).toBe(404);
    // At most one chunk (2,000 documents, ~4 MB, counted twice while it is in the WAL) past the quota,
    // not the 48 MB sent.
    const stored = (await hosts.storageOf('bulky'))!.bytes;
    expect(stored).toBeLessThan(2 * quota);
    // The next write is refused at the gateway, and the bulk insert refused before storing anything.
    const next = await admin.call('POST', '/databases/load/bulk_insert', incompressibleLines(10), ndjson);
    expect([next.status, next.json.code]).toEqual([507, 'StorageQuotaExceeded']);
  }, 180_000);

  it('lets a tenant over its quota free space, and refuses only what would grow it', async () => {
    const admin = await stack.tenantAdmin(
      { id: 'freeing', name: 'Freeing', quota: { requestsPerSecond: 1000, storageBytes: 1 << 30 } },
      'freeing-admin',
    );
    await stack.running('freeing');
    for (const name of ['keep', 'drop'])
      expect((await admin.call('PUT', '/admin/databases', { Name: name })).status).toBe(201);
    for (const id of ['users/1', 'users/2', 'users/3', 'users/4'])
      expect((await admin.call('PUT', `/databases/keep/docs?id=${id}`, user(id))).status).toBe(201);
    for (const name of ['ByName', 'ByName2'])
      expect(
        (
          await admin.call('PUT', '/databases/keep/indexes', {
            Name: name,
            Maps: [{ Collection: 'Users', Fields: { Name: 'Name' } }],
          })
        ).status,
      ).toBe(201);
    await stack.store.updateQuota('freeing', { storageBytes: 1 });

    const refused: Array<[string, string, unknown?, Record<string, string>?]> = [
      ['PUT', '/databases/keep/docs?id=users/9', user('nine')],
      [
        'POST',
        '/databases/keep/bulk_docs',
        { Commands: [{ Type: 'PUT', Id: 'users/9', Document: user('nine') }] },
      ],
      [
        'POST',
        '/databases/keep/bulk_docs',
        {
          Commands: [
            { Type: 'DELETE', Id: 'users/1' },
            { Type: 'PUT', Id: 'users/9', Document: user('nine') },
          ],
        },
      ],
      ['POST', '/databases/keep/bulk_insert', incompressibleLines(1), ndjson],
      ['PUT', '/admin/databases', { Name: 'more' }],
      [
        'PUT',
        '/databases/keep/indexes',
        { Name: 'More', Maps: [{ Collection: 'Users', Fields: { N: 'Name' } }] },
      ],
    ];
    for (const [method, path, body, headers] of refused) {
      const reply = await admin.call(method, path, body, headers);
      expect([reply.status, reply.json.code, reply.json.limit], `${method} ${path}`).toEqual([
        507,
        'StorageQuotaExceeded',
        'storageBytes',
      ]);
    }
    // The mixed batch was refused whole: users/1 is still there.
    expect((await admin.call('GET', '/databases/keep/docs?id=users/1')).status).toBe(200);

    const freeing: Array<[string, string, unknown, number]> = [
      ['DELETE', '/databases/keep/docs?id=users/1', undefined, 204],
      ['POST', '/databases/keep/bulk_docs', { Commands: [{ Type: 'DELETE', Id: 'users/2' }] }, 201],
      ['POST', '/databases/keep/indexes/reset?name=ByName2', undefined, 200],
      ['DELETE', '/databases/keep/indexes?name=ByName', undefined, 204],
      ['POST', '/databases/keep/admin/sweep', {}, 200],
      ['DELETE', '/admin/databases?name=drop', undefined, 204],
    ];
    for (const [method, path, body, status] of freeing) {
      const reply = await admin.call(method, path, body);
      expect(reply.status, `${method} ${path}: ${reply.text}`).toBe(status);
    }
    expect((await admin.call('GET', '/databases/keep/docs?id=users/2')).status).toBe(404);
    expect((await admin.call('GET', '/databases')).json.Databases).toEqual(['keep']);
  }, 120_000);
});

describe("the gateway's connections to a tenant", () => {
  let admin: Client;

  beforeAll(async () => {
    admin = await stack.tenantAdmin({ id: 'crowded', name: 'Crowded' }, 'crowded-admin');
    await stack.running('crowded');
    // ~33 MB of documents: a query over all of them answers more than the socket buffers between the
    // tenant and a client that stops reading, so such a query holds its connection to the tenant.
    await createLargeDocuments(admin, {
      database: 'big',
      collection: 'Rows',
      count: 5_000,
      textBytes: 6_600,
    });
    expect((await admin.call('PUT', '/databases/big/docs?id=users/1', user('Ada'))).status).toBe(201);
  }, 180_000);

  /** A query over every row whose reader takes the first bytes of the answer and stops: it stays in flight. */
  async function slowQuery(): Promise<Dispatcher.ResponseData> {
    const response = await request(`${stack.gateway.url}/databases/big/queries`, {
      method: 'POST',
      dispatcher: admin.agent,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ Query: 'from Rows limit 5000' }),
    });
    if (response.statusCode === 200) await response.body[Symbol.asyncIterator]().next();
    return response;
  }

  it('keeps slow queries from taking every connection: point reads and admin requests still answer', async () => {
    // As many slow queries as the gateway has connections to the tenant: the limit's are held, the queue's
    // wait for a place, the rest are refused at once.
    const pending = Array.from({ length: TENANT_CONNECTIONS }, () => slowQuery());
    const settled: Dispatcher.ResponseData[] = [];
    for (const query of pending) void query.then((response) => settled.push(response));
    await expect.poll(() => settled.length, { timeout: 60_000 }).toBe(TENANT_CONNECTIONS - QUEUED_PER_TENANT);
    const held = settled.filter((q) => q.statusCode === 200);
    const refused = settled.filter((q) => q.statusCode !== 200);
    expect(held).toHaveLength(QUERIES_PER_TENANT);
    for (const response of refused) {
      const problem = (await response.body.json()) as Record<string, unknown>;
      expect([response.statusCode, problem.code, problem.limit, problem.value]).toEqual([
        429,
        'TooManyRequestsInFlight',
        'queriesPerTenant',
        QUERIES_PER_TENANT,
      ]);
      expect(problem.detail).toMatch(
        /ROOKERY_GATEWAY_MAX_QUEUED_PER_TENANT.*ROOKERY_GATEWAY_MAX_QUERIES_PER_TENANT/s,
      );
      expect(Number(response.headers['retry-after'])).toBeGreaterThanOrEqual(1);
    }
    // The held queries still hold their connections, and the tenant's cheap requests are answered.
    expect((await admin.call('GET', '/databases/big/docs?id=users/1')).status).toBe(200);
    expect((await admin.call('PUT', '/databases/big/docs?id=users/2', user('Grace'))).status).toBe(201);
    expect((await admin.call('GET', '/databases')).status).toBe(200);
    expect((await admin.call('GET', '/databases/big/stats')).status).toBe(200);

    // The waiting query gets the place a held one gives back when its reader leaves.
    held[0]?.body.destroy();
    await expect.poll(() => settled.length, { timeout: 60_000 }).toBe(TENANT_CONNECTIONS);
    const waited = settled.at(-1) as Dispatcher.ResponseData;
    expect(waited.statusCode).toBe(200);
    for (const response of [...held, waited]) response.body.destroy();
    // Places are given back when the readers leave.
    await expect
      .poll(
        async () => (await admin.call('POST', '/databases/big/queries', { Query: 'from Users' })).status,
        {
          timeout: 20_000,
        },
      )
      .toBe(200);
  }, 120_000);
});
