// Attacks on how a tenant answers requests, end to end through the real gateway over mutual TLS, a real
// host and real tenant processes (with the host's default 512 MiB heap), README.md beside this file:
// - one GET (or query) whose answer would hold one large document a thousand times: it must be refused
//   with 413 before the memory is spent, and the same tenant process must answer the next request;
// - documents, patches and query parameters nested thousands of levels deep (400, never 500);
// - bodies with `__proto__` or `constructor` keys, plain or \u-escaped (400; the JSON fast path skips the
//   scan only for bodies that cannot hold them);
// - `in` / `all in` lists of 10,000 values (they work), and lists past the limit (400);
// - a read-only principal asking for HiLo ranges, which reserve ids (403), and huge ranges (capped).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { Client, Stack } from '../test-fixtures/stack.js';
import { startTwoTenants } from '../test-fixtures/two-tenants.js';

const KiB = 1024;
const MiB = 1024 * KiB;

let stack: Stack;
let admin: Client;
let reader: Client;

beforeAll(async () => {
  ({ stack, adminA: admin, readerA: reader } = await startTwoTenants());
}, 120_000);
afterAll(async () => {
  await stack?.close();
});

/** Text that does not compress much (so the stored body is as large as the document). */
function noisyText(bytes: number): string {
  let text = '';
  let seed = 7;
  while (text.length < bytes) {
    seed = (seed * 1103515245 + 12345) % 2147483648;
    text += seed.toString(36);
  }
  return text.slice(0, bytes);
}

/**
 * `{"a":{"a":…{"Leaf":1}…}}`, `levels` objects deep (the outermost is level 1), as JSON text: the test's own
 * JSON.stringify would overflow the stack on such a value.
 */
function nested(levels: number): string {
  return `${'{"a":'.repeat(levels - 1)}{"Leaf":1}${'}'.repeat(levels - 1)}`;
}

/** A document of collection Deep whose field `a` is nested so that the document is `levels` deep. */
const deepDocument = (levels: number) => `{"@metadata":{"@collection":"Deep"},"a":${nested(levels - 1)}}`;

const acmePid = () => stack.supervisor.info('acme').pid;

describe('answers that would hold more than the response budget', () => {
  beforeAll(async () => {
    const big = { Text: noisyText(600 * KiB), '@metadata': { '@collection': 'Blobs' } };
    expect((await admin.call('PUT', '/databases/shop/docs?id=blobs/600k', big)).status).toBe(201);
    const huge = { Text: 'z'.repeat(31 * MiB), '@metadata': { '@collection': 'Blobs' } };
    expect((await admin.call('PUT', '/databases/shop/docs?id=blobs/31m', huge)).status).toBe(201);
  }, 120_000);

  it('refuses a GET of a 600 KB document asked for 1,024 times with 413, and the tenant answers the next request', async () => {
    const pid = acmePid();
    const ids = Array.from({ length: 1_024 }, () => 'id=blobs/600k').join('&');
    // Six in a row: each used to build a string past the heap and abort the process.
    for (let i = 0; i < 6; i++) {
      const reply = await admin.call('GET', `/databases/shop/docs?${ids}`);
      expect([reply.status, reply.json.code]).toEqual([413, 'ResponseTooLarge']);
      expect(reply.json.limitBytes).toBe(64 * MiB);
      expect(reply.json.detail).toMatch(/64 MiB.*fewer ids|fewer ids.*64 MiB/);
    }
    const next = await admin.call('GET', '/databases/shop/docs?id=blobs/600k');
    expect(next.status).toBe(200);
    expect(acmePid()).toBe(pid);
    expect(stack.supervisor.info('acme').crashes).toBe(0);
  });

  it('refuses a GET of a 31 MB document asked for 20 times with 413', async () => {
    const pid = acmePid();
    const ids = Array.from({ length: 20 }, () => 'id=blobs/31m').join('&');
    const reply = await admin.call('GET', `/databases/shop/docs?${ids}`);
    expect([reply.status, reply.json.code]).toEqual([413, 'ResponseTooLarge']);
    const next = await admin.call('GET', '/databases/shop/docs?id=blobs/31m');
    expect(next.status).toBe(200);
    expect(next.text.length).toBeGreaterThan(31 * MiB);
    expect(acmePid()).toBe(pid);
  });

  it('refuses a query whose projection loads the same large document for 1,024 results with 413', async () => {
    const pid = acmePid();
    const lines = Array.from({ length: 1_024 }, (_, i) =>
      JSON.stringify({
        Id: `refs/${i}`,
        Document: { Blob: 'blobs/600k', '@metadata': { '@collection': 'Refs' } },
      }),
    );
    const inserted = await admin.call('POST', '/databases/shop/bulk_insert', `${lines.join('\n')}\n`, {
      'content-type': 'application/x-ndjson',
    });
    expect(inserted.text).toContain('"Completed"');
    const query = { Query: 'from Refs as r load r.Blob as b select b.Text limit 1024' };
    const reply = await admin.call('POST', '/databases/shop/queries', query);
    expect([reply.status, reply.json.code]).toEqual([413, 'ResponseTooLarge']);
    expect(reply.json.detail).toMatch(/stream/);
    // A stream of it answers row by row (three rows here, to keep the test light).
    const streamed = await admin.call('POST', '/databases/shop/streams/queries', {
      Query: query.Query.replace('1024', '3'),
    });
    expect(streamed.status).toBe(200);
    expect(streamed.text.trim().split('\n')).toHaveLength(4);
    expect(acmePid()).toBe(pid);
  });
});

