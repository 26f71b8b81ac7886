// The server's timeouts are configuration, tested as such (no test waits out Node's defaults): the
// defaults and their environment variables, and, with every timeout scaled down to a fraction of a
// second, a proxied stream that pauses longer than any of them still arrives whole.
import { once } from 'node:events';
import http from 'node:http';
import { request } from 'undici';
import { describe, expect, it } from 'vitest';
import { loadGatewayConfig } from './config.js';
import { proxyToTenant } from './proxy.js';
import { applyServerTimeouts, DEFAULT_SERVER_TIMEOUTS } from './server-timeouts.js';
import { TenantPools } from './tenant-pool.js';
import { localServers } from './test-fixtures/local-servers.js';

const servers = localServers();

const TOKEN = { ROOKERY_INTERNAL_TOKEN: 'a-token-of-16-chars-at-least' };

describe('server timeouts', () => {
  it('default to bounds on receiving requests only, and read overrides from the environment', () => {
    expect(loadGatewayConfig(TOKEN)).toMatchObject(DEFAULT_SERVER_TIMEOUTS);
    expect(
      loadGatewayConfig({
        ...TOKEN,
        ROOKERY_GATEWAY_HEADERS_TIMEOUT_MS: '5000',
        ROOKERY_GATEWAY_REQUEST_TIMEOUT_MS: '0',
        ROOKERY_GATEWAY_KEEPALIVE_TIMEOUT_MS: '10000',
      }),
    ).toMatchObject({ headersTimeoutMs: 5_000, requestTimeoutMs: 0, keepAliveTimeoutMs: 10_000 });
    expect(() =>
      loadGatewayConfig({
        ...TOKEN,
        ROOKERY_GATEWAY_HEADERS_TIMEOUT_MS: '60000',
        ROOKERY_GATEWAY_REQUEST_TIMEOUT_MS: '30000',
      }),
    ).toThrow(/ROOKERY_GATEWAY_HEADERS_TIMEOUT_MS/);

    const server = http.createServer();
    server.timeout = 120_000; // whatever it was, an inactivity timeout is never left on
    applyServerTimeouts(server, DEFAULT_SERVER_TIMEOUTS);
    expect([server.headersTimeout, server.requestTimeout, server.keepAliveTimeout, server.timeout]).toEqual([
      60_000, 300_000, 65_000, 0,
    ]);
  });

  it('never cut a proxied answer that pauses, and a reader that stalls, for longer than each of them', async () => {
    const chunk = `${'x'.repeat(1023)}\n`;
    // A tenant stream: a burst of 8 MB (more than every buffer between it and a stalled reader holds),
    // then three lines 400 ms apart.
    const tenant = http.createServer(async (_req, res) => {
      res.writeHead(200, { 'content-type': 'application/x-ndjson' });
      for (let i = 0; i < 8 * 1024; i++) {
        if (!res.write(chunk)) await once(res, 'drain');
      }
      for (let i = 0; i < 3; i++) {
        await new Promise((resolve) => setTimeout(resolve, 400));
        res.write(chunk);
      }
      res.end();
    });
    const socketPath = await servers.tenant(tenant, 'rookery-timeouts-');
    const pools = new TenantPools();
    servers.defer(() => pools.close());
    // The gateway's server settings, every timeout scaled down below the pauses, checked every 20 ms.
    const front = http.createServer({ connectionsCheckingInterval: 20 }, (req, res) => {
      proxyToTenant(req, res, { path: req.url ?? '/', pool: pools.for(socketPath), requestId: 'r' }).catch(
        () => res.destroy(),
      );
    });
    applyServerTimeouts(front, { headersTimeoutMs: 100, requestTimeoutMs: 150, keepAliveTimeoutMs: 100 });
    const address = await servers.front(front);

    const response = await request(`http://${address}/stream`);
    expect(response.statusCode).toBe(200);
    let bytes = 0;
    let stalled = false;
    for await (const piece of response.body as AsyncIterable<Buffer>) {
      bytes += piece.length;
      if (!stalled) {
        stalled = true; // the reader stops reading for 500 ms, alive all along
        await new Promise((resolve) => setTimeout(resolve, 500));
      }
    }
    expect(bytes).toBe((8 * 1024 + 3) * chunk.length);
  });
});
