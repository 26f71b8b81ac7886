// WebSockets through the gateway, end to end: the real `ws` client over TLS with client certificates,
// the gateway, the host and real tenant processes serving the changes feed and subscriptions.
import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import WebSocket from 'ws';
import type { Client, Stack } from './test-fixtures/stack.js';
import { startTwoTenants } from './test-fixtures/two-tenants.js';
import { type Opening, openThroughGateway } from './test-fixtures/websocket.js';

let stack: Stack;
let adminA: Client;
let readerA: Client;
let otherDbA: Client;
let operator: Client;

const doc = (name: string) => ({ Name: name, '@metadata': { '@collection': 'Users' } });

beforeAll(async () => {
  // A sweep every 200 ms: revocations and session ends show within a second of the directory seeing them.
  ({ stack, adminA, readerA, operator } = await startTwoTenants({ liveSweepMs: 200 }));
  otherDbA = await stack.program('acme-other', 'acme', { kind: 'database', access: { other: 'read-write' } });
}, 120_000);
afterAll(async () => {
  await stack?.close();
});

function open(who: Client | null, path: string, headers: Record<string, string> = {}): Promise<Opening> {
  return openThroughGateway(stack.gateway.url, stack.ca.certPem, who, path, headers);
}

async function opened(who: Client, path: string, headers: Record<string, string> = {}) {
  const opening = await open(who, path, headers);
  if (opening.kind !== 'open') throw new Error(`expected an open socket, got ${JSON.stringify(opening)}`);
  return opening;
}

/** How the socket closed, or null while it is still open after `ms`: a bound for a failing run, not a measurement. */
function closedWithin(socket: { closed: Promise<{ code: number }> }, ms = 10_000) {
  return Promise.race([socket.closed, new Promise<null>((resolve) => setTimeout(() => resolve(null), ms))]);
}

const refusal = (opening: Opening) =>
  opening.kind === 'refused' ? [opening.status, opening.json.code] : [opening.kind];

/** Sends a changes command and waits for its Confirm. */
async function watch(socket: { ws: WebSocket; messages: string[] }, command: Record<string, unknown>) {
  socket.ws.send(JSON.stringify(command));
  await expect
    .poll(() => socket.messages.map((m) => JSON.parse(m)))
    .toContainEqual({ Type: 'Confirm', CommandId: command.CommandId });
}

const documentChanges = (messages: string[]) =>
  messages
    .map((m) => JSON.parse(m) as { Type: string; Value?: { Id: string } })
    .filter((m) => m.Type === 'DocumentChange')
    .map((m) => m.Value!.Id);

