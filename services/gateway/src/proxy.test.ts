// The proxy between two real HTTP servers: a stand-in tenant on a Unix socket and a front server that
// proxies every request to it (plain HTTP: TLS is the gateway's business, not the proxy's). What the
// end-to-end tests cannot easily provoke: an answer before the body was read, a tenant that is gone, a
// client that leaves mid-answer.
import http from 'node:http';
import net from 'node:net';
import { Readable } from 'node:stream';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { type ProxyOutcome, proxyToTenant, REPLAYABLE_BODY_BYTES, TenantUnreachable } from './proxy.js';
import { TenantPools } from './tenant-pool.js';
import { localServers } from './test-fixtures/local-servers.js';

const servers = localServers();

/** A stand-in tenant on a Unix socket, a front server proxying to it; each proxied request's outcome or error. */
async function setup(
  tenant: http.RequestListener | net.Server,
  pools = new TenantPools(),
  pathOf: (req: http.IncomingMessage) => string = (req) => req.url ?? '/',
) {
  const tenantServer = tenant instanceof net.Server ? tenant : http.createServer(tenant);
  const socketPath = await servers.tenant(tenantServer, 'rookery-proxy-');
  servers.defer(() => pools.close());
  const results: Array<ProxyOutcome | Error> = [];
  let settled: () => void = () => {};
  const front = http.createServer((req, res) => {
    proxyToTenant(req, res, { path: pathOf(req), pool: pools.for(socketPath), requestId: 'req-1' }).then(
      (outcome) => {
        results.push(outcome);
        settled();
      },
      (error: Error) => {
        results.push(error);
        if (!res.headersSent) res.writeHead(502).end();
        else res.destroy();
        settled();
      },
    );
  });
  const url = `http://${await servers.front(front)}`;
  const nextResult = () => new Promise<void>((resolve) => (settled = resolve));
  const closeTenant = () => new Promise<void>((resolve) => tenantServer.close(() => resolve()));
  return { url, results, nextResult, closeTenant, tenantServer };
}

/** A tenant that answers raw bytes: `answer` gets each request's head (one per connection at a time) and its socket. */
function rawTenant(answer: (head: string, socket: net.Socket, connection: number) => void): net.Server {
  let connections = 0;
  const sockets = new Set<net.Socket>();
  servers.defer(() => {
    for (const socket of sockets) socket.destroy();
  });
  return net.createServer((socket) => {
    const connection = ++connections;
    sockets.add(socket);
    let buffered = '';
    socket.on('data', (data) => {
      buffered += data.toString('latin1');
      const end = buffered.indexOf('\r\n\r\n');
      if (end < 0) return;
      const head = buffered.slice(0, end);
      buffered = buffered.slice(end + 4);
      answer(head, socket, connection);
    });
    socket.on('error', () => undefined);
  });
}

