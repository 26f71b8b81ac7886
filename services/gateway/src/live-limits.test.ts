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
const ONE_EACH = {
  socketsPerTenant: 1,
  streamsPerTenant: 1,
  queriesPerTenant: 1,
  bulkPerTenant: 1,
  queuedPerTenant: 1,
};

describe('live connection limits', () => {
  it('default to 1,000 WebSockets, 128 streams, 64 queries and 16 bulk inserts per tenant, read from the environment', () => {
    expect(DEFAULT_LIVE_LIMITS).toEqual({
      socketsPerTenant: 1_000,
      streamsPerTenant: 128,
      queriesPerTenant: 64,
      bulkPerTenant: 16,
      queueWaitMs: 5_000,
      queuedPerTenant: 1_024,
    });
    expect(loadGatewayConfig(TOKEN)).toMatchObject({
      maxSocketsPerTenant: 1_000,
      maxStreamsPerTenant: 128,
      maxQueriesPerTenant: 64,
      maxBulkPerTenant: 16,
      tenantConnections: 256,
      queueWaitMs: 5_000,
      maxQueuedPerTenant: 1_024,
    });
    expect(
      loadGatewayConfig({
        ...TOKEN,
        ROOKERY_GATEWAY_QUEUE_WAIT_MS: '0',
        ROOKERY_GATEWAY_MAX_QUEUED_PER_TENANT: '7',
      }),
    ).toMatchObject({ queueWaitMs: 0, maxQueuedPerTenant: 7 });
    expect(() => loadGatewayConfig({ ...TOKEN, ROOKERY_GATEWAY_QUEUE_WAIT_MS: '-1' })).toThrow(
      /ROOKERY_GATEWAY_QUEUE_WAIT_MS/,
    );
    expect(() => loadGatewayConfig({ ...TOKEN, ROOKERY_GATEWAY_MAX_QUEUED_PER_TENANT: '0' })).toThrow(
      /ROOKERY_GATEWAY_MAX_QUEUED_PER_TENANT/,
    );
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
    const limits = new LiveConnectionLimits({ ...ONE_EACH, queueWaitMs: 0 });
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

describe('a query or bulk insert over its limit', () => {
  const stillOpen = () => new AbortController().signal;
  /** Settles to the release, or to the refusal's code and detail; `undefined` while it still waits. */
  function watch(waiting: Promise<() => void>) {
    const state: { release?: () => void; refused?: { code: string; detail: string } } = {};
    waiting.then(
      (release) => {
        state.release = release;
      },
      (error: { code: string; message: string }) => {
        state.refused = { code: error.code, detail: error.message };
      },
    );
    return state;
  }
  const turns = () => new Promise((resolve) => setImmediate(resolve));

  it('waits for a place, first come first served, and takes the one given back', async () => {
    const limits = new LiveConnectionLimits({ ...ONE_EACH, queueWaitMs: 600_000, queuedPerTenant: 2 });
    const first = await limits.place('acme', 'query', stillOpen);
    const second = watch(limits.place('acme', 'query', stillOpen));
    const third = watch(limits.place('acme', 'query', stillOpen));
    // The queue is full: one more is refused at once, saying which setting bounds the queue.
    await expect(limits.place('acme', 'query', stillOpen)).rejects.toMatchObject({
      code: 'TooManyRequestsInFlight',
      status: 429,
      retryAfterSeconds: 1,
      message: expect.stringMatching(/2 more already wait.*ROOKERY_GATEWAY_MAX_QUEUED_PER_TENANT/),
    });
    // Another tenant and another class do not wait behind acme's queries.
    (await limits.place('globex', 'query', stillOpen))();
    (await limits.place('acme', 'bulk', stillOpen))();
    await turns();
    expect([second.release, third.release]).toEqual([undefined, undefined]);
    first();
    first(); // a second release gives nothing back twice
    await turns();
    expect(second.release).toBeTypeOf('function');
    expect(third.release).toBeUndefined();
    expect(limits.held('acme', 'query')).toBe(1);
    second.release?.();
    await turns();
    expect(third.release).toBeTypeOf('function');
    third.release?.();
    expect(limits.held('acme', 'query')).toBe(0);
    // Nobody waits now: a place is taken at once.
    (await limits.place('acme', 'query', stillOpen))();
  });

  it('hands places freed by a grown share (another gateway left) to those waiting, before a newcomer', async () => {
    let share = 1;
    const limits = new LiveConnectionLimits(
      { ...ONE_EACH, queriesPerTenant: 4, queueWaitMs: 600_000, queuedPerTenant: 10 },
      () => share,
    );
    const first = await limits.place('acme', 'query', stillOpen);
    const waiting = watch(limits.place('acme', 'query', stillOpen));
    await turns();
    expect(waiting.release).toBeUndefined();
    share = 2; // no release: the place is free all the same
    const newcomer = watch(limits.place('acme', 'query', stillOpen));
    await turns();
    expect(waiting.release).toBeTypeOf('function');
    expect(newcomer.release).toBeUndefined();
    first();
    await turns();
    expect(newcomer.release).toBeTypeOf('function');
    waiting.release?.();
    newcomer.release?.();
    expect(limits.held('acme', 'query')).toBe(0);
  });

  it('is refused once its wait is over, and a client that leaves stops waiting and takes no place', async () => {
    const limits = new LiveConnectionLimits({ ...ONE_EACH, queueWaitMs: 50, queuedPerTenant: 10 });
    const holding = await limits.place('acme', 'bulk', stillOpen);
    await expect(limits.place('acme', 'bulk', stillOpen)).rejects.toMatchObject({
      code: 'TooManyRequestsInFlight',
      message: expect.stringMatching(
        /waited 50 ms.*ROOKERY_GATEWAY_QUEUE_WAIT_MS.*ROOKERY_GATEWAY_MAX_BULK_PER_TENANT/,
      ),
    });
    const client = new AbortController();
    const leaving = watch(limits.place('acme', 'bulk', () => client.signal));
    client.abort(new Error('the client went away'));
    await turns();
    expect(leaving).toEqual({ refused: { code: undefined, detail: 'the client went away' } });
    holding();
    expect(limits.held('acme', 'bulk')).toBe(0);
    // WebSockets and streams never wait: their places free at their clients' will.
    const stream = await limits.place('acme', 'stream', stillOpen);
    await expect(limits.place('acme', 'stream', stillOpen)).rejects.toMatchObject({
      code: 'TooManyLiveConnections',
    });
    stream();
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
