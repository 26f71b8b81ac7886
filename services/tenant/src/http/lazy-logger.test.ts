// A request's log lines carry its request id and its database, written through a logger made only when a
// line is written (lazy-logger.ts): a real tenant server, its lines read from its log stream.
import path from 'node:path';
import { Writable } from 'node:stream';
import { makeTempDir } from '@rookery/testkit';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../config.js';
import { buildTenantServer, type TenantServer } from '../server.js';
import { LazyChildLogger } from './lazy-logger.js';

interface Line {
  level: number;
  msg: string;
  reqId?: string;
  db?: string;
  service?: string;
  code?: string;
  status?: number;
}

function collector() {
  const lines: Line[] = [];
  const stream = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line));
      done();
    },
  });
  return { lines, stream };
}

let tmp: ReturnType<typeof makeTempDir> | undefined;
let server: TenantServer | undefined;
afterEach(async () => {
  await server?.app.close();
  await server?.close();
  tmp?.cleanup();
  server = undefined;
  tmp = undefined;
});

async function tenant(logLevel: 'debug' | 'info' | 'warn') {
  tmp = makeTempDir('rookery-tenant-logs-');
  const { lines, stream } = collector();
  server = buildTenantServer(loadConfig({}, { dataDir: path.join(tmp.dir, 'd'), logLevel }), {
    logStream: stream,
  });
  const base = await server.app.listen({ host: '127.0.0.1', port: 0 });
  const call = (method: string, url: string, body?: unknown) =>
    fetch(`${base}${url}`, {
      method,
      headers: { 'x-request-id': `req-${method}-${lines.length}`, 'content-type': 'application/json' },
      ...(body === undefined ? {} : { body: JSON.stringify(body) }),
    });
  expect((await call('PUT', '/admin/databases', { Name: 'shop' })).status).toBe(201);
  return { lines, call };
}

describe("a request's log lines", () => {
  it('carry the request id and the database, at info (a refusal) and at debug (the request line)', async () => {
    const { lines, call } = await tenant('debug');
    const refused = await call('GET', '/databases/shop/docs?id=orders/404');
    expect(refused.status).toBe(404);
    const refusal = lines.find((l) => l.msg === 'request refused');
    expect(refusal).toMatchObject({ level: 30, code: 'DocumentNotFound', db: 'shop', service: 'tenant' });
    expect(refusal!.reqId).toMatch(/^req-GET-/);
    const stored = await call('PUT', '/databases/shop/docs?id=orders/1', { Total: 1 });
    expect(stored.status).toBe(201);
    const requestLine = lines.findLast((l) => l.msg === 'request');
    expect(requestLine).toMatchObject({ level: 20, status: 201, db: 'shop', service: 'tenant' });
    expect(requestLine!.reqId).toMatch(/^req-PUT-/);
  });

  it('are not written below the level, and a refusal still is at info', async () => {
    const { lines, call } = await tenant('info');
    const before = lines.length;
    expect((await call('PUT', '/databases/shop/docs?id=orders/1', { Total: 1 })).status).toBe(201);
    expect(lines.length).toBe(before); // the debug request line is below info
    expect((await call('GET', '/databases/shop/docs?id=orders/404')).status).toBe(404);
    expect(lines.at(-1)).toMatchObject({ msg: 'request refused', db: 'shop', code: 'DocumentNotFound' });
  });
});

describe('LazyChildLogger', () => {
  it('writes what pino.child writes, bindings of every level of children included', () => {
    const eager = collector();
    const lazy = collector();
    const root = (stream: Writable) =>
      pino({ level: 'debug', base: { service: 't' }, timestamp: false }, stream);
    const eagerLogger = root(eager.stream).child({ reqId: 'r1' }).child({ db: 'shop' });
    const lazyLogger = new LazyChildLogger(root(lazy.stream), { reqId: 'r1' }).child({ db: 'shop' });
    for (const logger of [eagerLogger, lazyLogger]) {
      logger.trace('not written');
      logger.debug({ n: 1 }, 'debug line');
      logger.error(new Error('boom'), 'error line');
      logger.info('%s formatted', 'is');
    }
    const strip = (lines: Line[]) => lines.map(({ ...l }) => ({ ...l, err: undefined }));
    expect(strip(lazy.lines)).toEqual(strip(eager.lines));
    expect(lazy.lines.map((l) => l.msg)).toEqual(['debug line', 'error line', 'is formatted']);
    expect(lazy.lines[0]).toMatchObject({ reqId: 'r1', db: 'shop', service: 't', n: 1 });
  });

  it('follows a level set on it or given to its child', () => {
    const out = collector();
    const logger = new LazyChildLogger(
      pino({ level: 'info' }, out.stream),
      { reqId: 'r2' },
      { level: 'warn' },
    );
    logger.info('below the child level');
    expect(logger.level).toBe('warn');
    logger.level = 'debug';
    logger.debug('now written');
    expect(out.lines.map((l) => l.msg)).toEqual(['now written']);
  });
});
