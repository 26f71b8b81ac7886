// Two gateways in front of one host and one PostgreSQL control store (the test kit's real server), each with
// its own HTTPS server, store connections, rate buckets, live counts, usage meter and principal cache: what
// a tenant may do must hold for the two together, not for each. Counts, never timings: the gateways' clocks
// are frozen where a rate is measured (a token bucket refills only when the test moves them), heartbeats
// and usage flushes are called by the test, and a revocation is waited for, not timed.
import { type PostgresServer, startPostgres } from '@rookery/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type CommitCutter, startCommitCutter } from './test-fixtures/commit-cutter.js';
import { type SecondGateway, startSecondGateway } from './test-fixtures/second-gateway.js';
import { type Client, type Reply, type Stack, startStack } from './test-fixtures/stack.js';
import { type Opening, openThroughGateway } from './test-fixtures/websocket.js';

/** Heartbeats only when the test asks (gateway.heartbeat()): a timer would move shares mid-count. */
const FLEET = { heartbeatMs: 600_000, ttlMs: 3_600_000 };
const SOCKETS_PER_TENANT = 2;
const QUOTA = 20;

let pg: PostgresServer;
let dropDatabase: () => Promise<void>;
let stack: Stack;
let cutter: CommitCutter;
let second: SecondGateway;

beforeAll(async () => {
  pg = await startPostgres();
  const { url, drop } = await pg.freshDatabase('gateways');
  dropDatabase = drop;
  const liveLimits = { socketsPerTenant: SOCKETS_PER_TENANT };
  stack = await startStack({ controlDatabaseUrl: url, gatewayFleet: FLEET, liveLimits });
  // The second gateway reaches the store through a proxy that can lose a commit's answer.
  cutter = await startCommitCutter(url);
  second = await startSecondGateway(stack, cutter.url, { fleet: FLEET, liveLimits });
  // Each learns of the other (the first heartbeat of each was at its start).
  await stack.gateway.heartbeat();
}, 180_000);

afterAll(async () => {
  await second?.close();
  await cutter?.close();
  await stack?.close();
  await dropDatabase?.();
  await pg?.stop();
});