describe('nesting', () => {
  it('refuses a document nested 5,000 levels with 400 NestingTooDeep, through PUT, a batch and bulk insert', async () => {
    const deep = deepDocument(5_000);
    const put = await admin.call('PUT', '/databases/shop/docs?id=deep/1', deep);
    expect([put.status, put.json.code]).toEqual([400, 'NestingTooDeep']);
    expect(put.json.detail).toMatch(/256/);
    const batch = await admin.call(
      'POST',
      '/databases/shop/bulk_docs',
      `{"Commands":[{"Type":"PUT","Id":"deep/2","Document":${deep}}]}`,
    );
    expect([batch.status, batch.json.code]).toEqual([400, 'NestingTooDeep']);
    const bulk = await admin.call(
      'POST',
      '/databases/shop/bulk_insert',
      `{"Id":"deep/3","Document":${deep}}\n`,
      { 'content-type': 'application/x-ndjson' },
    );
    expect([bulk.status, bulk.json.code]).toEqual([400, 'NestingTooDeep']);
    expect((await admin.call('GET', '/databases/shop/docs?id=deep/1')).status).toBe(404);
  });

  it('refuses a patch that would nest a document past the limit, and one nested 4,000 levels, with 400', async () => {
    expect((await admin.call('PUT', '/databases/shop/docs?id=deep/patched', deepDocument(200))).status).toBe(
      201,
    );
    const patch = (patchJson: string) =>
      admin.call(
        'POST',
        '/databases/shop/bulk_docs',
        `{"Commands":[{"Type":"PATCH","Id":"deep/patched","Patch":${patchJson}}]}`,
      );
    // 200 levels, and a set that puts 100 more under the deepest object: 300 in all, from a small request.
    const path = `${'a.'.repeat(199)}b`;
    const deeper = await patch(`{"Operations":[{"Op":"set","Path":"${path}","Value":${nested(100)}}]}`);
    expect([deeper.status, deeper.json.code]).toEqual([400, 'NestingTooDeep']);
    expect(deeper.json.detail).toMatch(/deep\/patched/);
    const huge = await patch(`{"Merge":{"b":${nested(4_000)}}}`);
    expect([huge.status, huge.json.code]).toEqual([400, 'NestingTooDeep']);
    // The document stored before is intact.
    const stored = await admin.call('GET', '/databases/shop/docs?id=deep/patched');
    expect(stored.status).toBe(200);
    expect(stored.text).not.toContain('"b"');
  });

  it('refuses query parameters nested 5,000 levels with 400', async () => {
    const reply = await admin.call(
      'POST',
      '/databases/shop/queries',
      `{"Query":"from Users where Name = $name","QueryParameters":{"name":${nested(5_000)}}}`,
    );
    expect([reply.status, reply.json.code]).toEqual([400, 'NestingTooDeep']);
  });
});

describe('prototype-poisoned bodies', () => {
  it('refuses __proto__ and constructor keys, plain or \\u-escaped, with 400 InvalidJson; the stored document stays', async () => {
    const stored = { Name: 'kept', '@metadata': { '@collection': 'Protos' } };
    expect((await admin.call('PUT', '/databases/shop/docs?id=protos/1', stored)).status).toBe(201);
    for (const body of [
      '{"Name":"x","__proto__":{"admin":true}}',
      '{"Name":"x","a":{"\\u005f_proto__":{"admin":true}}}',
      '{"Name":"x","constructor":{"prototype":{"admin":true}}}',
      '{"Name":"x","\\u0063onstructor":{"prototype":{"admin":true}}}',
    ]) {
      const put = await admin.call('PUT', '/databases/shop/docs?id=protos/1', body);
      expect([put.status, put.json.code], body).toEqual([400, 'InvalidJson']);
    }
    const after = await admin.call('GET', '/databases/shop/docs?id=protos/1');
    expect((after.json.Results as unknown[])[0]).toMatchObject({ Name: 'kept' });
    // The words as values are only text: such a document is stored.
    const words = {
      Role: 'constructor',
      Note: '__proto__ is a word',
      '@metadata': { '@collection': 'Protos' },
    };
    expect((await admin.call('PUT', '/databases/shop/docs?id=protos/2', words)).status).toBe(201);
  });
});

