// The proxy between two real HTTP servers: a stand-in tenant on a Unix socket and a front server that
// proxies every request to it (plain HTTP: TLS is the gateway's business, not the proxy's). What the
// end-to-end tests cannot easily provoke: an answer before the body was read, a tenant that is gone, a
// client that leaves mid-answer.
import http from 'node:http';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { type ProxyOutcome, proxyToTenant, TenantAgents, TenantUnreachable } from './proxy.js';
import { localServers } from './test-fixtures/local-servers.js';

const servers = localServers();

/** A stand-in tenant on a Unix socket, a front server proxying to it; each proxied request's outcome or error. */
async function setup(tenant: http.RequestListener) {
  const tenantServer = http.createServer(tenant);
  const socketPath = await servers.tenant(tenantServer, 'rookery-proxy-');
  const agents = new TenantAgents();
  servers.defer(() => agents.close());
  const results: Array<ProxyOutcome | Error> = [];
  let settled: () => void = () => {};
  const front = http.createServer((req, res) => {
    proxyToTenant(req, res, {
      socketPath,
      path: req.url ?? '/',
      agent: agents.for(socketPath),
      requestId: 'req-1',
    }).then(
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
  return { url, results, nextResult, closeTenant };
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
});