function tally(replies: Reply[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of replies) {
    const key = r.status === 200 ? '200' : `${r.status} ${String(r.json.code)}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}

async function tenant(id: string, quota?: { requestsPerSecond: number }): Promise<Client> {
  const admin = await stack.tenantAdmin({ id, name: id, quota }, `${id}-admin`);
  await stack.running(id);
  return admin;
}

describe('two gateways: the request rate', () => {
  it(`accept ${QUOTA} of ${3 * QUOTA} requests a second split over both, and a tenant that reaches only one still gets its whole rate`, async () => {
    const admin = await tenant('paced', { requestsPerSecond: QUOTA });
    let now = Date.now();
    stack.clock.now = now;
    second.clock.now = now;
    try {
      // 3 × the quota, every other request through the other gateway, within one frozen second.
      const split = () =>
        Promise.all(
          Array.from({ length: 3 * QUOTA }, (_, i) =>
            i % 2 === 0 ? admin.call('GET', '/databases') : second.call(admin, 'GET', '/databases'),
          ),
        );
      expect(tally(await split())).toEqual({ '200': QUOTA, '429 RateLimited': 2 * QUOTA });

      // Each gateway reported 30 requests: half the rate each, and one more second gives the quota again.
      await stack.gateway.heartbeat();
      await second.gateway.heartbeat();
      now += 1_000;
      stack.clock.now = now;
      second.clock.now = now;
      expect(tally(await split())).toEqual({ '200': QUOTA, '429 RateLimited': 2 * QUOTA });

      // The client's traffic moves to the first gateway (one kept-alive connection does that): until the
      // next heartbeats it has half the rate there…
      await stack.gateway.heartbeat();
      await second.gateway.heartbeat();
      const pinned = () =>
        Promise.all(Array.from({ length: 3 * QUOTA }, () => admin.call('GET', '/databases')));
      now += 1_000;
      stack.clock.now = now;
      second.clock.now = now;
      expect(tally(await pinned())).toEqual({ '200': QUOTA / 2, '429 RateLimited': 3 * QUOTA - QUOTA / 2 });
      // …then all of it, once the other gateway reported that it saw none of it.
      await second.gateway.heartbeat();
      await stack.gateway.heartbeat();
      now += 1_000;
      stack.clock.now = now;
      second.clock.now = now;
      expect(tally(await pinned())).toEqual({ '200': QUOTA, '429 RateLimited': 2 * QUOTA });
      // …and the other gateway, which saw none of it, still lets a request in (half the rate, its default).
      expect((await second.call(admin, 'GET', '/databases')).status).toBe(200);
    } finally {
      stack.clock.now = null;
      second.clock.now = null;
    }
  });
});

describe('two gateways: live connections', () => {
  it(`hold a tenant to ${SOCKETS_PER_TENANT} WebSockets through both together`, async () => {
    const admin = await tenant('held');
    expect((await admin.call('PUT', '/admin/databases', { Name: 'shop' })).status).toBe(201);
    const open = (url: string) => openThroughGateway(url, stack.ca.certPem, admin, '/databases/shop/changes');
    const status = (o: Opening) => (o.kind === 'open' ? 101 : o.kind === 'refused' ? o.status : 0);
    const first = await open(stack.gateway.url);
    const again = await open(stack.gateway.url);
    const other = await open(second.gateway.url);
    const more = await open(second.gateway.url);
    try {
      expect([first, again, other, more].map(status)).toEqual([101, 429, 101, 429]);
      expect(again.kind === 'refused' && again.json).toMatchObject({
        code: 'TooManyLiveConnections',
        limit: 'socketsPerTenant',
        value: SOCKETS_PER_TENANT,
      });
    } finally {
      for (const o of [first, again, other, more]) if (o.kind === 'open') o.ws.close();
    }
  });
});

describe('two gateways: usage', () => {
  it('adds up exactly: each request counted once, also when a flush committed but its answer was lost', async () => {
    const admin = await tenant('metered');
    const from = Date.now() - 60_000;
    for (let i = 0; i < 7; i++) expect((await admin.call('GET', '/databases')).status).toBe(200);
    for (let i = 0; i < 5; i++) expect((await second.call(admin, 'GET', '/databases')).status).toBe(200);
    // The second gateway's flush commits, and the connection drops before the answer: it must retry
    // without counting the five twice.
    cutter.arm();
    await second.gateway.flushUsage();
    expect(cutter.cuts).toBe(1);
    for (let i = 0; i < 2; i++) expect((await second.call(admin, 'GET', '/databases')).status).toBe(200);
    await second.gateway.flushUsage();
    await stack.gateway.flushUsage();
    const rows = await stack.store.usage('metered', from, Date.now() + 60_000);
    expect(rows.reduce((n, r) => n + r.requests, 0)).toBe(7 + 5 + 2);
    // Through /usage of either gateway, the same totals.
    for (const via of [(p: string) => admin.call('GET', p), (p: string) => second.call(admin, 'GET', p)]) {
      const usage = await via(`/usage?from=${from}`);
      const minutes = usage.json.Minutes as { Requests: number }[];
      expect(minutes.reduce((n, m) => n + m.Requests, 0)).toBe(7 + 5 + 2);
    }
  });
});

describe('two gateways: revocation', () => {
  it('a certificate revoked through the first gateway is refused by the second, whose cache still holds it', async () => {
    const admin = await tenant('revoking');
    const issued = await admin.call('POST', '/control/principals', {
      name: 'ci',
      kind: 'program',
      role: { kind: 'tenant-admin' },
    });
    const certificate = await admin.call(
      'POST',
      `/control/principals/${String(issued.json.id)}/certificates`,
      {
        validDays: 1,
      },
    );
    const ci = stack.connect({
      certPem: String(certificate.json.certificatePem),
      keyPem: String(certificate.json.privateKeyPem),
    });
    // The second gateway knows the certificate and, its clock frozen, would trust its cache forever:
    // only the revocation poll can stop it.
    second.clock.now = Date.now();
    try {
      expect((await second.call(ci, 'GET', '/databases')).status).toBe(200);
      const serial = String((certificate.json.certificate as { serial: string }).serial);
      const revoked = await admin.call('POST', `/control/certificates/${serial}/revoke`);
      expect([revoked.status, revoked.json.revokedNow]).toEqual([200, true]);
      await refusedBySecond(ci);
    } finally {
      second.clock.now = null;
    }
  });

  it('a revocation stamped by a clock behind the last one the second gateway saw still reaches it', async () => {
    const admin = await tenant('skewed');
    const [early, late] = [await stack.program('early', 'skewed'), await stack.program('late', 'skewed')];
    second.clock.now = Date.now();
    try {
      for (const who of [admin, early, late])
        expect((await second.call(who, 'GET', '/databases')).status).toBe(200);
      // One control plane revokes with the right time, and the second gateway sees it…
      await stack.store.revokeCertificate(early.serial, Date.now());
      await refusedBySecond(early);
      // …then another, whose clock is 10 s behind (or whose write waited 10 s to commit), revokes another.
      await stack.store.revokeCertificate(late.serial, Date.now() - 10_000);
      await refusedBySecond(late);
    } finally {
      second.clock.now = null;
    }
  });
});

/**
 * Waits until the second gateway refuses the certificate as revoked (the test's timeout is the bound). It
 * asks for a route that does not exist: the certificate is checked first, and nothing counts against the
 * tenant's rate, which a frozen clock never refills.
 */
async function refusedBySecond(who: Pick<Client, 'agent'>): Promise<void> {
  let reply = await second.call(who, 'GET', '/no-such-route');
  while (reply.status === 404) {
    await new Promise((resolve) => setTimeout(resolve, 100));
    reply = await second.call(who, 'GET', '/no-such-route');
  }
  expect([reply.status, reply.json.code]).toEqual([401, 'CertificateRevoked']);
}
