import { LiveCloseCodes, MAX_LIVE_FRAME_BYTES } from '@rookery/protocol';
import { describe, expect, it } from 'vitest';
import { refusedUpgrade, TestSocket } from '../test-fixtures/live-client.js';
import { sharedTenantServer } from '../test-fixtures/tenant-server.js';

// The changes feed end to end: a real tenant server, real WebSocket clients.
const tenant = sharedTenantServer({ database: 'Shop' });
const { call } = tenant;
const changesUrl = (db: string) => tenant.wsUrl(`/databases/${db}/changes`);

const put = (id: string, collection: string, body: Record<string, unknown> = {}) =>
  call('PUT', `/databases/shop/docs?id=${encodeURIComponent(id)}`, {
    ...body,
    '@metadata': { '@collection': collection },
  });

/** Waits until `check` holds (the server side lets go of a socket a moment after the client saw it close). */
async function eventually(check: () => boolean): Promise<void> {
  while (!check()) await new Promise((resolve) => setTimeout(resolve, 10));
}

describe('changes: connecting', () => {
  it('refuses a database that does not exist with the HTTP 404 problem, before the upgrade', async () => {
    const refused = await refusedUpgrade(changesUrl('nope'));
    expect(refused.status).toBe(404);
    expect(refused.body.code).toBe('DatabaseNotFound');
  });

  it('answers a plain GET (no upgrade) with a 400 that says it is a WebSocket', async () => {
    const reply = await call('GET', '/databases/shop/changes');
    expect(reply.status).toBe(400);
    expect(reply.json.code).toBe('InvalidRequest');
    expect(reply.json.detail).toMatch(/WebSocket/);
  });
});

