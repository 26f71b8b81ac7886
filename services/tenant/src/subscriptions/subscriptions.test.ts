import { LiveCloseCodes } from '@rookery/protocol';
import { describe, expect, it } from 'vitest';
import { refusedUpgrade, TestSocket } from '../test-fixtures/live-client.js';
import { sharedTenantServer } from '../test-fixtures/tenant-server.js';

// Subscriptions end to end: the real tenant server, real WebSocket consumers. Every test has its own
// subscription and its own collection, so tests do not see each other's documents.
// Pings every 100 ms: a consumer that stops answering them is found within the test's patience.
const tenant = sharedTenantServer({ database: 'Shop', server: { livePingIntervalMs: 100 } });
const { call } = tenant;

interface Batch {
  Type: 'Batch';
  BatchId: number;
  LastEtag: number;
  Items: { Id: string; ChangeVector: string; Document: Record<string, unknown> }[];
}

const connectUrl = (name: string, query = '', db = 'shop') =>
  tenant.wsUrl(`/databases/${db}/subscriptions/${name}/connect${query ? `?${query}` : ''}`);

const connect = async (name: string, query = '') => TestSocket.open(connectUrl(name, query));

const create = (name: string, query: string, extra: Record<string, unknown> = {}) =>
  call('PUT', '/databases/shop/subscriptions', { Name: name, Query: query, ...extra });

const put = (collection: string, ...docs: [string, Record<string, unknown>][]) =>
  call('POST', '/databases/shop/bulk_docs', {
    Commands: docs.map(([id, body]) => ({
      Type: 'PUT',
      Id: id,
      Document: { ...body, '@metadata': { '@collection': collection, ...(body['@metadata'] as object) } },
    })),
  });

const ids = (batch: Batch) => batch.Items.map((item) => item.Id);

/** A round trip on the socket: whatever the server sent before answering the ping has arrived. */
const roundTrip = (socket: TestSocket) =>
  new Promise<void>((resolve) => {
    socket.ws.once('pong', () => resolve());
    socket.ws.ping();
  });

/** Waits until `check` holds (the server lets go of a socket a moment after the client saw it close). */
async function eventually(check: () => Promise<boolean>): Promise<void> {
  while (!(await check())) await new Promise((resolve) => setTimeout(resolve, 10));
}

describe('subscriptions: HTTP', () => {
  it('are created, listed, read and deleted, with names compared without case', async () => {
    const created = await create('new-users', 'from Users where Age > 30');
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({
      Name: 'new-users',
      Query: 'from Users where Age > 30',
      QueryParameters: {},
      LastAcknowledgedEtag: 0,
      LastAcknowledgedAt: null,
      Connected: false,
    });
    expect(Date.parse(created.json.CreatedAt as string)).not.toBeNaN();
    const again = await create('NEW-users', 'from Users');
    expect(again.status).toBe(409);
    expect(again.json.code).toBe('SubscriptionAlreadyExists');
    const listed = await call('GET', '/databases/shop/subscriptions');
    expect((listed.json.Results as { Name: string }[]).map((s) => s.Name)).toContain('new-users');
    const one = await call('GET', '/databases/shop/subscriptions/New-Users');
    expect(one.json).toEqual(created.json);
    expect((await call('DELETE', '/databases/shop/subscriptions/NEW-USERS')).status).toBe(204);
    const gone = await call('GET', '/databases/shop/subscriptions/new-users');
    expect(gone.status).toBe(404);
    expect(gone.json.code).toBe('SubscriptionNotFound');
    expect((await call('DELETE', '/databases/shop/subscriptions/new-users')).json.code).toBe(
      'SubscriptionNotFound',
    );
  });

  it('starts after every existing document with StartFrom Now', async () => {
    await put('Olds', ['olds/1', {}]);
    const stats = await call('GET', '/databases/shop/stats');
    const created = await create('from-now', 'from Olds', { StartFrom: 'Now' });
    expect(created.json.LastAcknowledgedEtag).toBe(stats.json.LastDocEtag);
  });

  it('keep the $parameters of their query, return them in the state, and refuse one not given', async () => {
    const query = 'from Priced where Price >= $min and Tag in ($tags)';
    const parameters = { min: 10, tags: ['red', 'Blue'] };
    const created = await create('priced', query, { QueryParameters: parameters });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({ Query: query, QueryParameters: parameters });
    expect((await call('GET', '/databases/shop/subscriptions/priced')).json.QueryParameters).toEqual(
      parameters,
    );
    const missing = await create('unpriced', query, { QueryParameters: { min: 10 } });
    expect([missing.status, missing.json.code]).toEqual([400, 'InvalidQuery']);
    expect(missing.json.detail).toMatch(/\$tags.*QueryParameters has no "tags"/);
    const notAValue = await create('unpriced', query, { QueryParameters: { min: { gt: 10 }, tags: [] } });
    expect([notAValue.status, notAValue.json.code]).toEqual([400, 'InvalidRequest']);
    expect(notAValue.json.detail).toMatch(/QueryParameters\.min/);
    expect((await call('GET', '/databases/shop/subscriptions/unpriced')).status).toBe(404);
  });

  it('refuses bad definitions with problems that say what is wrong', async () => {
    const cases: [unknown, number, string, RegExp][] = [
      [{ Name: 'bad name!', Query: 'from Users' }, 400, 'InvalidRequest', /Name/],
      [{ Name: 'x', Query: 'from Users', Extra: 1 }, 400, 'InvalidRequest', /Extra/],
      [{ Name: 'x', Query: "from index 'Users/ByName'" }, 400, 'InvalidQuery', /from Collection/],
      [{ Name: 'x', Query: "from Users where search(Name, 'a')" }, 400, 'InvalidQuery', /search/],
      [{ Name: 'x', Query: 'from Users order by Name' }, 400, 'InvalidQuery', /order by/],
      [{ Name: 'x', Query: 'from Users where' }, 400, 'InvalidQuery', /.+/],
    ];
    for (const [body, status, code, detail] of cases) {
      const reply = await call('PUT', '/databases/shop/subscriptions', body);
      expect({ status: reply.status, code: reply.json.code }, JSON.stringify(body)).toEqual({ status, code });
      expect(reply.json.detail).toMatch(detail);
    }
    const noDb = await call('PUT', '/databases/nope/subscriptions', { Name: 'x', Query: 'from Users' });
    expect(noDb.json.code).toBe('DatabaseNotFound');
  });
});

