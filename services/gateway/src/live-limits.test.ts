// Per-tenant limits on live connections: the configuration, and end to end on the real stack (gateway,
// host, tenant processes, the real `ws` client and undici over TLS) with small limits: two WebSockets and
// one NDJSON stream per tenant.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadGatewayConfig } from './config.js';
import { DEFAULT_LIVE_LIMITS, LiveConnectionLimits } from './live-limits.js';
import { holdStream } from './test-fixtures/large-documents.js';
import type { Client, Stack } from './test-fixtures/stack.js';
import { startTwoTenants } from './test-fixtures/two-tenants.js';
import { type Opening, openThroughGateway } from './test-fixtures/websocket.js';

const TOKEN = { ROOKERY_INTERNAL_TOKEN: 'a-token-of-16-chars-at-least' };

describe('live connection limits', () => {
  it('default to 1,000 WebSockets, 128 streams, 64 queries and 16 bulk inserts per tenant, read from the environment', () => {
    expect(DEFAULT_LIVE_LIMITS).toEqual({
      socketsPerTenant: 1_000,
      streamsPerTenant: 128,
      queriesPerTenant: 64,
      bulkPerTenant: 16,
    });
    expect(loadGatewayConfig(TOKEN)).toMatchObject({
      maxSocketsPerTenant: 1_000,
      maxStreamsPerTenant: 128,
      maxQueriesPerTenant: 64,
      maxBulkPerTenant: 16,
      tenantConnections: 256,
    });
    expect(
      loadGatewayConfig({
        ...TOKEN,
        ROOKERY_GATEWAY_MAX_SOCKETS_PER_TENANT: '50',
        ROOKERY_GATEWAY_MAX_STREAMS_PER_TENANT: '8',
        ROOKERY_GATEWAY_MAX_QUERIES_PER_TENANT: '9',
        ROOKERY_GATEWAY_MAX_BULK_PER_TENANT: '2',
        ROOKERY_GATEWAY_TENANT_CONNECTIONS: '20',
      }),
    ).toMatchObject({
      maxSocketsPerTenant: 50,
      maxStreamsPerTenant: 8,
      maxQueriesPerTenant: 9,
      maxBulkPerTenant: 2,
      tenantConnections: 20,
    });
    // The slow classes together must leave the tenant's other requests some of the gateway's connections to it.
    expect(() => loadGatewayConfig({ ...TOKEN, ROOKERY_GATEWAY_MAX_STREAMS_PER_TENANT: '176' })).toThrow(
      /ROOKERY_GATEWAY_MAX_STREAMS_PER_TENANT.*ROOKERY_GATEWAY_TENANT_CONNECTIONS/s,
    );
    expect(() =>
      loadGatewayConfig({
        ...TOKEN,
        ROOKERY_GATEWAY_TENANT_CONNECTIONS: '20',
        ROOKERY_GATEWAY_MAX_STREAMS_PER_TENANT: '10',
        ROOKERY_GATEWAY_MAX_QUERIES_PER_TENANT: '9',
        ROOKERY_GATEWAY_MAX_BULK_PER_TENANT: '1',
      }),
    ).toThrow(/fewer than ROOKERY_GATEWAY_TENANT_CONNECTIONS/);
    expect(() => loadGatewayConfig({ ...TOKEN, ROOKERY_GATEWAY_MAX_SOCKETS_PER_TENANT: '0' })).toThrow(
      /ROOKERY_GATEWAY_MAX_SOCKETS_PER_TENANT/,
    );
  });

  it('count per tenant and kind, and give a place back once, however often it is released', () => {
    const limits = new LiveConnectionLimits({
      socketsPerTenant: 1,
      streamsPerTenant: 1,
      queriesPerTenant: 1,
      bulkPerTenant: 1,
    });
    const release = limits.hold('acme', 'websocket');
    expect(() => limits.hold('acme', 'websocket')).toThrow(
      expect.objectContaining({ code: 'TooManyLiveConnections', status: 429 }),
    );
    limits.hold('acme', 'stream');
    limits.hold('globex', 'websocket');
    release();
    release();
    expect(limits.held('acme', 'websocket')).toBe(0);
    limits.hold('acme', 'websocket');
    expect(limits.held('acme', 'websocket')).toBe(1);
    // A query or bulk insert refused is told when to retry: one of the tenant's own ends within seconds.
    limits.hold('acme', 'query');
    limits.hold('acme', 'bulk');
    for (const [kind, limit] of [
      ['query', 'queriesPerTenant'],
      ['bulk', 'bulkPerTenant'],
    ] as const) {
      expect(() => limits.hold('acme', kind)).toThrow(
        expect.objectContaining({ code: 'TooManyRequestsInFlight', status: 429, retryAfterSeconds: 1 }),
      );
      expect(() => limits.hold('acme', kind)).toThrow(
        expect.objectContaining({ details: { limit, value: 1 } }),
      );
    }
    limits.hold('globex', 'query');
  });
});