describe('proxyToTenant', () => {
  it('forwards method, path, body and end-to-end headers both ways, and reports what it carried', async () => {
    let seen: { method?: string; url?: string; headers: http.IncomingHttpHeaders; body: string } | null =
      null;
    const { url, results } = await setup(async (req, res) => {
      let body = '';
      for await (const chunk of req) body += chunk;
      seen = { method: req.method, url: req.url, headers: req.headers, body };
      res.writeHead(201, {
        'content-type': 'application/json',
        'x-rookery-work-units': '7',
        'set-cookie': ['a=1', 'b=2'],
        'keep-alive': 'timeout=42',
      });
      res.end('{"ok":true}');
    });
    const response = await request(`${url}/databases/db/docs?id=a`, {
      method: 'PUT',
      headers: {
        'content-type': 'application/json',
        'X-Custom': 'kept',
        'x-rookery-internal': 'dropped',
        'x-request-id': 'from-the-client',
        'proxy-authorization': 'dropped',
      },
      body: '{"Name":"Ada"}',
    });
    expect(response.statusCode).toBe(201);
    expect(await response.body.text()).toBe('{"ok":true}');
    expect(response.headers['set-cookie']).toEqual(['a=1', 'b=2']);
    expect(response.headers['x-rookery-work-units']).toBeUndefined();
    expect(response.headers['keep-alive']).not.toBe('timeout=42'); // hop-by-hop: the front server's own

    expect(seen).toMatchObject({ method: 'PUT', url: '/databases/db/docs?id=a', body: '{"Name":"Ada"}' });
    expect(seen!.headers['x-custom']).toBe('kept');
    expect(seen!.headers['x-request-id']).toBe('req-1');
    expect(seen!.headers.host).toBe('tenant');
    expect(seen!.headers['x-rookery-internal']).toBeUndefined();
    expect(seen!.headers['proxy-authorization']).toBeUndefined();
    expect(results).toEqual([{ status: 201, bytesIn: 14, bytesOut: 11, workUnits: 7 }]);
  });

  it("meters a streamed answer's work from its trailer, which the client never sees", async () => {
    const { url, results } = await setup((_req, res) => {
      res.writeHead(200, {
        'content-type': 'application/x-ndjson',
        'x-rookery-work-units': '1',
        trailer: 'x-rookery-work-units',
      });
      res.write('{"n":1}\n');
      res.addTrailers({ 'x-rookery-work-units': '42' });
      res.end('{"@end":{"Count":1}}\n');
    });
    const response = await request(`${url}/databases/db/streams/docs`);
    expect(await response.body.text()).toBe('{"n":1}\n{"@end":{"Count":1}}\n');
    expect(response.headers.trailer).toBeUndefined();
    expect(response.trailers['x-rookery-work-units']).toBeUndefined();
    expect(results).toEqual([{ status: 200, bytesIn: 0, bytesOut: 29, workUnits: 42 }]);
  });

  it('relays an answer given before the body was read, and survives a tenant that hangs up mid-body', async () => {
    const { url, results } = await setup((req, res) => {
      if (req.url === '/discard') {
        res.writeHead(413).end('too large'); // answered first; the rest of the body is read and dropped
        req.resume();
      } else if (req.url === '/hang-up') {
        res.writeHead(413, { connection: 'close' }).end('too large'); // and the connection goes
      } else res.end('fine');
    });
    const big = Buffer.alloc(8 * 1024 * 1024, 'x');
    const discarded = await request(`${url}/discard`, { method: 'POST', body: big, reset: true });
    expect(discarded.statusCode).toBe(413);
    expect(await discarded.body.text()).toBe('too large');
    expect(results.at(-1)).toMatchObject({ status: 413 });

    // The proxy's writes of the rest of the body now fail: whether the 413 or the failure wins the race,
    // the gateway process must neither crash nor stop serving.
    // (`reset`: the front server closes this connection too, so the client must not reuse it.)
    const hungUp = await request(`${url}/hang-up`, { method: 'POST', body: big, reset: true }).catch(
      (error: Error) => error,
    );
    if (!(hungUp instanceof Error)) await hungUp.body.dump().catch(() => undefined);
    expect(results).toHaveLength(2);
    const after = await request(`${url}/databases`);
    expect(after.statusCode).toBe(200);
    expect(await after.body.text()).toBe('fine');
  });

  it('reports a tenant that is gone as TenantUnreachable', async () => {
    const { url, results, closeTenant } = await setup((_req, res) => res.end());
    await closeTenant();
    const response = await request(`${url}/databases`);
    expect(response.statusCode).toBe(502);
    await response.body.dump();
    expect(results[0]).toBeInstanceOf(TenantUnreachable);
  });

  it('stops the tenant side when the client leaves mid-answer', async () => {
    let tenantSaw: 'close' | 'finish' | null = null;
    const { url, results, nextResult } = await setup((_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      res.write('{"n":1}\n');
      // The rest never comes; the proxy must let go when its client does.
      res.once('close', () => {
        tenantSaw = res.writableFinished ? 'finish' : 'close';
      });
    });
    const settledOnce = nextResult();
    const response = await request(`${url}/databases/db/export`);
    const reader = response.body[Symbol.asyncIterator]();
    expect(String((await reader.next()).value)).toBe('{"n":1}\n');
    response.body.destroy();
    await settledOnce;
    expect(results[0]).toBeInstanceOf(Error);
    await expect.poll(() => tenantSaw).toBe('close');
  });

  it('carries requests one after another over one kept-alive connection', async () => {
    const { url, tenantServer } = await setup((_req, res) => res.end('ok'));
    let connections = 0;
    tenantServer.on('connection', () => connections++);
    for (let i = 0; i < 5; i++) {
      const response = await request(`${url}/databases`);
      expect(await response.body.text()).toBe('ok');
    }
    expect(connections).toBe(1);
  });

  it('closes a connection left idle, and opens a new one for the next request', async () => {
    const { url, tenantServer } = await setup(
      (_req, res) => res.end('ok'),
      new TenantPools({ idleCloseMs: 40 }),
    );
    let open = 0;
    let opened = 0;
    tenantServer.on('connection', (socket) => {
      open++;
      opened++;
      socket.on('close', () => open--);
    });
    await (await request(`${url}/databases`)).body.dump();
    await expect.poll(() => open, { timeout: 2_000 }).toBe(0);
    expect(await (await request(`${url}/databases`)).body.text()).toBe('ok');
    expect(opened).toBe(2);
  });

  it("opens at most the pool's connections to a tenant; requests beyond them wait for one", async () => {
    let inFlight = 0;
    let most = 0;
    const { url, tenantServer, results } = await setup(
      (_req, res) => {
        most = Math.max(most, ++inFlight);
        setTimeout(() => {
          inFlight--;
          res.end('slow');
        }, 30);
      },
      new TenantPools({ maxSockets: 2 }),
    );
    let connections = 0;
    tenantServer.on('connection', () => connections++);
    const answers = await Promise.all(
      Array.from({ length: 8 }, async () => (await request(`${url}/databases`)).body.text()),
    );
    expect(answers).toEqual(Array(8).fill('slow'));
    expect(most).toBe(2);
    expect(connections).toBe(2);
    expect(results).toHaveLength(8);
  });

  it('streams a body of unknown length in chunked coding, and answers HEAD, 204 and 304 without a body', async () => {
    const { url, results } = await setup(async (req, res) => {
      if (req.method === 'POST') {
        let body = '';
        for await (const chunk of req) body += chunk;
        res.end(`${req.headers['transfer-encoding']}:${body}`);
      } else if (req.method === 'HEAD') res.writeHead(200, { 'content-length': '123' }).end();
      else if (req.url === '/none') res.writeHead(204).end();
      else res.writeHead(304, { etag: '"v1"' }).end();
    });
    const posted = await request(`${url}/databases/db/bulk_insert`, {
      method: 'POST',
      body: Readable.from(['{"a":1}\n', '{"b":2}\n']),
    });
    expect(await posted.body.text()).toBe('chunked:{"a":1}\n{"b":2}\n');
    expect(results.at(-1)).toMatchObject({ status: 200, bytesIn: 16 });

    const head = await request(`${url}/databases/db/docs?id=a`, { method: 'HEAD' });
    expect(head.headers['content-length']).toBe('123');
    expect(await head.body.text()).toBe('');
    const none = await request(`${url}/none`);
    expect(none.statusCode).toBe(204);
    await none.body.dump();
    const notModified = await request(`${url}/databases/db/docs?id=a`);
    expect(notModified.statusCode).toBe(304);
    expect(notModified.headers.etag).toBe('"v1"');
    await notModified.body.dump();
    // And the connection still carries the next request.
    const after = await request(`${url}/databases/db/docs?id=a`, { method: 'HEAD' });
    expect(after.statusCode).toBe(200);
    await after.body.dump();
  });

  it('sends a GET or a small PUT again on a new connection when the kept-alive one closes under it, never a POST or a large body', async () => {
    // Connection 1 answers its first request, then closes when the next one arrives, answering nothing:
    // a tenant's keep-alive timeout racing the gateway's next request on that connection.
    const { url, results } = await setup(
      rawTenant((_head, socket, connection) => {
        if (connection === 1 && socket.bytesWritten > 0) socket.destroy();
        else socket.write(`HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\n${connection}`);
      }),
    );
    expect(await (await request(`${url}/databases`)).body.text()).toBe('1');
    expect(await (await request(`${url}/databases`)).body.text()).toBe('2');
    expect(results).toHaveLength(2);

    // The same race with a small PUT (a document write; a drain moving the tenant closes its connections):
    // it was held whole, so it goes again, and the tenant on the new connection answers it.
    const closingOnce = () =>
      rawTenant((_head, socket, connection) => {
        if (connection === 1 && socket.bytesWritten > 0) socket.destroy();
        else socket.write(`HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\n${connection}`);
      });
    const put = await setup(closingOnce());
    await (await request(`${put.url}/databases`)).body.dump();
    const written = await request(`${put.url}/databases/db/docs?id=a`, { method: 'PUT', body: '{"a":1}' });
    expect([written.statusCode, await written.body.text()]).toEqual([200, '2']);
    expect(put.results[1]).toMatchObject({ status: 200, bytesIn: 7 });

    // A POST, or a PUT larger than what is held whole, streams: it cannot be sent twice, so it fails as the
    // tenant being gone.
    for (const [method, body] of [
      ['POST', '{}'],
      ['PUT', 'x'.repeat(REPLAYABLE_BODY_BYTES + 1)],
    ] as const) {
      const streamed = await setup(closingOnce());
      await (await request(`${streamed.url}/databases`)).body.dump();
      const sent = await request(`${streamed.url}/databases/db/docs?id=a`, { method, body });
      expect(sent.statusCode).toBe(502);
      await sent.body.dump();
      expect(streamed.results[1]).toBeInstanceOf(TenantUnreachable);
    }
  });

  it('fails a malformed answer as TenantUnreachable, and the next request gets a good connection', async () => {
    const { url, results } = await setup(
      rawTenant((head, socket) => {
        if (head.startsWith('GET /bad'))
          socket.write('HTTP/1.1 200 OK\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\n');
        else socket.write('HTTP/1.1 200 OK\r\ncontent-length: 2\r\n\r\nok');
      }),
    );
    const bad = await request(`${url}/bad`);
    expect(bad.statusCode).toBe(502);
    await bad.body.dump();
    expect(results[0]).toBeInstanceOf(TenantUnreachable);
    expect((results[0] as Error).message).toMatch(/Content-Length/);
    expect(await (await request(`${url}/good`)).body.text()).toBe('ok');
  });

  it('never writes a request target that could end its request line early', async () => {
    let reached = 0;
    const { url, results } = await setup(
      (_req, res) => {
        reached++;
        res.end('ok');
      },
      new TenantPools(),
      (req) => decodeURIComponent(req.url ?? '/'), // a caller that wrongly decodes the target
    );
    const response = await request(`${url}/databases%20x%0D%0AHost:%20evil`);
    expect(response.statusCode).toBe(502);
    await response.body.dump();
    expect((results[0] as Error).message).toMatch(/refusing to forward/);
    expect(reached).toBe(0);
  });
});