describe('WebSocket upgrades through the gateway', () => {
  it('carries the changes feed to a principal that may read the database, read-only included', async () => {
    const socket = await opened(readerA, '/databases/shop/changes');
    await watch(socket, { Command: 'watch-collection', Param: 'Users', CommandId: 1 });
    expect((await adminA.call('PUT', '/databases/shop/docs?id=users/1', doc('Ada'))).status).toBe(201);
    await expect.poll(() => documentChanges(socket.messages)).toEqual(['users/1']);
    expect(stack.gateway.openWebSockets()).toBe(1);
    socket.ws.close(1000);
    expect((await socket.closed).code).toBe(1000);
    await expect.poll(() => stack.gateway.openWebSockets()).toBe(0);
  });

  it('lets operators name the tenant, and only name it', async () => {
    const socket = await opened(operator, '/tenants/acme/databases/shop/changes');
    await watch(socket, { Command: 'watch-all-docs', CommandId: 7 });
    socket.ws.close();
    expect(refusal(await open(operator, '/databases/shop/changes'))).toEqual([400, 'TenantRequired']);
  });

  it('refuses callers as it refuses their requests, before anything reaches the tenant', async () => {
    // No certificate: the TLS handshake itself fails.
    expect((await open(null, '/databases/shop/changes')).kind).toBe('failed');
    // Another database, another tenant (existing or not): 403, as for HTTP.
    expect(refusal(await open(otherDbA, '/databases/shop/changes'))).toEqual([403, 'Forbidden']);
    expect(refusal(await open(adminA, '/tenants/globex/databases/shop/changes'))).toEqual([403, 'Forbidden']);
    expect(refusal(await open(adminA, '/tenants/nobody/databases/shop/changes'))).toEqual([403, 'Forbidden']);
    // Only routes under a database upgrade.
    expect(refusal(await open(adminA, '/databases'))).toEqual([404, 'RouteNotFound']);
    expect(refusal(await open(adminA, '/control/principals'))).toEqual([404, 'RouteNotFound']);

    const revoked = await stack.program('revoked', 'acme');
    await stack.store.revokeCertificate(revoked.serial, Date.now());
    await expect
      .poll(async () => refusal(await open(revoked, '/databases/shop/changes')), { timeout: 5_000 })
      .toEqual([401, 'CertificateRevoked']);
  });

  it("relays the tenant's own refusals as they are", async () => {
    expect(refusal(await open(adminA, '/databases/nowhere/changes'))).toEqual([404, 'DatabaseNotFound']);
    expect(refusal(await open(adminA, '/databases/shop/subscriptions/ghost/connect'))).toEqual([
      404,
      'SubscriptionNotFound',
    ]);
    const created = await adminA.call('PUT', '/databases/shop/subscriptions', {
      Name: 'all-users',
      Query: 'from Users',
    });
    expect(created.status).toBe(201);
    const consumer = await opened(readerA, '/databases/shop/subscriptions/all-users/connect');
    await expect.poll(() => consumer.messages.map((m) => JSON.parse(m).Type)).toContain('Batch');
    expect(refusal(await open(readerA, '/databases/shop/subscriptions/all-users/connect'))).toEqual([
      409,
      'SubscriptionInUse',
    ]);
    // Creating one is a write: not for a read-only principal.
    const write = await readerA.call('PUT', '/databases/shop/subscriptions', {
      Name: 'x',
      Query: 'from Users',
    });
    expect([write.status, write.json.code]).toEqual([403, 'Forbidden']);
    consumer.ws.close();
    await consumer.closed;
  });

  it("holds a person's certificate to a two-factor session, from a cookie or bound to the certificate", async () => {
    const { client, secret } = await stack.person('pat', 'acme');
    expect(refusal(await open(client, '/databases/shop/changes'))).toEqual([401, 'TwoFactorRequired']);
    const session = await client.call('POST', '/auth/2fa', { code: await generate({ secret }), minutes: 5 });
    expect(session.status).toBe(201);
    const cookie = String(session.headers['set-cookie']).split(';')[0]!;
    const socket = await opened(client, '/databases/shop/changes', { cookie });
    await watch(socket, { Command: 'watch-all-docs', CommandId: 1 });

    // The socket does not outlive the session it opened under.
    stack.clock.now = Date.now() + 6 * 60_000;
    try {
      expect((await closedWithin(socket))?.code).toBe(1006);
      expect(refusal(await open(client, '/databases/shop/changes', { cookie }))).toEqual([
        401,
        'TwoFactorRequired',
      ]);
    } finally {
      stack.clock.now = null;
    }

    const { client: bound, secret: boundSecret } = await stack.person('quinn', 'acme');
    const opened2fa = await bound.call('POST', '/auth/2fa', {
      code: await generate({ secret: boundSecret }),
      binding: 'certificate',
    });
    expect(opened2fa.status).toBe(201);
    const boundSocket = await opened(bound, '/databases/shop/changes');
    boundSocket.ws.close();
  });

  it('cuts an open socket within seconds of its certificate being revoked, and releases the tenant side', async () => {
    const victim = await stack.program('victim', 'acme', { kind: 'database', access: { shop: 'read-only' } });
    const socket = await opened(victim, '/databases/shop/changes');
    await watch(socket, { Command: 'watch-all-docs', CommandId: 1 });
    await expect.poll(() => stack.supervisor.info('acme').inFlight, { timeout: 5_000 }).toBeGreaterThan(0);
    await stack.store.revokeCertificate(victim.serial, Date.now());
    // The directory polls revocations every second; the sweep runs every 200 ms here.
    expect((await closedWithin(socket))?.code).toBe(1006);
    expect(socket.ws.readyState).toBe(WebSocket.CLOSED);
    // The tenant reports its requests in flight every second: the cut socket is not one of them.
    await expect.poll(() => stack.supervisor.info('acme').inFlight, { timeout: 5_000 }).toBe(0);
  });

  it('wakes a sleeping tenant, and refuses over the request rate with Retry-After', async () => {
    const admin = await stack.tenantAdmin(
      { id: 'sleepy', name: 'Sleepy', quota: { requestsPerSecond: 2, storageBytes: 1 << 30 } },
      'sleepy-admin',
    );
    // The bucket (2 a second, refilled as the gateway's clock moves) is counted on a clock held still:
    // on the real one, a burst whose handshakes reach the gateway half a second apart on a loaded machine
    // finds a token refilled for each, and none is refused.
    const frozen = Date.now();
    stack.clock.now = frozen;
    try {
      await stack.running('sleepy'); // its first start is not what this test is about
      expect((await admin.call('PUT', '/admin/databases', { Name: 'db' })).status).toBe(201);
      await stack.supervisor.stop('sleepy');
      expect(stack.supervisor.info('sleepy').state).toBe('stopped');
      stack.clock.now = frozen + 1_000; // a second later: the bucket is full again (2 tokens)
      const socket = await opened(admin, '/databases/db/changes'); // 1 token left
      expect(stack.supervisor.info('sleepy').state).toBe('running');
      await watch(socket, { Command: 'watch-all-docs', CommandId: 1 });
      socket.ws.close();

      const burst = await Promise.all([1, 2, 3].map(() => open(admin, '/databases/db/changes')));
      const limited = burst.find((o) => o.kind === 'refused');
      if (limited?.kind !== 'refused') throw new Error('no upgrade was rate limited');
      expect([limited.status, limited.json.code, limited.json.limit]).toEqual([
        429,
        'RateLimited',
        'requestsPerSecond',
      ]);
      expect(Number(limited.headers['retry-after'])).toBeGreaterThanOrEqual(1);
      expect(burst.filter((o) => o.kind === 'open')).toHaveLength(1); // the one token left
      for (const o of burst) if (o.kind === 'open') o.ws.close();
    } finally {
      stack.clock.now = null;
    }
  });

  it('meters an upgrade as one request and its frames as they flow, before the socket closes', async () => {
    const admin = await stack.tenantAdmin({ id: 'metered', name: 'Metered' }, 'metered-admin');
    expect((await admin.call('PUT', '/admin/databases', { Name: 'db' })).status).toBe(201);
    const socket = await opened(admin, '/databases/db/changes');
    const commands = Array.from({ length: 20 }, (_, i) =>
      JSON.stringify({ Command: 'watch-prefix', Param: `orders/${i}/`, CommandId: i }),
    );
    for (const command of commands) socket.ws.send(command);
    await expect.poll(() => socket.messages.length).toBe(20);
    // A client's frame carries 6 bytes of header and mask; the server's 2.
    const sentBytes = commands.reduce((n, c) => n + c.length + 6, 0);
    const receivedBytes = socket.messages.reduce((n, m) => n + m.length + 2, 0);
    const usage = async () => {
      const minutes = (await admin.call('GET', '/usage')).json.Minutes as {
        Requests: number;
        BytesIn: number;
        BytesOut: number;
      }[];
      const sum = (k: 'Requests' | 'BytesIn' | 'BytesOut') => minutes.reduce((n, m) => n + m[k], 0);
      return { requests: sum('Requests'), bytesIn: sum('BytesIn'), bytesOut: sum('BytesOut') };
    };
    const createBody = JSON.stringify({ Name: 'db' }).length;
    // Still open: its traffic is already metered (a sweep, then the usage flush /usage does).
    await expect
      .poll(async () => {
        const u = await usage();
        return u.bytesIn >= createBody + sentBytes && u.bytesOut >= receivedBytes;
      })
      .toBe(true);
    const during = await usage();
    expect(during.requests).toBe(2); // the database creation and the upgrade
    expect(during.bytesIn - createBody).toBeLessThan(sentBytes + 64); // pongs, at most
    socket.ws.close();
    await socket.closed;
  });
});

// Last: it closes the gateway (the stack's close closes it again, which is harmless).
describe('gateway shutdown', () => {
  it('cuts open sockets instead of waiting for them to end', async () => {
    const socket = await opened(adminA, '/databases/shop/changes');
    await stack.gateway.close(); // upgraded sockets count as the server's connections: this would hang
    expect((await closedWithin(socket))?.code).toBe(1006);
    expect(stack.gateway.openWebSockets()).toBe(0);
  });
});
