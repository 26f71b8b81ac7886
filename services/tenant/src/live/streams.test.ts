import http from 'node:http';
import v8 from 'node:v8';
import vm from 'node:vm';
import { beforeAll, describe, expect, it } from 'vitest';
import { sharedTenantServer, startTenantServer } from '../test-fixtures/tenant-server.js';

// NDJSON streams end to end: the real tenant server (and its indexer process), read over HTTP.
const tenant = sharedTenantServer({ database: 'Shop' });
const { call } = tenant;

type Line = Record<string, unknown>;
const lines = (text: string): Line[] =>
  text
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => JSON.parse(l) as Line);
const idOf = (line: Line) => (line['@metadata'] as { '@id': string })['@id'];

/** Streams a GET (or a POST with a JSON body): every line but the last, and the last. */
async function stream(
  path: string,
  body?: unknown,
): Promise<{ status: number; results: Line[]; last: Line }> {
  const reply = await call(body === undefined ? 'GET' : 'POST', path, body);
  const all = lines(reply.text);
  return { status: reply.status, results: all.slice(0, -1), last: all.at(-1) ?? {} };
}

/** Opens a stream with node:http, for what fetch hides: pausing, cutting, trailers. */
function open(path: string): Promise<http.IncomingMessage> {
  return new Promise((resolve, reject) => {
    const request = http.get(new URL(path, tenant.base), resolve);
    request.once('error', reject);
  });
}

async function readToEnd(response: http.IncomingMessage): Promise<string> {
  response.setEncoding('utf8');
  let text = '';
  for await (const chunk of response) text += chunk;
  return text;
}

async function eventually(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 10));
}

const USERS = 30;

beforeAll(async () => {
  const commands = [
    ...Array.from({ length: USERS }, (_, i) => ({
      Type: 'PUT',
      Id: `users/${i + 1}`,
      Document: {
        Name: `User ${i + 1}`,
        Age: i + 1,
        Company: `companies/${(i % 3) + 1}`,
        '@metadata': { '@collection': 'Users' },
      },
    })),
    ...[1, 2, 3].map((n) => ({
      Type: 'PUT',
      Id: `Companies/${n}`,
      Document: { Name: `Company ${n}`, '@metadata': { '@collection': 'Companies' } },
    })),
    // Archived below: streams leave it out, as collection queries do.
    {
      Type: 'PUT',
      Id: 'users/archived',
      Document: {
        Name: 'Old',
        Age: 99,
        '@metadata': { '@collection': 'Users', '@archive-at': '2031-01-01T00:00:00Z' },
      },
    },
  ];
  expect((await call('POST', '/databases/shop/bulk_docs', { Commands: commands })).status).toBe(201);
  const swept = await call('POST', '/databases/shop/admin/sweep', { now: '2031-01-01T00:00:00Z' });
  expect(swept.json).toMatchObject({ Archived: 1 });
});

describe('document streams', () => {
  it('streams every document in id order (case-insensitive), archived ones left out, then @end', async () => {
    const reply = await call('GET', '/databases/shop/streams/docs');
    expect(reply.status).toBe(200);
    expect(reply.headers.get('content-type')).toBe('application/x-ndjson');
    const all = lines(reply.text);
    const ids = all.slice(0, -1).map(idOf);
    expect(ids).toHaveLength(USERS + 3);
    expect(ids).toEqual([...ids].sort((a, b) => (a.toLowerCase() < b.toLowerCase() ? -1 : 1)));
    expect(ids[0]).toBe('Companies/1');
    expect(ids).not.toContain('users/archived');
    expect(all.at(-1)).toEqual({ '@end': { Count: USERS + 3 } });
  });

  it('streams an id prefix after a given id, at most pageSize documents', async () => {
    const { results, last } = await stream(
      '/databases/shop/streams/docs?startsWith=users/&startAfter=users/2&pageSize=5',
    );
    expect(results.map(idOf)).toEqual(['users/20', 'users/21', 'users/22', 'users/23', 'users/24']);
    expect(last).toEqual({ '@end': { Count: 5 } });

    const prefix = await stream('/databases/shop/streams/docs?startsWith=USERS/1');
    expect(prefix.results.map(idOf)).toEqual([
      'users/1',
      ...Array.from({ length: 10 }, (_, i) => `users/1${i}`),
    ]);
    // A startAfter before the prefix starts at the prefix; one past it gives nothing.
    expect(
      (await stream('/databases/shop/streams/docs?startsWith=users/3&startAfter=a')).results.map(idOf),
    ).toEqual(['users/3', 'users/30']);
    expect((await stream('/databases/shop/streams/docs?startsWith=users/3&startAfter=v')).last).toEqual({
      '@end': { Count: 0 },
    });
  });

  it('streams a collection in etag order', async () => {
    const { results, last } = await stream('/databases/shop/streams/docs?collection=users');
    expect(results.map((r) => r.Age)).toEqual(Array.from({ length: USERS }, (_, i) => i + 1));
    expect(last).toEqual({ '@end': { Count: USERS } });
    expect((await stream('/databases/shop/streams/docs?collection=Nobody')).last).toEqual({
      '@end': { Count: 0 },
    });
  });

  it('carries the work units: the request side in the headers, the whole figure as a trailer', async () => {
    const response = await open('/databases/shop/streams/docs');
    expect(response.headers['x-rookery-work-units']).toBe('1');
    const text = await readToEnd(response);
    expect(Number(response.trailers['x-rookery-work-units'])).toBe(
      1 + Math.ceil(Buffer.byteLength(text) / 4096),
    );
  });
});

