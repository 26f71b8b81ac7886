// Fleet routing end to end, with real parts only: a real PostgreSQL (the test kit's) as the control store,
// two host processes in fleet mode with their relays on mutual TLS, real tenant processes, and the gateway
// in fleet routing reached over mutual TLS by a principal's certificate. The client never learns which
// host serves it; these tests look behind the gateway (the store, each host's list of tenants) to prove
// the way the requests took. Waits are polls; nothing asserts how long anything took.
import { HostTenantListSchema } from '@rookery/protocol';
import { type PostgresServer, startPostgres, waitForExit } from '@rookery/testkit';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FleetStack, startFleetStack } from './test-fixtures/fleet-stack.js';
import type { Client } from './test-fixtures/gateway-clients.js';
import { createLargeDocuments } from './test-fixtures/large-documents.js';
import { streamMemory } from './test-fixtures/stream-memory.js';
import { openThroughGateway } from './test-fixtures/websocket.js';

const doc = (name: string) => ({ Name: name, '@metadata': { '@collection': 'Users' } });

describe('a gateway routing by placement, through the hosts over mutual TLS', () => {
  let postgres: PostgresServer;
  let drop: () => Promise<void>;
  let fleet: FleetStack;
  let admin: Client;

  /** The tenants each host still alive runs now, by host id (the fixture names them h1, h2, … in order). */
  async function running(): Promise<Record<string, string[]>> {
    const alive = fleet.hosts
      .map((host, i) => ({ host, id: `h${i + 1}` }))
      .filter(({ host }) => host.process.exitCode === null && host.process.signalCode === null);
    const entries = await Promise.all(
      alive.map(async ({ host, id }) => {
        const list = HostTenantListSchema.parse((await host.call('GET', '/tenants')).body);
        return [id, list.tenants.filter((t) => t.state === 'running').map((t) => t.tenantId)];
      }),
    );
    return Object.fromEntries(entries);
  }

  beforeAll(async () => {
    postgres = await startPostgres();
    const database = await postgres.freshDatabase('fleet_routing');
    drop = database.drop;
    // A placement is used for a minute unless a host says otherwise: a move is found by the 421 alone.
    fleet = await startFleetStack({ hosts: 2, controlDatabaseUrl: database.url, placementCacheMs: 60_000 });
    admin = await fleet.tenantAdmin({ id: 'acme', name: 'Acme' }, 'acme-admin');
  }, 180_000);

  afterAll(async () => {
    await fleet?.close();
    await drop?.();
    await postgres?.stop();
  });

  it("places an unplaced tenant at its first request and serves writes and reads through its host's relay", async () => {
    expect(await fleet.store.getPlacement('acme')).toBeNull();
    // The first request may meet the tenant's start: the host answers 503 TenantStarting past its deadline.
    await expect
      .poll(async () => (await admin.call('PUT', '/admin/databases', { Name: 'shop' })).status, {
        timeout: 60_000,
      })
      .toBe(201);
    const placement = await fleet.store.getPlacement('acme');
    expect(placement).toMatchObject({ epoch: 1 });
    expect(placement!.address).toMatch(/^https:\/\/127\.0\.0\.1:\d+$/);
    expect((await admin.call('PUT', '/databases/shop/docs?id=users/1', doc('Ada'))).status).toBe(201);
    const read = await admin.call('GET', '/databases/shop/docs?id=users/1');
    expect(read.status).toBe(200);
    expect(read.text).toContain('Ada');
    // Only the owner runs it.
    const now = await running();
    expect(now[placement!.hostId]).toEqual(['acme']);
    expect(Object.values(now).flat()).toEqual(['acme']);
  });

  it('streams a large answer through the relay, whole and in order', async () => {
    const lines = Array.from({ length: 2_000 }, (_, i) =>
      JSON.stringify({
        Id: `rows/${i}`,
        Document: { N: i, Text: 'z'.repeat(2_000), '@metadata': { '@collection': 'Rows' } },
      }),
    );
    const inserted = await admin.call('POST', '/databases/shop/bulk_insert', `${lines.join('\n')}\n`, {
      'content-type': 'application/x-ndjson',
    });
    expect(inserted.text).toContain('"Completed"');
    const streamed = await request(`${fleet.gateway.url}/databases/shop/streams/docs?collection=Rows`, {
      dispatcher: admin.agent,
    });
    expect(streamed.statusCode).toBe(200);
    const text = await streamed.body.text();
    expect(text.length).toBeGreaterThan(2_000 * 2_000);
    const ids = [...text.matchAll(/"rows\/(\d+)"/g)].map((m) => Number(m[1]));
    expect(new Set(ids).size).toBe(2_000);
  });

  it('carries a WebSocket upgrade (the changes feed) through the relay', async () => {
    const socket = await openThroughGateway(
      fleet.gateway.url,
      fleet.ca.certPem,
      admin,
      '/databases/shop/changes',
    );
    if (socket.kind !== 'open') throw new Error(`expected an open socket, got ${JSON.stringify(socket)}`);
    socket.ws.send(JSON.stringify({ Command: 'watch-collection', Param: 'Users', CommandId: 1 }));
    await expect
      .poll(() => socket.messages.map((m) => JSON.parse(m)))
      .toContainEqual({ Type: 'Confirm', CommandId: 1 });
    expect((await admin.call('PUT', '/databases/shop/docs?id=users/2', doc('Grace'))).status).toBe(201);
    await expect.poll(() => socket.messages.join('\n')).toContain('users/2');
    socket.ws.close(1000);
    expect((await socket.closed).code).toBe(1000);
  });

  it('serves the same GET through a one-machine gateway on the owner, beside the relay (for a benchmark to compare)', async () => {
    const placement = (await fleet.store.getPlacement('acme'))!;
    const owner = fleet.hosts.find((h) => h.relayAddress === placement.address)!;
    const local = await fleet.localGateway(owner);
    const localAdmin = fleet.clientsOf(local).connect(admin);
    const viaRelay = await admin.call('GET', '/databases/shop/docs?id=users/1');
    const viaSocket = await localAdmin.call('GET', '/databases/shop/docs?id=users/1');
    expect(viaSocket.status).toBe(200);
    expect(viaSocket.json).toEqual(viaRelay.json);
  });

  it("keeps a gateway process's memory bounded for a slow reader of a large answer through the relay", async () => {
    // ~67 MB of NDJSON streamed through a gateway process of its own in fleet routing: the relay's TLS
    // socket is paused like a Unix socket when the client reads slowly, and the host's pipe pauses the tenant.
    await createLargeDocuments(admin, {
      database: 'big',
      collection: 'Bigs',
      count: 10_000,
      textBytes: 6_600,
    });
    const gateway = await fleet.forkGateway();
    try {
      const measured = await streamMemory(gateway, admin.agent, {
        database: 'big',
        collection: 'Bigs',
        limit: 10_000,
      });
      expect(measured.bytes).toBeGreaterThan(64 * 1024 * 1024);
      console.log(
        `fleet gateway RSS streaming ${(measured.bytes / 2 ** 20).toFixed(0)} MB through a relay: fast reader +${measured.fastGrowthMb.toFixed(1)} MB, slow reader ${measured.slowAboveFastMb.toFixed(1)} MB above that`,
      );
      // Holding the body would show as 64 MB or more. The bound is twice one machine's (gateway.test.ts):
      // TLS decrypts into fresh buffers per record, and the slow read lasts seconds longer, so more garbage
      // waits for a GC; measured 16.0 MB once on this machine under other suites' load.
      expect(measured.fastGrowthMb).toBeLessThan(128);
      expect(measured.slowAboveFastMb).toBeLessThanOrEqual(32);
    } finally {
      await gateway.stop();
    }
  }, 300_000);

  it('follows a move: the old owner answers 421, and the very next request, a POST with a body, is answered by the new owner', async () => {
    const before = (await fleet.store.getPlacement('acme'))!;
    const oldHost = fleet.hosts[Number(before.hostId.slice(1)) - 1]!;
    const newHostId = before.hostId === 'h1' ? 'h2' : 'h1';
    // A planned move: stopped on the old owner first (its pooled relays close with it), then moved.
    expect((await oldHost.call('POST', '/tenants/acme/stop')).status).toBe(200);
    const moved = await fleet.store.movePlacement('acme', before.epoch, newHostId);
    expect(moved).toMatchObject({ hostId: newHostId, epoch: before.epoch + 1 });
    // The gateway still believes in the old placement (cached for a minute). The first request is a POST
    // with a body whose route asks nothing of the host beforehand (a batch: no storage check, whose stats
    // call would find the move first): its relay gets the old owner's 421 before any byte reaches a tenant,
    // and the request goes to the new owner, which answers it itself — the database does not exist there.
    const batch = await admin.call('POST', '/databases/nowhere/bulk_docs', {
      Commands: [{ Type: 'PUT', Id: 'users/9', Document: doc('Edsger') }],
    });
    expect(batch.status).toBe(404);
    expect(batch.json).toMatchObject({ code: 'DatabaseNotFound' });
    // A new owner without the mirror's copy starts empty here (failover restores are not this test's).
    expect((await admin.call('PUT', '/admin/databases', { Name: 'moved' })).status).toBe(201);
    const now = await running();
    expect(now[newHostId]).toEqual(['acme']);
    expect(now[before.hostId]).toEqual([]);
    expect((await admin.call('PUT', '/databases/moved/docs?id=users/3', doc('Linus'))).status).toBe(201);
  });

  it('answers 503 TenantUnavailable with Retry-After, naming the unreachable host, while the owner is down and still placed', async () => {
    const placement = (await fleet.store.getPlacement('acme'))!;
    const owner = fleet.hosts[Number(placement.hostId.slice(1)) - 1]!;
    owner.process.kill('SIGKILL');
    await waitForExit(owner.process);
    const reply = await admin.call('GET', '/databases/moved/docs?id=users/3');
    expect(reply.status).toBe(503);
    expect(reply.json).toMatchObject({ code: 'TenantUnavailable' });
    expect(String(reply.json.detail)).toContain(`host ${placement.hostId} cannot be reached`);
    expect(Number(reply.headers['retry-after'])).toBeGreaterThan(0);
  });
});
