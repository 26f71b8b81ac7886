// Attacks through RavenDB's wire dialect (docs/ravendb-compatibility.md), end to end through the real gateway
// over mutual TLS, README.md beside this file: requests shaped as the official `ravendb` client shapes them
// (with its Raven-Client-Version header), but hostile — malformed dates and TimeSpans, index batches past the
// limit or with C# maps, a read-only principal on RavenDB's admin and HiLo paths. Each is a 4xx with a message,
// and what was stored before is intact.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client, Stack } from '../test-fixtures/stack.js';
import { startTwoTenants } from '../test-fixtures/two-tenants.js';

const RAVEN = { 'raven-client-version': '7.2.3' };

let stack: Stack;
let admin: Client;
let reader: Client;

beforeAll(async () => {
  ({ stack, adminA: admin, readerA: reader } = await startTwoTenants());
  const stored = await admin.call('PUT', '/databases/shop/docs?id=users/keep', { Name: 'Kept' });
  expect(stored.status).toBe(201);
}, 120_000);
afterAll(async () => {
  await stack?.close();
});

const index = (name: string, map: string) => ({ Name: name, Maps: [map] });

describe('RavenDB dialect attacks', () => {
  it('HiLo: malformed and out-of-range lastRangeAt are 400, never 500', async () => {
    for (const at of ['yesterday', '9999-99-99T99:99:99.9999999', '2026-01-01T00:00:00.12345678', '%00']) {
      const reply = await admin.call(
        'GET',
        `/databases/shop/hilo/next?tag=users&lastRangeAt=${at}`,
        undefined,
        RAVEN,
      );
      expect(reply.status, at).toBe(400);
      expect(reply.json).toMatchObject({
        code: 'InvalidRequest',
        Type: 'Raven.Client.Exceptions.BadRequestException',
      });
    }
  });

  it('queries: a TimeSpan past the 600 s wait limit, a negative one, a number past it: 400 naming the limit', async () => {
    for (const timeout of ['00:10:00.0000001', '23:59:59', -1, 600_001, '1e9']) {
      const reply = await admin.call(
        'POST',
        '/databases/shop/queries',
        { Query: 'from Users', WaitForNonStaleResults: true, WaitForNonStaleResultsTimeout: timeout },
        RAVEN,
      );
      expect(reply.status, String(timeout)).toBe(400);
    }
  });

  it('indexes: 33 definitions, a C# map among JavaScript ones, and a wrong shape change nothing', async () => {
    const many = Array.from({ length: 33 }, (_, i) =>
      index(`Many/${i}`, "map('Users', u => ({ Name: u.Name }))"),
    );
    const tooMany = await admin.call('PUT', '/databases/shop/admin/indexes', { Indexes: many }, RAVEN);
    expect(tooMany.status).toBe(400);

    const mixed = [
      index('Good/ByName', "map('Users', u => ({ Name: u.Name }))"),
      index('Bad/Linq', 'from u in docs.Users select new { u.Name }'),
    ];
    const linq = await admin.call('PUT', '/databases/shop/admin/indexes', { Indexes: mixed }, RAVEN);
    expect(linq.status).toBe(400);
    expect(linq.json).toMatchObject({
      code: 'InvalidIndexDefinition',
      Type: 'Raven.Client.Exceptions.Documents.Compilation.IndexCompilationException',
    });
    expect(String(linq.json.detail)).toContain('JavaScript');

    const wrong = await admin.call('PUT', '/databases/shop/indexes', { Indexes: 'everything' }, RAVEN);
    expect(wrong.status).toBe(400);

    const names = await admin.call('GET', '/databases/shop/indexes?namesOnly=true', undefined, RAVEN);
    expect(names.status).toBe(200);
    expect(names.json.Results).toEqual([]);
  });

  it('a read-only principal cannot define indexes or take and return HiLo ranges through RavenDB’s paths', async () => {
    const put = await reader.call(
      'PUT',
      '/databases/shop/admin/indexes',
      { Indexes: [index('Reader/Index', "map('Users', u => ({ Name: u.Name }))")] },
      RAVEN,
    );
    expect(put.status).toBe(403);
    const giveBack = await reader.call(
      'PUT',
      '/databases/shop/hilo/return?tag=users&end=32&last=1',
      undefined,
      RAVEN,
    );
    expect(giveBack.status).toBe(403);
  });

  it('what was stored before the attacks is intact', async () => {
    const kept = await admin.call('GET', '/databases/shop/docs?id=users/keep');
    expect(kept.status).toBe(200);
    expect(JSON.stringify(kept.json)).toContain('Kept');
  });
});