describe('subscriptions: connecting', () => {
  it('refuses before the upgrade, with HTTP problems', async () => {
    await create('refusals', 'from Refusals');
    const expectRefused = async (url: string, status: number, code: string) => {
      const refused = await refusedUpgrade(url);
      expect({ status: refused.status, code: refused.body.code }, url).toEqual({ status, code });
    };
    await expectRefused(connectUrl('refusals', '', 'nope'), 404, 'DatabaseNotFound');
    await expectRefused(connectUrl('missing'), 404, 'SubscriptionNotFound');
    await expectRefused(connectUrl('refusals', 'batchSize=0'), 400, 'InvalidRequest');
    await expectRefused(connectUrl('refusals', 'strategy=Whenever'), 400, 'InvalidRequest');
    await expectRefused(connectUrl('refusals', 'since=1'), 400, 'InvalidRequest');
    const plain = await call('GET', '/databases/shop/subscriptions/refusals/connect');
    expect(plain.status).toBe(400);
    expect(plain.json.detail).toMatch(/WebSocket/);
  });

  it('sends matching documents in etag order, in batches of batchSize, each only after the previous ack', async () => {
    await put(
      'Gated',
      ['gated/1', { Age: 10 }],
      ['gated/2', { Age: 40 }],
      ['gated/3', { Age: 50 }],
      ['gated/4', { Age: 60, '@metadata': { '@archived': true } }],
      ['gated/5', { Age: 70 }],
    );
    await call('DELETE', '/databases/shop/docs?id=gated/5');
    await put('Gated', ['gated/6', { Age: 80 }], ['gated/1', { Age: 90 }]);
    await create('gated', 'from Gated where Age > 30');
    const socket = await connect('gated', 'batchSize=2');
    expect(await socket.next()).toEqual({ Type: 'Connected', Name: 'gated', LastAcknowledgedEtag: 0 });
    const first = await socket.next<Batch>();
    expect(first).toMatchObject({ Type: 'Batch', BatchId: 1 });
    expect(ids(first)).toEqual(['gated/2', 'gated/3']);
    expect(first.Items[0]!.Document).toMatchObject({ Age: 40, '@metadata': { '@id': 'gated/2' } });
    expect(first.Items[0]!.ChangeVector).toMatch(/^A:\d+-/);
    // More documents arrive; nothing more is sent until batch 1 is acknowledged.
    await put('Gated', ['gated/7', { Age: 99 }]);
    await roundTrip(socket);
    expect(socket.pending).toEqual([]);
    expect((await call('GET', '/databases/shop/subscriptions/gated')).json).toMatchObject({
      LastAcknowledgedEtag: 0,
      Connected: true,
    });
    socket.send({ Type: 'Ack', BatchId: 1 });
    const second = await socket.next<Batch>();
    // Deleted (gated/5) and archived (gated/4) documents are skipped; gated/1 comes in its updated place.
    expect(ids(second)).toEqual(['gated/6', 'gated/1']);
    expect(second.BatchId).toBe(2);
    const state = (await call('GET', '/databases/shop/subscriptions/gated')).json;
    expect(state.LastAcknowledgedEtag).toBe(first.LastEtag);
    expect(state.LastAcknowledgedAt).not.toBeNull();
    socket.send({ Type: 'Ack', BatchId: 2 });
    expect(ids(await socket.next<Batch>())).toEqual(['gated/7']);
    await socket.close();
  });

  it('sends the documents its query matches with its $parameters', async () => {
    await put(
      'Tagged',
      ['tagged/1', { Price: 5, Tag: 'red' }],
      ['tagged/2', { Price: 20, Tag: 'RED' }],
      ['tagged/3', { Price: 30, Tag: 'green' }],
      ['tagged/4', { Price: 40, Tag: 'blue' }],
    );
    await create('tagged', 'from Tagged where Price >= $min and Tag in ($tags)', {
      QueryParameters: { min: 10, tags: ['red', 'Blue'] },
    });
    const socket = await connect('tagged');
    await socket.next(); // Connected
    expect(ids(await socket.next<Batch>())).toEqual(['tagged/2', 'tagged/4']);
    await socket.close();
  });

  it('delivers documents written after connecting, without being asked again', async () => {
    await create('live', 'from Live');
    const socket = await connect('live');
    expect(await socket.next()).toMatchObject({ Type: 'Connected', LastAcknowledgedEtag: 0 });
    await put('Live', ['live/1', { N: 1 }]);
    expect(ids(await socket.next<Batch>())).toEqual(['live/1']);
    await socket.close();
  });

  it('holds a partial batch for maxWaitMs, and sends it as soon as it is full', async () => {
    await put('Held', ['held/1', {}]);
    await create('held', 'from Held');
    const socket = await connect('held', 'batchSize=2&maxWaitMs=60000');
    await socket.next(); // Connected
    await put('Held', ['held/2', {}]);
    expect(ids(await socket.next<Batch>())).toEqual(['held/1', 'held/2']);
    await socket.close();
  });

  it('sends again what was not acknowledged, and never what was (at least once)', async () => {
    await put('Again', ['again/1', {}], ['again/2', {}], ['again/3', {}]);
    await create('again', 'from Again');
    const first = await connect('again', 'batchSize=1');
    await first.next();
    const one = await first.next<Batch>();
    expect(ids(one)).toEqual(['again/1']);
    first.send({ Type: 'Ack', BatchId: one.BatchId });
    expect(ids(await first.next<Batch>())).toEqual(['again/2']);
    await first.close(); // batch 2 was never acknowledged
    // WaitForFree: the server lets go of the first connection a moment after it closed.
    const second = await connect('again', 'batchSize=5&strategy=WaitForFree');
    expect(await second.next()).toMatchObject({ Type: 'Connected', LastAcknowledgedEtag: one.LastEtag });
    expect(ids(await second.next<Batch>())).toEqual(['again/2', 'again/3']);
    await second.close();
  });

  it('keeps one consumer: OpenIfFree is refused with 409 while another is connected', async () => {
    await create('busy', 'from Busy');
    const holder = await connect('busy');
    await holder.next();
    const refused = await refusedUpgrade(connectUrl('busy', 'strategy=OpenIfFree'));
    expect(refused).toMatchObject({ status: 409, body: { code: 'SubscriptionInUse' } });
    await holder.close();
  });

  it('TakeOver ends the current consumer (Error, then 4410) and ignores its late ack', async () => {
    await put('Taken', ['taken/1', {}]);
    await create('taken', 'from Taken');
    const old = await connect('taken');
    await old.next();
    const batch = await old.next<Batch>();
    // The old consumer acknowledges only once it was told it lost the subscription: too late to count.
    old.ws.on('message', (data) => {
      if ((JSON.parse(String(data)) as { Type: string }).Type === 'Error')
        old.send({ Type: 'Ack', BatchId: batch.BatchId });
    });
    const taker = await connect('taken', 'strategy=TakeOver');
    expect(await old.next()).toMatchObject({ Type: 'Error', Code: 'SubscriptionTakenOver' });
    expect((await old.closed).code).toBe(LiveCloseCodes.SubscriptionTakenOver);
    expect(await taker.next()).toMatchObject({ Type: 'Connected', LastAcknowledgedEtag: 0 });
    expect(ids(await taker.next<Batch>())).toEqual(['taken/1']);
    expect((await call('GET', '/databases/shop/subscriptions/taken')).json.LastAcknowledgedEtag).toBe(0);
    await taker.close();
  });

  it('WaitForFree waits for the consumer to leave, then starts after what it acknowledged', async () => {
    await put('Queue', ['queue/1', {}], ['queue/2', {}]);
    await create('queue', 'from Queue');
    const holder = await connect('queue', 'batchSize=1');
    await holder.next();
    const batch = await holder.next<Batch>();
    const waiter = await connect('queue', 'strategy=WaitForFree');
    holder.send({ Type: 'Ack', BatchId: batch.BatchId });
    await holder.next<Batch>(); // queue/2, never acknowledged
    await holder.close();
    expect(await waiter.next()).toMatchObject({ Type: 'Connected', LastAcknowledgedEtag: batch.LastEtag });
    expect(ids(await waiter.next<Batch>())).toEqual(['queue/2']);
    await waiter.close();
  });

  it('closes with 4400 on anything but the ack of the batch waiting for it', async () => {
    await put('Rude', ['rude/1', {}]);
    await create('rude', 'from Rude');
    for (const frame of ['not json', { Type: 'Ack', BatchId: 7 }, { Type: 'Nack', BatchId: 1 }]) {
      const socket = await connect('rude', 'strategy=WaitForFree');
      await socket.next();
      await socket.next<Batch>();
      socket.send(frame);
      expect(await socket.next()).toMatchObject({ Type: 'Error', Code: 'InvalidRequest' });
      expect((await socket.closed).code).toBe(LiveCloseCodes.ProtocolError);
    }
  });

  it('frees the subscription of a consumer that stops answering pings', async () => {
    await create('silent', 'from Silent');
    const silent = await TestSocket.open(connectUrl('silent'), { autoPong: false });
    await silent.next();
    expect((await silent.closed).code).toBe(1006); // cut, not closed: nobody would answer
    await eventually(
      async () => (await call('GET', '/databases/shop/subscriptions/silent')).json.Connected === false,
    );
    const next = await connect('silent');
    expect(await next.next()).toMatchObject({ Type: 'Connected' });
    await next.close();
  });

  it('closes its consumer with 4404 when the subscription is deleted', async () => {
    await create('doomed', 'from Doomed');
    const socket = await connect('doomed');
    await socket.next();
    expect((await call('DELETE', '/databases/shop/subscriptions/doomed')).status).toBe(204);
    expect((await socket.closed).code).toBe(LiveCloseCodes.SubscriptionNotFound);
  });

  it('closes with 4404 a consumer admitted to a subscription that no longer exists', async () => {
    await create('vanishing', 'from Vanishing');
    const holder = await connect('vanishing');
    await holder.next();
    const waiter = await connect('vanishing', 'strategy=WaitForFree');
    // Deleted without the route (which would end both consumers): the waiting one learns it when admitted.
    expect(await tenant.server.catalog.get('shop').deleteSubscription('vanishing')).toBe(true);
    await holder.close();
    expect((await waiter.closed).code).toBe(LiveCloseCodes.SubscriptionNotFound);
  });

  it('closes its consumer with 4503 when the database is deleted', async () => {
    expect((await call('PUT', '/admin/databases', { Name: 'temp' })).status).toBe(201);
    expect(
      (await call('PUT', '/databases/temp/subscriptions', { Name: 's', Query: 'from Things' })).status,
    ).toBe(201);
    const socket = await TestSocket.open(connectUrl('s', '', 'temp'));
    await socket.next();
    expect((await call('DELETE', '/admin/databases?name=temp')).status).toBe(204);
    expect((await socket.closed).code).toBe(LiveCloseCodes.DatabaseUnavailable);
  });
});

describe('subscriptions: restarts', () => {
  it('keep their progress when the tenant stops (consumers get 4503) and starts again on the same data', async () => {
    await put('Durable', ['durable/1', {}], ['durable/2', {}]);
    await create('durable', 'from Durable');
    const socket = await connect('durable', 'batchSize=1');
    await socket.next();
    const batch = await socket.next<Batch>();
    socket.send({ Type: 'Ack', BatchId: batch.BatchId });
    await socket.next<Batch>(); // durable/2, not acknowledged
    await tenant.stop();
    expect((await socket.closed).code).toBe(LiveCloseCodes.DatabaseUnavailable);
    await tenant.start();
    const state = (await call('GET', '/databases/shop/subscriptions/durable')).json;
    expect(state).toMatchObject({ LastAcknowledgedEtag: batch.LastEtag, Connected: false });
    const again = await connect('durable');
    expect(await again.next()).toMatchObject({ Type: 'Connected', LastAcknowledgedEtag: batch.LastEtag });
    expect(ids(await again.next<Batch>())).toEqual(['durable/2']);
    await again.close();
  });
});
