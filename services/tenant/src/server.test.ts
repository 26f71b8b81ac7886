import { describe, expect, it } from 'vitest';
import { CHUNK_DOCUMENTS } from './bulk/line-parser.js';
import { TRANSACTION_DOCUMENTS } from './routes/bulk-insert.js';
import type { Reply } from './test-fixtures/http-client.js';
import { sharedTenantServer } from './test-fixtures/tenant-server.js';

const { call } = sharedTenantServer({
  database: 'Shop',
  config: { maxBodyBytes: 64 * 1024, maxDocumentBytes: 8 * 1024 },
});

const docs = (id: string) => `/databases/shop/docs?id=${encodeURIComponent(id)}`;
const user = (name: string, extra: Record<string, unknown> = {}) => ({
  Name: name,
  ...extra,
  '@metadata': { '@collection': 'Users' },
});

describe('documents over HTTP', () => {
  it('creates, reads case-insensitively, updates and deletes', async () => {
    const put = await call('PUT', docs('Users/1-A'), user('Ada'));
    expect(put.status).toBe(201);
    expect(put.json).toMatchObject({ Id: 'Users/1-A', Collection: 'Users' });
    expect(put.headers.get('etag')).toBe(`"${put.json.ChangeVector}"`);

    const got = await call('GET', docs('users/1-a'));
    expect(got.status).toBe(200);
    const results = got.json.Results as Array<Record<string, unknown>>;
    expect(results[0]).toMatchObject({
      Name: 'Ada',
      '@metadata': { '@id': 'Users/1-A', '@collection': 'Users' },
    });

    const del = await call('DELETE', docs('USERS/1-A'));
    expect(del.status).toBe(204);
    const gone = await call('GET', docs('users/1-a'));
    expect(gone.status).toBe(404);
    expect(gone.json.code).toBe('DocumentNotFound');
    expect(gone.headers.get('content-type')).toContain('application/problem+json');
  });

  it('loads several documents with includes, null for missing ones', async () => {
    await call('PUT', docs('companies/1'), { Name: 'Acme', '@metadata': { '@collection': 'Companies' } });
    await call('PUT', docs('employees/1'), { Name: 'E', '@metadata': { '@collection': 'Employees' } });
    await call('PUT', docs('orders/1'), {
      Company: 'companies/1',
      Lines: [{ Product: 'products/404' }, { Employee: 'employees/1' }],
      '@metadata': { '@collection': 'Orders' },
    });
    const r = await call(
      'GET',
      '/databases/shop/docs?id=orders/1&id=orders/2&include=Company&include=Lines[].Product',
    );
    expect(r.status).toBe(200);
    expect((r.json.Results as unknown[])[1]).toBeNull();
    expect(Object.keys(r.json.Includes as object).sort()).toEqual(['companies/1', 'products/404']);
    expect((r.json.Includes as Record<string, unknown>)['products/404']).toBeNull();
  });

  it('answers 304 while a document is unchanged, and 200 once it changed', async () => {
    await call('PUT', docs('users/304'), user('A'));
    const first = await call('GET', docs('users/304'));
    const tag = first.headers.get('etag')!;
    const cached = await call('GET', docs('users/304'), undefined, { 'if-none-match': tag });
    expect(cached.status).toBe(304);
    expect(cached.text).toBe('');
    await call('PUT', docs('users/304'), user('B'));
    const fresh = await call('GET', docs('users/304'), undefined, { 'if-none-match': tag });
    expect(fresh.status).toBe(200);
    expect(fresh.headers.get('etag')).not.toBe(tag);

    const withInclude = await call('GET', `${docs('orders/1')}&include=Company`);
    const again = await call('GET', `${docs('orders/1')}&include=Company`, undefined, {
      'if-none-match': withInclude.headers.get('etag')!,
    });
    expect(again.status).toBe(304);

    const stats = await call('GET', '/databases/shop/stats');
    expect(
      (await call('GET', '/databases/shop/stats', undefined, { 'if-none-match': stats.headers.get('etag')! }))
        .status,
    ).toBe(304);
  });

  it('enforces If-Match with 409 ConcurrencyConflict naming both versions', async () => {
    const v1 = await call('PUT', docs('users/cc'), user('A'));
    const v2 = await call('PUT', docs('users/cc'), user('B'), { 'if-match': `"${v1.json.ChangeVector}"` });
    expect(v2.status).toBe(201);
    const stale = await call('PUT', docs('users/cc'), user('C'), { 'if-match': `"${v1.json.ChangeVector}"` });
    expect(stale.status).toBe(409);
    expect(stale.json).toMatchObject({
      code: 'ConcurrencyConflict',
      id: 'users/cc',
      expectedChangeVector: v1.json.ChangeVector,
      actualChangeVector: v2.json.ChangeVector,
    });
    const staleDelete = await call('DELETE', docs('users/cc'), undefined, {
      'if-match': `${v1.json.ChangeVector}`,
    });
    expect(staleDelete.status).toBe(409);
  });
});

