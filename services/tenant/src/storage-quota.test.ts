// The tenant's side of the storage quota the gateway forwards (x-rookery-storage-quota), against a real
// tenant server on a temporary directory: a bulk insert held to it chunk by chunk, a batch refused at it
// unless it only deletes. The gateway's side, end to end: services/gateway/src/adversarial/quotas.adversarial.test.ts.
import { randomBytes } from 'node:crypto';
import { STORAGE_QUOTA_HEADER } from '@rookery/protocol';
import { describe, expect, it } from 'vitest';
import { sharedTenantServer } from './test-fixtures/tenant-server.js';

const { call } = sharedTenantServer({ database: 'shop' });

const MiB = 1024 * 1024;
const user = (name: string) => ({ Name: name, '@metadata': { '@collection': 'Users' } });

/** Bulk insert lines of ~2 KB of incompressible text each: a chunk of 2,000 is ~4 MB. */
function lines(prefix: string, count: number): string {
  const out: string[] = [];
  for (let i = 0; i < count; i++) {
    const Text = randomBytes(1_500).toString('base64');
    out.push(
      JSON.stringify({ Id: `${prefix}/${i}`, Document: { Text, '@metadata': { '@collection': 'Rows' } } }),
    );
  }
  return `${out.join('\n')}\n`;
}

const bulkInsert = (body: string, quota: number) =>
  call('POST', '/databases/shop/bulk_insert', body, {
    'content-type': 'application/x-ndjson',
    [STORAGE_QUOTA_HEADER]: String(quota),
  });

describe('bulk insert under a storage quota', () => {
  it('stores the chunks that fit and stops with 507 at the first that does not, saying what it stored', async () => {
    // The first chunk of 2,000 (~4 MB) fits in 6 MiB; once it is stored, the tenant holds at least its
    // 4 MB, and the second does not.
    const reply = await bulkInsert(lines('rows', 6_000), 6 * MiB);
    expect(reply.status).toBe(200);
    const last = JSON.parse(reply.text.trim().split('\n').at(-1)!) as Record<string, unknown>;
    expect(last).toMatchObject({ Type: 'Failed', Processed: 2_000, Batches: 1 });
    expect(last.Error).toMatchObject({
      status: 507,
      code: 'StorageQuotaExceeded',
      limit: 'storageBytes',
      value: 6 * MiB,
      Processed: 2_000,
    });
    expect(String((last.Error as Record<string, unknown>).detail)).toMatch(
      /stored 2000 documents, the ones before "rows\/2000".*raise the quota of 6291456 bytes/,
    );
    expect((await call('GET', '/databases/shop/docs?id=rows/1999')).status).toBe(200);
    expect((await call('GET', '/databases/shop/docs?id=rows/2000')).status).toBe(404);
  });

  it('answers a plain 507 when not even the first chunk fits, storing nothing', async () => {
    const reply = await bulkInsert(lines('none', 10), 1);
    expect([reply.status, reply.json.code, reply.json.Processed]).toEqual([507, 'StorageQuotaExceeded', 0]);
    expect((await call('GET', '/databases/shop/docs?id=none/0')).status).toBe(404);
  });

  it('is not held to any quota when none is forwarded (a worker, a direct call)', async () => {
    const reply = await call('POST', '/databases/shop/bulk_insert', lines('free', 10), {
      'content-type': 'application/x-ndjson',
    });
    expect(reply.text).toContain('"Completed"');
  });
});

describe('a batch at the storage quota', () => {
  const batch = (commands: unknown[], quota: string) =>
    call('POST', '/databases/shop/bulk_docs', { Commands: commands }, { [STORAGE_QUOTA_HEADER]: quota });

  it('is refused whole unless it only deletes', async () => {
    for (const id of ['users/1', 'users/2'])
      expect((await call('PUT', `/databases/shop/docs?id=${id}`, user(id))).status).toBe(201);
    const put = await batch([{ Type: 'PUT', Id: 'users/3', Document: user('3') }], '1');
    expect([put.status, put.json.code, put.json.limit, put.json.value]).toEqual([
      507,
      'StorageQuotaExceeded',
      'storageBytes',
      1,
    ]);
    const mixed = await batch(
      [
        { Type: 'DELETE', Id: 'users/1' },
        { Type: 'PATCH', Id: 'users/2', Patch: { Merge: { Name: 'x' } } },
      ],
      '1',
    );
    expect(mixed.status).toBe(507);
    expect((await call('GET', '/databases/shop/docs?id=users/1')).status).toBe(200);

    const deletes = await batch(
      [
        { Type: 'DELETE', Id: 'users/1' },
        { Type: 'DELETE', Id: 'users/2' },
      ],
      '1',
    );
    expect(deletes.status).toBe(201);
    expect((await call('GET', '/databases/shop/docs?id=users/1')).status).toBe(404);
    // Under the quota, anything goes.
    expect((await batch([{ Type: 'PUT', Id: 'users/3', Document: user('3') }], String(1 << 30))).status).toBe(
      201,
    );
  });

  it('refuses a quota that is not whole bytes with a 400', async () => {
    const reply = await batch([{ Type: 'DELETE', Id: 'users/9' }], 'lots');
    expect([reply.status, reply.json.code]).toEqual([400, 'InvalidRequest']);
    expect(reply.json.detail).toMatch(/x-rookery-storage-quota must be whole bytes/);
  });
});

describe('any other write at the storage quota', () => {
  // The gateway refuses these itself, from stored bytes it caches for 10 s: the tenant's own check closes
  // that window, so a tenant that just filled its quota cannot add a 30 MB document per request meanwhile.
  it('is refused with 507 when it comes with the quota, and passes without one', async () => {
    const put = await call('PUT', '/databases/shop/docs?id=big/1', user('x'), {
      [STORAGE_QUOTA_HEADER]: '1',
    });
    expect([put.status, put.json.code, put.json.limit, put.json.value]).toEqual([
      507,
      'StorageQuotaExceeded',
      'storageBytes',
      1,
    ]);
    expect((await call('GET', '/databases/shop/docs?id=big/1')).status).toBe(404);
    const index = await call(
      'PUT',
      '/databases/shop/indexes',
      { Name: 'ByName', Maps: [{ Collection: 'Users', Fields: { Name: 'Name' } }] },
      { [STORAGE_QUOTA_HEADER]: '1' },
    );
    expect(index.status).toBe(507);
    expect((await call('PUT', '/databases/shop/docs?id=big/1', user('x'))).status).toBe(201);
    expect(
      (
        await call('PUT', '/databases/shop/docs?id=big/2', user('y'), {
          [STORAGE_QUOTA_HEADER]: String(1 << 30),
        })
      ).status,
    ).toBe(201);
  });
});