describe('in and all in lists', () => {
  const values = Array.from({ length: 10_000 }, (_, i) => `tags/${i}`);

  beforeAll(async () => {
    const lines = Array.from({ length: 50 }, (_, i) =>
      JSON.stringify({
        Id: `posts/${i}`,
        Document: {
          Tag: `tags/${i * 3}`,
          Tags: ['tags/1', 'tags/2'],
          '@metadata': { '@collection': 'Posts' },
        },
      }),
    );
    const inserted = await admin.call('POST', '/databases/shop/bulk_insert', `${lines.join('\n')}\n`, {
      'content-type': 'application/x-ndjson',
    });
    expect(inserted.text).toContain('"Completed"');
  });

  it('answers where X in ($list) with 10,000 values', async () => {
    const reply = await admin.call('POST', '/databases/shop/queries', {
      Query: 'from Posts where Tag in ($list)',
      QueryParameters: { list: values },
      WaitForNonStaleResults: true,
    });
    expect(reply.status).toBe(200);
    // tags/0, tags/3, … tags/147: all 50 are in the list.
    expect(reply.json.TotalResults).toBe(50);
  });

  it('answers where X all in ($list) with 10,000 values', async () => {
    const reply = await admin.call('POST', '/databases/shop/queries', {
      Query: 'from Posts where Tags all in ($list)',
      QueryParameters: { list: values },
      WaitForNonStaleResults: true,
    });
    expect(reply.status).toBe(200);
    expect(reply.json.TotalResults).toBe(0);
    const two = await admin.call('POST', '/databases/shop/queries', {
      Query: 'from Posts where Tags all in ($list)',
      QueryParameters: { list: ['tags/1', 'tags/2'] },
      WaitForNonStaleResults: true,
    });
    expect(two.json.TotalResults).toBe(50);
  });

  it('refuses a list past the limit with 400 that names it', async () => {
    // Each parameter holds at most 10,000 values; seven of them make 70,000.
    const names = ['a', 'b', 'c', 'd', 'e', 'f', 'g'];
    const reply = await admin.call('POST', '/databases/shop/queries', {
      Query: `from Posts where Tag in (${names.map((n) => `$${n}`).join(', ')})`,
      QueryParameters: Object.fromEntries(
        names.map((n) => [n, Array.from({ length: 10_000 }, (_, i) => `${n}${i}`)]),
      ),
    });
    expect([reply.status, reply.json.code]).toEqual([400, 'InvalidQuery']);
    expect(reply.json.detail).toMatch(/65,536|65536/);
  });
});

describe('HiLo', () => {
  it('refuses HiLo ranges to a read-only principal with 403: taking a range reserves ids', async () => {
    const before = await admin.call('GET', '/databases/shop/hilo/next?tag=orders');
    expect(before.status).toBe(200);
    const reply = await reader.call('GET', '/databases/shop/hilo/next?tag=orders&lastBatchSize=1000000');
    expect([reply.status, reply.json.code]).toEqual([403, 'Forbidden']);
    expect(reply.json.detail).toMatch(/HiLo/);
    const after = await admin.call('GET', '/databases/shop/hilo/next?tag=orders');
    // Nothing was reserved in between: the next range follows the first.
    expect(after.json.Low).toBe((before.json.High as number) + 1);
  });

  it('caps the range one call may take at 1,048,576 ids, as RavenDB does', async () => {
    const at = new Date().toISOString();
    const reply = await admin.call(
      'GET',
      `/databases/shop/hilo/next?tag=invoices&lastBatchSize=1000000&lastRangeAt=${encodeURIComponent(at)}`,
    );
    expect(reply.status).toBe(200);
    expect(reply.json.LastSize).toBe(1_048_576);
    const huge = await admin.call('GET', '/databases/shop/hilo/next?tag=invoices&lastBatchSize=999999999');
    expect([huge.status, huge.json.code]).toEqual([400, 'InvalidRequest']);
  });
});