describe('batches, HiLo and stats', () => {
  it('applies a batch all-or-nothing', async () => {
    const ok = await call('POST', '/databases/shop/bulk_docs', {
      Commands: [
        { Type: 'PUT', Id: 'batch/1', Document: { A: 1 } },
        { Type: 'PATCH', Id: 'batch/1', Patch: { Operations: [{ Op: 'increment', Path: 'A', By: 41 }] } },
      ],
    });
    expect(ok.status).toBe(201);
    expect((ok.json.Results as unknown[]).length).toBe(2);
    const bad = await call('POST', '/databases/shop/bulk_docs', {
      Commands: [
        { Type: 'PUT', Id: 'batch/2', Document: { A: 2 } },
        { Type: 'DELETE', Id: 'batch/1', ChangeVector: 'A:1-stale' },
      ],
    });
    expect(bad.status).toBe(409);
    expect((await call('GET', docs('batch/2'))).status).toBe(404);
    const kept = await call('GET', docs('batch/1'));
    expect((kept.json.Results as Array<{ A: number }>)[0]!.A).toBe(42);
  });

  it('hands out HiLo ranges and reports stats', async () => {
    const a = await call('GET', '/databases/shop/hilo/next?tag=users');
    const b = await call('GET', '/databases/shop/hilo/next?tag=users');
    expect(a.json).toMatchObject({ Prefix: 'users/', Low: 1, High: 32 });
    expect(b.json).toMatchObject({ Low: 33, High: 64 });
    const generated = await call('PUT', docs('users/'), user('Gen'));
    expect(generated.json.Id).toBe('users/65-A');
    const stats = await call('GET', '/databases/shop/stats');
    expect(stats.json).toMatchObject({ DatabaseName: 'Shop' });
    expect((stats.json.Collections as Record<string, number>).Users).toBeGreaterThan(0);
  });
});