describe('live connection limits through the gateway', () => {
  let stack: Stack;
  let adminA: Client;
  let adminB: Client;

  beforeAll(async () => {
    ({ stack, adminA } = await startTwoTenants({ liveLimits: { socketsPerTenant: 2, streamsPerTenant: 1 } }));
    adminB = await stack.program('globex-admin', 'globex');
    expect((await adminB.call('PUT', '/admin/databases', { Name: 'shop' })).status).toBe(201);
  }, 120_000);
  afterAll(async () => {
    await stack?.close();
  });

  const open = (who: Client, path: string) =>
    openThroughGateway(stack.gateway.url, stack.ca.certPem, who, path);
  async function opened(who: Client, path: string) {
    const opening = await open(who, path);
    if (opening.kind !== 'open') throw new Error(`expected an open socket, got ${JSON.stringify(opening)}`);
    return opening;
  }
  const refusal = (opening: Opening) =>
    opening.kind === 'refused'
      ? [opening.status, opening.json.code, opening.json.limit, opening.json.value]
      : [opening.kind];

  it("refuses a WebSocket over the tenant's limit with 429 TooManyLiveConnections until one of its own closes", async () => {
    const changes = await opened(adminA, '/databases/shop/changes');
    // The tenant's own refusals open no socket, and hold no place.
    for (let i = 0; i < 3; i++) {
      expect(refusal(await open(adminA, '/databases/nope/changes')).slice(0, 2)).toEqual([
        404,
        'DatabaseNotFound',
      ]);
    }
    // A subscription's consumer is a WebSocket like the changes feed.
    const created = await adminA.call('PUT', '/databases/shop/subscriptions', {
      Name: 'capped',
      Query: 'from Users',
    });
    expect(created.status).toBe(201);
    const consumer = await opened(adminA, '/databases/shop/subscriptions/capped/connect');

    const over = await open(adminA, '/databases/shop/changes');
    expect(refusal(over)).toEqual([429, 'TooManyLiveConnections', 'socketsPerTenant', 2]);
    if (over.kind !== 'refused') throw new Error('not refused');
    expect(over.json.detail).toMatch(/2 WebSockets open.*ROOKERY_GATEWAY_MAX_SOCKETS_PER_TENANT/);
    // A place frees when a socket closes, not after a time: no Retry-After.
    expect(over.headers['retry-after']).toBeUndefined();
    // Another tenant's sockets are its own.
    const globex = await opened(adminB, '/databases/shop/changes');

    changes.ws.close();
    await changes.closed;
    // The gateway lets go of a socket once both its sides closed.
    await expect.poll(() => stack.gateway.openWebSockets(), { timeout: 10_000 }).toBe(2);
    const again = await opened(adminA, '/databases/shop/changes');
    for (const socket of [again, consumer, globex]) socket.ws.close();
    await expect.poll(() => stack.gateway.openWebSockets(), { timeout: 10_000 }).toBe(0);
  });

  it('refuses a second NDJSON stream while one is in flight, serving ordinary requests meanwhile', async () => {
    const held = await holdStream(adminA, stack.gateway.url);
    // The reader stops reading: the stream stays in flight, held by backpressure.
    for (const [method, path, body] of [
      ['GET', '/databases/streamed/streams/docs?startsWith=rows/1&pageSize=1'],
      ['POST', '/databases/streamed/streams/queries', { Query: 'from Rows where N = 1' }],
      // Spelt as the tenant's router also reads it: still a stream.
      ['GET', '/databases/streamed/%73treams/docs?pageSize=1'],
    ] as const) {
      const over = await adminA.call(method, path, body);
      expect([over.status, over.json.code, over.json.limit, over.json.value], path).toEqual([
        429,
        'TooManyLiveConnections',
        'streamsPerTenant',
        1,
      ]);
      expect(over.json.detail).toMatch(/ROOKERY_GATEWAY_MAX_STREAMS_PER_TENANT/);
    }
    expect((await adminA.call('GET', '/databases/streamed/docs?id=rows/1')).status).toBe(200);
    expect(
      (await adminA.call('POST', '/databases/streamed/queries', { Query: 'from Rows where N = 1' })).status,
    ).toBe(200);
    // Another tenant streams as it likes.
    expect((await adminB.call('GET', '/databases/shop/streams/docs')).status).toBe(200);

    held.body.destroy(); // the reader goes away: its place is given back as the gateway lets go of the stream
    await expect
      .poll(async () => (await adminA.call('GET', '/databases/streamed/streams/docs?pageSize=1')).status, {
        timeout: 10_000,
      })
      .toBe(200);
  });
});