describe('changes: watches', () => {
  it('confirms each command and notifies a watched document after its commit, puts and deletes', async () => {
    const socket = await TestSocket.open(changesUrl('shop'));
    expect(await socket.command({ Command: 'watch-doc', Param: 'USERS/1', CommandId: 1 })).toEqual({
      Type: 'Confirm',
      CommandId: 1,
    });
    const written = await put('users/1', 'Users', { Name: 'Ada' });
    const change = await socket.next();
    expect(change).toEqual({
      Type: 'DocumentChange',
      Value: {
        Id: 'users/1',
        Collection: 'Users',
        CollectionName: 'Users',
        ChangeVector: written.json.ChangeVector,
        Type: 'Put',
        Etag: expect.any(Number),
      },
    });
    expect((await call('DELETE', '/databases/shop/docs?id=users/1')).status).toBe(204);
    expect(await socket.next()).toMatchObject({
      Type: 'DocumentChange',
      Value: { Id: 'users/1', Type: 'Delete', Collection: 'Users' },
    });
    // Unwatched: the next write is not sent (the following watched write proves nothing came before it).
    await socket.command({ Command: 'unwatch-doc', Param: 'users/1', CommandId: 2 });
    await socket.command({ Command: 'watch-doc', Param: 'users/2', CommandId: 3 });
    await put('users/1', 'Users');
    await put('users/2', 'Users');
    expect(await socket.next()).toMatchObject({ Value: { Id: 'users/2' } });
    await socket.close();
  });

  it('watches a collection, an id prefix and all documents, case-insensitively', async () => {
    const [byCollection, byPrefix, all] = await Promise.all([
      TestSocket.open(changesUrl('shop')),
      TestSocket.open(changesUrl('shop')),
      TestSocket.open(changesUrl('shop')),
    ]);
    await byCollection.command({ Command: 'watch-collection', Param: 'orders', CommandId: 1 });
    await byPrefix.command({ Command: 'watch-prefix', Param: 'Orders/2', CommandId: 1 });
    await all.command({ Command: 'watch-all-docs', CommandId: 1 });
    await put('orders/1', 'Orders');
    await put('orders/20', 'Orders');
    await put('companies/1', 'Companies');
    const ids = async (socket: TestSocket, n: number) => {
      const seen: string[] = [];
      for (let i = 0; i < n; i++) seen.push(((await socket.next()).Value as { Id: string }).Id);
      return seen;
    };
    expect(await ids(byCollection, 2)).toEqual(['orders/1', 'orders/20']);
    expect(await ids(byPrefix, 1)).toEqual(['orders/20']);
    expect(await ids(all, 3)).toEqual(['orders/1', 'orders/20', 'companies/1']);

    await all.command({ Command: 'unwatch-all-docs', CommandId: 2 });
    await byCollection.command({ Command: 'unwatch-collection', Param: 'ORDERS', CommandId: 2 });
    await byPrefix.command({ Command: 'unwatch-prefix', Param: 'orders/2', CommandId: 2 });
    for (const socket of [all, byCollection, byPrefix])
      await socket.command({ Command: 'watch-doc', Param: 'marker/1', CommandId: 3 });
    await put('orders/21', 'Orders');
    await put('marker/1', 'Markers');
    for (const socket of [all, byCollection, byPrefix])
      expect(await socket.next()).toMatchObject({ Value: { Id: 'marker/1' } });
    await Promise.all([byCollection.close(), byPrefix.close(), all.close()]);
  });

  it('sends a change once per connection however many watches match it', async () => {
    const socket = await TestSocket.open(changesUrl('shop'));
    await socket.command({ Command: 'watch-doc', Param: 'orders/7', CommandId: 1 });
    await socket.command({ Command: 'watch-prefix', Param: 'orders/', CommandId: 2 });
    await socket.command({ Command: 'watch-collection', Param: 'Orders', CommandId: 3 });
    await socket.command({ Command: 'watch-all-docs', CommandId: 4 });
    await put('orders/7', 'Orders');
    await put('orders/8', 'Orders');
    expect(await socket.next()).toMatchObject({ Value: { Id: 'orders/7' } });
    expect(await socket.next()).toMatchObject({ Value: { Id: 'orders/8' } });
    await socket.close();
  });

  it('notifies index changes: added, batches completed, removed', async () => {
    const all = await TestSocket.open(changesUrl('shop'));
    const one = await TestSocket.open(changesUrl('shop'));
    await all.command({ Command: 'watch-all-indexes', CommandId: 1 });
    await one.command({ Command: 'watch-index', Param: 'pets/byname', CommandId: 1 });
    const definition = { Name: 'Pets/ByName', Maps: [{ Collection: 'Pets', Fields: { Name: 'Name' } }] };
    expect((await call('PUT', '/databases/shop/indexes', definition)).status).toBe(201);
    for (const socket of [all, one])
      expect(await socket.next()).toEqual({
        Type: 'IndexChange',
        Value: { Name: 'Pets/ByName', Type: 'IndexAdded', Etag: expect.any(Number) },
      });

    const written = await put('pets/1', 'Pets', { Name: 'Rex' });
    const etag = Number(/:(\d+)-/.exec(String(written.json.ChangeVector))?.[1]);
    // Batches until the index reached the write (an earlier batch may report an earlier etag).
    for (let batch = await one.next(); ; batch = await one.next()) {
      expect(batch).toMatchObject({
        Type: 'IndexChange',
        Value: { Name: 'Pets/ByName', Type: 'BatchCompleted' },
      });
      if ((batch.Value as { Etag: number }).Etag >= etag) break;
    }
    // A write to another collection leaves the index as it was: no notification for it (each would make
    // clients' aggressive caches suspect). The next one is the batch that indexed pets/2.
    await put('owners/1', 'Owners', { Name: 'Ann' });
    const next = await put('pets/2', 'Pets', { Name: 'Fido' });
    const nextEtag = Number(/:(\d+)-/.exec(String(next.json.ChangeVector))?.[1]);
    expect(await one.next()).toMatchObject({
      Value: { Name: 'Pets/ByName', Type: 'BatchCompleted', Etag: nextEtag },
    });

    expect((await call('DELETE', '/databases/shop/indexes?name=Pets/ByName')).status).toBe(204);
    for (let change = await one.next(); ; change = await one.next()) {
      if ((change.Value as { Type: string }).Type === 'BatchCompleted') continue;
      expect(change).toMatchObject({ Value: { Name: 'Pets/ByName', Type: 'IndexRemoved' } });
      break;
    }
    await Promise.all([all.close(), one.close()]);
  });
});

