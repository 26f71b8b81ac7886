// Attacks through RavenDB's wire dialect (docs/ravendb-compatibility.md), end to end through the real gateway
// over mutual TLS, README.md beside this file: requests shaped as the official `ravendb` client shapes them
// (with its Raven-Client-Version header), but hostile — malformed dates and TimeSpans, index batches past the
// limit or with C# maps, a read-only principal on RavenDB's admin and HiLo paths, bulk inserts as broken JSON
// arrays, stream options and operation ids, database records and deletes, subscriptions and the TCP endpoint.
// Each is a 4xx (the TCP endpoint a typed 501) with a message, and what was stored before is intact.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client, Stack } from '../test-fixtures/stack.js';
import { startTwoTenants } from '../test-fixtures/two-tenants.js';

const RAVEN = { 'raven-client-version': '7.2.3' };

let stack: Stack;
let admin: Client;
let reader: Client;

beforeAll(async () => {
  // Without the RavenDB TCP listener: the worker's endpoint then answers 501, typed (the listener's own
  // attacks: ravendb-tcp.adversarial.test.ts).
  ({ stack, adminA: admin, readerA: reader } = await startTwoTenants({ ravenTcp: null }));
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

  it('bulk insert as a JSON array: not an array, unclosed, trailing bytes, counters, a nested id: 400, nothing stored', async () => {
    const put = (id: unknown, name = 'x') =>
      JSON.stringify({ Id: id, Type: 'PUT', Document: { Name: name } });
    const bodies: [string, string][] = [
      [put('bulk/a'), 'does not start with ['],
      [`[${put('bulk/b')}`, 'ended before its closing ]'],
      [`[${put('bulk/c')}] {"Id":"bulk/d"}`, 'after its closing ]'],
      [`[${JSON.stringify({ Id: 'bulk/e', Type: 'Counters', Counters: {} })}]`, 'only documents'],
      [`[${put({ nested: 'id' })}]`, 'Line 1'],
      [`[${put('users/keep', 'Overwritten')} , ]`, 'has an empty element'],
    ];
    for (const [body, says] of bodies) {
      const reply = await admin.call('POST', '/databases/shop/bulk_insert?id=1', body, RAVEN);
      expect(reply.status, body.slice(0, 60)).toBe(400);
      expect(String(reply.json.detail), body.slice(0, 60)).toContain(says);
    }
    // Lines before a bad one are stored (as by Rookery's NDJSON bulk insert) when they reached the parser in an
    // earlier buffer: whether the last body's first line did depends on how the proxy cut it. Put it back.
    await admin.call('PUT', '/databases/shop/docs?id=users/keep', { Name: 'Kept' });
    for (const id of ['bulk/a', 'bulk/b', 'bulk/c', 'bulk/d', 'bulk/e'])
      expect((await admin.call('GET', `/databases/shop/docs?id=${id}`)).status, id).toBe(404);
    const reader403 = await reader.call(
      'POST',
      '/databases/shop/bulk_insert?id=1',
      `[${put('bulk/r')}]`,
      RAVEN,
    );
    expect(reader403.status).toBe(403);
  });

  it('operation state and stream formats: malformed ids and options are 400, unknown ids 404, never 500', async () => {
    for (const id of ['-1', 'abc', '1e400', '0']) {
      const reply = await admin.call('GET', `/databases/shop/operations/state?id=${id}`, undefined, RAVEN);
      expect(reply.status, id).toBe(400);
    }
    const unknown = await admin.call(
      'GET',
      '/databases/shop/operations/state?id=987654321',
      undefined,
      RAVEN,
    );
    expect(unknown.json).toMatchObject({ status: 404, code: 'OperationNotFound' });
    for (const query of ['format=xml', 'format=jsonl&matches=x*', 'format=jsonl&exclude=y']) {
      const reply = await admin.call('GET', `/databases/shop/streams/docs?${query}`, undefined, RAVEN);
      expect(reply.status, query).toBe(400);
    }
    const streamed = await admin.call(
      'POST',
      '/databases/shop/streams/queries?format=csv',
      { Query: 'from Users' },
      RAVEN,
    );
    expect(streamed.status).toBe(400);
  });

  it('databases in RavenDB’s shape: what a Rookery database cannot be is 400 by name; a batch naming a missing one deletes nothing', async () => {
    const records: [unknown, string, string][] = [
      [{ DatabaseName: 'sealed', Encrypted: true }, '', 'Encrypted'],
      [{ DatabaseName: 'tuned', Settings: { 'Indexing.MapTimeout': '1' } }, '', 'Settings'],
      [{ DatabaseName: 'spread', Topology: { Members: ['A', 'B'] } }, '', 'Topology'],
      [{ DatabaseName: 'twice' }, '&replicationFactor=3', 'replicationFactor'],
      [{ DatabaseName: 'left' }, '', 'right'],
    ];
    for (const [record, extra, says] of records) {
      const name = says === 'right' ? 'right' : (record as { DatabaseName: string }).DatabaseName;
      const reply = await admin.call('PUT', `/admin/databases?name=${name}${extra}`, record, RAVEN);
      expect(reply.status, says).toBe(400);
      expect(String(reply.json.detail), says).toContain(says);
    }
    const soft = await admin.call(
      'DELETE',
      '/admin/databases',
      { DatabaseNames: ['shop'], HardDelete: false },
      RAVEN,
    );
    expect(soft.status).toBe(400);
    const withGhost = await admin.call(
      'DELETE',
      '/admin/databases',
      { DatabaseNames: ['shop', 'ghost'], HardDelete: true },
      RAVEN,
    );
    // A missing database answers RavenDB's client 503 with Database-Missing (its 404 would read as "no document").
    expect(withGhost.json).toMatchObject({ code: 'DatabaseNotFound' });
    const byReader = await reader.call(
      'DELETE',
      '/admin/databases',
      { DatabaseNames: ['shop'], HardDelete: true },
      RAVEN,
    );
    expect(byReader.status).toBe(403);
    expect((await admin.call('GET', '/databases')).text).toContain('shop');
  });

  it('subscriptions: another media type is 415, a change vector of its own 400; the TCP endpoint 501, typed', async () => {
    const html = await admin.call('PUT', '/databases/shop/subscriptions', '{"Query":"from Users"}', {
      ...RAVEN,
      'content-type': 'text/html',
    });
    expect(html.status).toBe(415);
    const vector = await admin.call(
      'PUT',
      '/databases/shop/subscriptions',
      { Name: 'cv', Query: 'from Users', ChangeVector: 'A:1-abc' },
      RAVEN,
    );
    expect(vector.status).toBe(400);
    const tcp = await admin.call(
      'GET',
      '/info/remote-task/tcp?database=shop&remote-task=x&tag=Subscription/shop',
      undefined,
      RAVEN,
    );
    expect(tcp.status).toBe(501);
    expect(tcp.json).toMatchObject({
      code: 'RavenTcpNotSupported',
      Type: 'Raven.Client.Exceptions.Documents.Subscriptions.SubscriptionInvalidStateException',
    });
  });

  it('what was stored before the attacks is intact', async () => {
    const kept = await admin.call('GET', '/databases/shop/docs?id=users/keep');
    expect(kept.status).toBe(200);
    expect(JSON.stringify(kept.json)).toContain('Kept');
  });
});