describe('bulk insert', () => {
  const line = (i: number) =>
    JSON.stringify({ Id: `bulk/${i}`, Document: { N: i, '@metadata': { '@collection': 'Bulk' } } });
  const ndjson = { 'content-type': 'application/x-ndjson' };
  const progressLines = (text: string) =>
    text
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l) as Record<string, unknown>);

  it('streams documents in and reports progress per committed chunk', async () => {
    const body = Array.from({ length: 12_000 }, (_, i) => line(i)).join('\n');
    const r = await call('POST', '/databases/shop/bulk_insert', body, ndjson);
    expect(r.status).toBe(200);
    const lines = progressLines(r.text);
    // A progress line per transaction: one chunk of CHUNK_DOCUMENTS, or several parsed while one was stored.
    const progress = lines.filter((l) => l.Type === 'Progress').map((l) => Number(l.Processed));
    expect(progress.at(-1)).toBe(12_000);
    expect(progress.every((n, i) => n % CHUNK_DOCUMENTS === 0 && n > (progress[i - 1] ?? 0))).toBe(true);
    expect(lines.at(-1)).toMatchObject({ Type: 'Completed', Processed: 12_000, Batches: progress.length });
    const stats = await call('GET', '/databases/shop/stats');
    expect((stats.json.Collections as Record<string, number>).Bulk).toBe(12_000);
  });

  it('gathers parsed chunks into transactions of TRANSACTION_DOCUMENTS, the rest in the last one', async () => {
    const body = Array.from({ length: 25_000 }, (_, i) => line(500_000 + i)).join('\n');
    const r = await call('POST', '/databases/shop/bulk_insert', body, ndjson);
    const lines = progressLines(r.text);
    // Far below the parse thread's backlog bound: nothing makes the request thread store sooner.
    expect(lines.filter((l) => l.Type === 'Progress').map((l) => l.Processed)).toEqual([
      TRANSACTION_DOCUMENTS,
      2 * TRANSACTION_DOCUMENTS,
      25_000,
    ]);
    expect(lines.at(-1)).toMatchObject({ Type: 'Completed', Processed: 25_000, Batches: 3 });
  });

  it('stores a body larger than the parse thread may hold unparsed (the request thread waits for it)', async () => {
    const pad = 'p'.repeat(1_000);
    const body = Array.from({ length: 20_000 }, (_, i) =>
      JSON.stringify({ Id: `padded/${i}`, Document: { Pad: pad, '@metadata': { '@collection': 'Padded' } } }),
    ).join('\n');
    expect(body.length).toBeGreaterThan(16 * 1024 * 1024);
    const r = await call('POST', '/databases/shop/bulk_insert', body, ndjson);
    expect(progressLines(r.text).at(-1)).toMatchObject({ Type: 'Completed', Processed: 20_000 });
    expect((await call('GET', docs('padded/19999'))).status).toBe(200);
  });

  it('stores everything before a bad line and nothing after it', async () => {
    const body = [
      ...Array.from({ length: 6000 }, (_, i) => line(100_000 + i)),
      '{"Id": "bulk/bad", "Document": [1]}',
      line(200_000),
    ].join('\n');
    const r = await call('POST', '/databases/shop/bulk_insert', body, ndjson);
    const last = progressLines(r.text).at(-1)!;
    expect(last).toMatchObject({
      Type: 'Failed',
      Processed: 6000,
      Error: { code: 'InvalidRequest', Processed: 6000 },
    });
    expect(String((last.Error as Record<string, unknown>).detail)).toContain('Line 6001');
    expect((await call('GET', docs('bulk/105999'))).status).toBe(200);
    expect((await call('GET', docs('bulk/200000'))).status).toBe(404);
  });

  it('stops at a chunk that cannot be stored: nothing after it is stored either', async () => {
    const here = { '@metadata': { '@collection': 'Here' } };
    expect((await call('PUT', docs('moving/1'), here)).status).toBe(201);
    const body = [
      // In the first chunk: the transaction that stores it fails, and nothing before or after it is stored.
      ...Array.from({ length: 1_000 }, (_, i) => line(300_000 + i)),
      JSON.stringify({ Id: 'moving/1', Document: { '@metadata': { '@collection': 'There' } } }),
      ...Array.from({ length: 3_000 }, (_, i) => line(400_000 + i)),
    ].join('\n');
    const r = await call('POST', '/databases/shop/bulk_insert', body, ndjson);
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ code: 'CollectionChangeNotAllowed', Processed: 0 });
    expect((await call('GET', docs('bulk/300000'))).status).toBe(404);
    expect((await call('GET', docs('bulk/400000'))).status).toBe(404);
  });

  it('answers a failure before the first commit with a plain 4xx', async () => {
    const r = await call('POST', '/databases/shop/bulk_insert', `${line(1)}\nnot json\n`, ndjson);
    expect(r.status).toBe(400);
    expect(r.json).toMatchObject({ code: 'InvalidJson', Processed: 1 });
    const escaped = await call(
      'POST',
      '/databases/shop/bulk_insert',
      '{"Id": "p/1", "Document": {"\\u005f_proto__": {"x": 1}}}',
      ndjson,
    );
    expect(escaped.status).toBe(400);
    expect(escaped.json.code).toBe('InvalidJson');
    const long = await call(
      'POST',
      '/databases/shop/bulk_insert',
      JSON.stringify({ Id: 'x/1', Document: { S: 'x'.repeat(9000) } }),
      ndjson,
    );
    expect(long.status).toBe(413);
    expect(long.json.code).toBe('PayloadTooLarge');
  });
});