describe('query streams', () => {
  const query = (Query: string) =>
    stream('/databases/shop/streams/queries', { Query, WaitForNonStaleResults: true });

  it('streams a query through an index, in its order, with the index and the total at the end', async () => {
    const { status, results, last } = await query('from Users where Age >= 25 order by Age desc');
    expect(status).toBe(200);
    expect(results.map((r) => r.Age)).toEqual([30, 29, 28, 27, 26, 25]);
    expect(last).toEqual({ '@end': { Count: 6, IndexName: 'Auto/Users/ByAge', TotalResults: 6 } });
  });

  it('applies projections, distinct, limit and offset', async () => {
    const projected = await query('from Users where Age <= 3 order by Age select Name, Age as Years');
    expect(projected.results).toEqual([
      { Name: 'User 1', Years: 1 },
      { Name: 'User 2', Years: 2 },
      { Name: 'User 3', Years: 3 },
    ]);
    const distinct = await query('from Users select distinct Company');
    expect(distinct.results).toEqual([1, 2, 3].map((n) => ({ Company: `companies/${n}` })));
    const window = await query('from Users where Age > 0 order by Age limit 4 offset 10');
    expect(window.results.map((r) => r.Age)).toEqual([11, 12, 13, 14]);
    expect(window.last).toMatchObject({ '@end': { Count: 4, TotalResults: USERS } });
  });

  it('streams a collection without an index, archived documents left out', async () => {
    const { results, last } = await query('from Users');
    expect(results).toHaveLength(USERS);
    expect(last).toEqual({ '@end': { Count: USERS, IndexName: null, TotalResults: USERS } });
    const windowed = await query('from Users limit 3 offset 28');
    expect(windowed.results.map((r) => r.Age)).toEqual([29, 30]);
  });

  it('takes the query in the query string too', async () => {
    const text = encodeURIComponent('from Users where Name = $name');
    const parameters = encodeURIComponent(JSON.stringify({ name: 'User 7' }));
    const { results, last } = await stream(
      `/databases/shop/streams/queries?query=${text}&parameters=${parameters}&waitForNonStaleResults=true`,
    );
    expect(results.map(idOf)).toEqual(['users/7']);
    expect(last).toMatchObject({ '@end': { Count: 1 } });
  });
});

describe('bad input', () => {
  it.each([
    ['/databases/shop/streams/docs?bogus=1', 'InvalidRequest'],
    ['/databases/shop/streams/docs?pageSize=0', 'InvalidRequest'],
    ['/databases/shop/streams/docs?collection=Users&startsWith=users/', 'InvalidRequest'],
    ['/databases/shop/streams/queries', 'InvalidRequest'],
    ['/databases/shop/streams/queries?query=from%20Users%20where', 'InvalidQuery'],
  ])('GET %s is a 400 %s', async (path, code) => {
    const reply = await call('GET', path);
    expect(reply.status).toBe(400);
    expect(reply.json.code).toBe(code);
  });

  it.each([
    [{}, 'InvalidRequest'],
    [{ Query: 'from Users include Company' }, 'InvalidQuery'],
    [{ Query: 'from Users select facet(Company)' }, 'InvalidQuery'],
  ])('POST %j is a 400 %s', async (body, code) => {
    const reply = await call('POST', '/databases/shop/streams/queries', body);
    expect(reply.status).toBe(400);
    expect(reply.json.code).toBe(code);
  });

  it('answers a database that does not exist with 404', async () => {
    for (const reply of [
      await call('GET', '/databases/nope/streams/docs'),
      await call('POST', '/databases/nope/streams/queries', { Query: 'from Users' }),
    ]) {
      expect(reply.status).toBe(404);
      expect(reply.json.code).toBe('DatabaseNotFound');
    }
  });
});