describe('changes: bad input', () => {
  it('answers a frame that does not parse with an Error and keeps the connection', async () => {
    const socket = await TestSocket.open(changesUrl('shop'));
    expect(await socket.command({ Command: 'watch-everything', CommandId: 5 } as never)).toMatchObject({
      Type: 'Error',
      Code: 'InvalidRequest',
      CommandId: 5,
    });
    socket.send('{not json');
    expect(await socket.next()).toMatchObject({ Type: 'Error', Code: 'InvalidJson' });
    expect(await socket.command({ Command: 'watch-doc', CommandId: 6 })).toMatchObject({
      Type: 'Error',
      Code: 'InvalidRequest',
      CommandId: 6,
    });
    socket.ws.send(Buffer.from('{}'), { binary: true });
    expect(await socket.next()).toMatchObject({ Type: 'Error', Code: 'InvalidRequest' });
    expect(await socket.command({ Command: 'watch-all-docs', CommandId: 7 })).toEqual({
      Type: 'Confirm',
      CommandId: 7,
    });
    await socket.close();
  });

  it('closes on a frame larger than 64 KiB (1009), and lets go of the connection', async () => {
    const before = tenant.server.live.changesConnections;
    const socket = await TestSocket.open(changesUrl('shop'));
    socket.send({ Command: 'watch-doc', Param: 'x'.repeat(MAX_LIVE_FRAME_BYTES), CommandId: 1 });
    expect((await socket.closed).code).toBe(1009);
    // The client hears the close before the server's socket has ended: the gauge drops a moment later.
    await eventually(() => tenant.server.live.changesConnections === before);
  });
});

describe('changes: the end of a connection', () => {
  it('closes with 4503 when the database is deleted, and lets go of it', async () => {
    const before = tenant.server.live.changesConnections;
    expect((await call('PUT', '/admin/databases', { Name: 'scratch' })).status).toBe(201);
    const socket = await TestSocket.open(changesUrl('scratch'));
    await socket.command({ Command: 'watch-all-docs', CommandId: 1 });
    expect((await call('DELETE', '/admin/databases?name=scratch')).status).toBe(204);
    expect((await socket.closed).code).toBe(LiveCloseCodes.DatabaseUnavailable);
    await eventually(() => tenant.server.live.changesConnections === before);
  });

  it('releases its listeners when the client closes', async () => {
    const before = tenant.server.live.changesConnections;
    const sockets = await Promise.all([1, 2, 3].map(() => TestSocket.open(changesUrl('shop'))));
    expect(tenant.server.live.changesConnections).toBe(before + 3);
    await Promise.all(sockets.map((s) => s.close()));
    await eventually(() => tenant.server.live.changesConnections === before);
  });
});

describe('changes: liveness', () => {
  // A server of its own, pinging every 50 ms.
  const quick = sharedTenantServer({ database: 'shop', server: { livePingIntervalMs: 50 } });
  const quickUrl = () => quick.wsUrl('/databases/shop/changes');

  it('keeps a peer that answers pings, and cuts one that missed two', async () => {
    const alive = await TestSocket.open(quickUrl());
    const silent = await TestSocket.open(quickUrl(), { autoPong: false });
    // The silent peer is cut without a close frame (1006 on its side); the live one is still served.
    expect((await silent.closed).code).toBe(1006);
    expect(await alive.command({ Command: 'watch-all-docs', CommandId: 1 })).toEqual({
      Type: 'Confirm',
      CommandId: 1,
    });
    await eventually(() => quick.server.live.changesConnections === 1);
    await alive.close();
  });

  it('closes every socket with 4503 when the tenant stops', async () => {
    const socket = await TestSocket.open(quickUrl());
    await quick.stop();
    expect((await socket.closed).code).toBe(LiveCloseCodes.DatabaseUnavailable);
  });
});