describe('bad input gets a 4xx with a code and leaves data intact', () => {
  it('refuses every malformed request', async () => {
    const before = await call('GET', '/databases/shop/stats');
    const cases: Array<[string, () => Promise<Reply>, number, string]> = [
      ['missing database', () => call('GET', '/databases/nope/docs?id=a'), 404, 'DatabaseNotFound'],
      [
        'invalid database name',
        () => call('GET', '/databases/..%2Fetc/docs?id=a'),
        400,
        'InvalidDatabaseName',
      ],
      [
        'duplicate database',
        () => call('PUT', '/admin/databases', { Name: 'shop' }),
        409,
        'DatabaseAlreadyExists',
      ],
      [
        'bad database definition',
        () => call('PUT', '/admin/databases', { Name: 'a b' }),
        400,
        'InvalidRequest',
      ],
      ['malformed JSON', () => call('PUT', docs('users/x'), '{"Name": '), 400, 'InvalidJson'],
      [
        'empty body',
        () => call('PUT', docs('users/x'), '', { 'content-type': 'application/json' }),
        400,
        'InvalidJson',
      ],
      [
        'prototype pollution',
        () => call('PUT', docs('users/x'), '{"__proto__": {"admin": true}}'),
        400,
        'InvalidJson',
      ],
      ['array instead of object', () => call('PUT', docs('users/x'), [1, 2]), 400, 'InvalidRequest'],
      [
        'wrong metadata type',
        () => call('PUT', docs('users/x'), { '@metadata': { '@collection': 5 } }),
        400,
        'InvalidMetadata',
      ],
      ['missing id', () => call('GET', '/databases/shop/docs'), 400, 'InvalidRequest'],
      ['control character in id', () => call('PUT', docs('users/\u0001'), {}), 400, 'InvalidRequest'],
      ['id too long', () => call('PUT', docs(`users/${'x'.repeat(600)}`), {}), 400, 'InvalidRequest'],
      ['generated id without prefix', () => call('PUT', docs('/'), {}), 400, 'InvalidId'],
      [
        'body too large',
        () => call('PUT', docs('users/x'), { S: 'x'.repeat(70 * 1024) }),
        413,
        'PayloadTooLarge',
      ],
      [
        'wrong content type',
        () => call('PUT', docs('users/x'), 'Name=x', { 'content-type': 'text/plain' }),
        415,
        'UnsupportedMediaType',
      ],
      [
        'empty batch',
        () => call('POST', '/databases/shop/bulk_docs', { Commands: [] }),
        400,
        'InvalidRequest',
      ],
      [
        'unknown command',
        () => call('POST', '/databases/shop/bulk_docs', { Commands: [{ Type: 'DROP', Id: 'a' }] }),
        400,
        'InvalidRequest',
      ],
      [
        'patch with __proto__ path',
        () =>
          call('POST', '/databases/shop/bulk_docs', {
            Commands: [
              {
                Type: 'PATCH',
                Id: 'batch/1',
                Patch: { Operations: [{ Op: 'set', Path: '__proto__.x', Value: 1 }] },
              },
            ],
          }),
        400,
        'InvalidRequest',
      ],
      [
        'patch of a missing document',
        () =>
          call('POST', '/databases/shop/bulk_docs', {
            Commands: [{ Type: 'PATCH', Id: 'nope/1', Patch: { Merge: {} } }],
          }),
        404,
        'DocumentNotFound',
      ],
      ['bad HiLo tag', () => call('GET', '/databases/shop/hilo/next?tag=a/b'), 400, 'InvalidRequest'],
      [
        // JSON is RavenDB's bulk insert, one array of commands (routes/ravendb/bulk-array.ts): an object is not.
        'bulk insert as JSON, not an array',
        () => call('POST', '/databases/shop/bulk_insert', { Id: 'a' }),
        400,
        'InvalidJson',
      ],
      ['unknown route', () => call('GET', '/nothing-here'), 404, 'RouteNotFound'],
    ];
    for (const [name, send, status, code] of cases) {
      const reply = await send();
      expect({ name, status: reply.status, code: reply.json.code }, reply.text).toEqual({
        name,
        status,
        code,
      });
      expect(reply.json.detail, `${name} explains itself`).toBeTruthy();
    }
    const after = await call('GET', '/databases/shop/stats');
    expect(after.json.LastDocEtag).toBe(before.json.LastDocEtag);
    expect(after.json.Collections).toEqual(before.json.Collections);
  });
});