describe('backpressure', () => {
  const DOCUMENTS = 12_000;
  const DOCUMENT_CHARS = 4_000;

  beforeAll(async () => {
    expect((await call('PUT', '/admin/databases', { Name: 'big' })).status).toBe(201);
    const padding = 'x'.repeat(DOCUMENT_CHARS);
    const body = Array.from({ length: DOCUMENTS }, (_, i) =>
      JSON.stringify({ Id: `items/${String(i).padStart(6, '0')}`, Document: { N: i, Padding: padding } }),
    ).join('\n');
    const reply = await call('POST', '/databases/big/bulk_insert', body, {
      'content-type': 'application/x-ndjson',
    });
    expect(reply.status).toBe(200);
  });

  it('never times out a slow reader', () => {
    // The tenant's HTTP server has no request or idle-socket timeout: a reader that reads slowly is served
    // for as long as it reads (headersTimeout only bounds the request's own headers).
    expect(tenant.server.app.server.requestTimeout).toBe(0);
    expect(tenant.server.app.server.timeout).toBe(0);
  });

  it('produces only as fast as a paused reader takes: memory stays bounded and nothing is lost', async () => {
    const total = DOCUMENTS * DOCUMENT_CHARS;
    // Garbage collected before each measure, so that what is measured is what the stream holds.
    v8.setFlagsFromString('--expose-gc');
    const gc = vm.runInNewContext('gc') as () => void;
    const memory = () => {
      gc();
      const { heapUsed, external } = process.memoryUsage();
      return heapUsed + external;
    };
    const before = memory();
    const bytesBefore = tenant.server.live.streamBytes;
    const paused = await open('/databases/big/streams/docs');
    paused.pause();
    try {
      // Wait until the producer is blocked on the paused reader: what it wrote stops growing.
      let written = -1;
      while (written !== tenant.server.live.streamBytes) {
        written = tenant.server.live.streamBytes;
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
      expect(tenant.server.live.streamBytes - bytesBefore).toBeLessThan(total / 3);
      expect(memory() - before).toBeLessThan(total / 3);
      expect(tenant.server.live.streams).toBe(1);
    } catch (error) {
      paused.destroy();
      throw error;
    }

    const all = lines(await readToEnd(paused));
    expect(all).toHaveLength(DOCUMENTS + 1);
    expect(all.slice(0, -1).map((l) => l.N)).toEqual(Array.from({ length: DOCUMENTS }, (_, i) => i));
    expect(all.at(-1)).toEqual({ '@end': { Count: DOCUMENTS } });
  });

  it('stops producing as soon as the reader leaves, and serves the next request', async () => {
    const response = await open('/databases/big/streams/queries?query=from%20@all_docs');
    await new Promise((resolve) => response.once('data', resolve));
    response.destroy();
    await eventually(() => tenant.server.live.streams === 0);
    const stopped = tenant.server.live.streamBytes;
    const next = await stream('/databases/big/streams/docs?pageSize=2');
    expect(next.last).toEqual({ '@end': { Count: 2 } });
    expect(tenant.server.live.streamBytes - stopped).toBeLessThan(4 * DOCUMENT_CHARS);
  });

  it('ends with an @error line when the database goes away during the stream', async () => {
    expect((await call('PUT', '/admin/databases', { Name: 'doomed' })).status).toBe(201);
    const reply = await call('POST', '/databases/doomed/bulk_insert', (await readBig()).join('\n'), {
      'content-type': 'application/x-ndjson',
    });
    expect(reply.status).toBe(200);
    const paused = await open('/databases/doomed/streams/docs');
    paused.pause();
    await eventually(() => tenant.server.live.streams === 1);
    expect((await call('DELETE', '/admin/databases?name=doomed')).status).toBe(204);
    const all = lines(await readToEnd(paused));
    expect(all.at(-1)).toEqual({
      '@error': { code: 'DatabaseUnavailable', detail: expect.stringMatching(/deleted or closed/) },
    });
    expect(all.length - 1).toBeLessThan(DOCUMENTS);
    await eventually(() => tenant.server.live.streams === 0);
  });

  /** The big database's documents as bulk-insert lines. */
  async function readBig(): Promise<string[]> {
    const { results } = await stream('/databases/big/streams/docs');
    return results.map((document) => JSON.stringify({ Id: idOf(document), Document: document }));
  }
});

describe('stopping the tenant', () => {
  it('ends a stream that is still being read instead of waiting for its reader', async () => {
    const stopping = await startTenantServer({ database: 'shop' });
    try {
      const padding = 'x'.repeat(4_000);
      const body = Array.from({ length: 3_000 }, (_, i) =>
        JSON.stringify({ Id: `items/${i}`, Document: { padding } }),
      );
      await stopping.call('POST', '/databases/shop/bulk_insert', body.join('\n'), {
        'content-type': 'application/x-ndjson',
      });
      const paused = await new Promise<http.IncomingMessage>((resolve) =>
        http.get(new URL('/databases/shop/streams/docs', stopping.base), resolve),
      );
      paused.pause();
      await eventually(() => stopping.server.live.streams === 1);
      const closed = stopping.stop();
      const text = await readToEnd(paused).catch(() => '');
      await closed;
      // Either the reader took the @error line within the grace, or it was cut: never a complete-looking end.
      const last = lines(text.slice(0, text.lastIndexOf('\n') + 1)).at(-1) ?? {};
      expect(last['@end']).toBeUndefined();
      if ('@error' in last) expect(last['@error']).toMatchObject({ code: 'DatabaseUnavailable' });
    } finally {
      await stopping.close();
    }
  });
});
