// /usage carries the tenant's storage against its quota: the bytes its files take on disk, as the host
// measures them for the storage quota (without waking the tenant), and the quota's storageBytes.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Client, type Stack, startStack } from './test-fixtures/stack.js';

let stack: Stack;
let admin: Client;

beforeAll(async () => {
  stack = await startStack();
  admin = await stack.tenantAdmin({ id: 'acme', name: 'Acme', quota: { storageBytes: 50_000_000 } }, 'ops');
  await stack.running('acme');
}, 120_000);
afterAll(async () => stack?.close());

describe('GET /usage', () => {
  it("answers the tenant's storage on disk and its storage quota", async () => {
    expect((await admin.call('PUT', '/admin/databases', { Name: 'shop' })).status).toBe(201);
    const put = await admin.call('PUT', '/databases/shop/docs?id=a', { Text: 'x'.repeat(100_000) });
    expect(put.status).toBe(201);
    const usage = await admin.call('GET', '/usage');
    expect(usage.status).toBe(200);
    const storage = usage.json.Storage as { Bytes: number; QuotaBytes: number };
    expect(storage.QuotaBytes).toBe(50_000_000);
    expect(storage.Bytes).toBeGreaterThan(100_000);
    expect(storage.Bytes).toBeLessThan(50_000_000);
  });

  it("answers an operator the named tenant's storage", async () => {
    const operator = await stack.program('ops-global', null, { kind: 'operator' });
    const usage = await operator.call('GET', '/usage?tenant=acme');
    expect(usage.status).toBe(200);
    expect(usage.json.Storage).toMatchObject({ QuotaBytes: 50_000_000 });
  });
});
