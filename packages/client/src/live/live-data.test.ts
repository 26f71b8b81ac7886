import { spawn } from 'node:child_process';
import path from 'node:path';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DocumentStore } from '../document-store.js';
import {
  StreamInterruptedError,
  SubscriptionInUseError,
  SubscriptionNotFoundError,
  SubscriptionTakenOverError,
  TwoFactorRequiredError,
} from '../errors.js';
import type { SubscriptionBatch } from '../subscriptions/subscription-worker.js';
import { type StackWithStores, startStackWithStores } from '../test-fixtures/stack-store.js';
import type { DocumentChange, IndexChange } from './frames.js';

// Changes, aggressive caching, streams and subscriptions against the real service over TLS
// (WebSockets through the gateway's upgrade proxy, NDJSON through its streaming proxy).
let env: StackWithStores;
let store: DocumentStore;

const here = path.dirname(fileURLToPath(import.meta.url));
const nextTick = () => new Promise<void>((resolve) => setImmediate(resolve));

async function put(target: DocumentStore, id: string, document: Record<string, unknown>): Promise<void> {
  const session = target.openSession();
  await session.store(document, id);
  await session.saveChanges();
}

/** The values an async iterator yields until `enough` says so of them (within the test's timeout). */
async function takeUntil<T>(iterable: AsyncIterable<T>, enough: (values: T[]) => boolean): Promise<T[]> {
  const out: T[] = [];
  if (enough(out)) return out;
  for await (const value of iterable) {
    out.push(value);
    if (enough(out)) break;
  }
  return out;
}

/** The first `count` values an async iterator yields (within the test's timeout). */
const take = <T>(iterable: AsyncIterable<T>, count: number): Promise<T[]> =>
  takeUntil(iterable, (values) => values.length >= count);

beforeAll(async () => {
  env = await startStackWithStores('live');
  store = env.store();
}, 120_000);
afterAll(async () => {
  await env?.close();
});

describe('changes', () => {
  it('notifies documents, collections, prefixes and indexes after the server confirmed the watch', async () => {
    const changes = store.changes();
    const doc = changes.forDocument('Orders/1');
    const collection = changes.forDocumentsInCollection('orders');
    const prefix = changes.forDocumentsStartingWith('orders/');
    const all = changes.forAllDocuments();
    const indexes = changes.forAllIndexes();
    await Promise.all([doc, collection, prefix, all, indexes].map((o) => o.ensureSubscribedNow()));

    const seenByListener: DocumentChange[] = [];
    doc.subscribe((change) => seenByListener.push(change));
    const docIterator = take(doc, 2);
    const collectionIterator = take(collection, 3);
    const prefixIterator = take(prefix, 3);
    const allIterator = take(all, 3);
    const indexIterator = take<IndexChange>(indexes, 1);

    await put(store, 'orders/1', { Total: 1, '@metadata': { '@collection': 'Orders' } });
    await put(store, 'orders/2', { Total: 2, '@metadata': { '@collection': 'Orders' } });
    const session = store.openSession();
    session.delete('orders/1');
    await session.saveChanges();
    // A query makes an automatic index: its batches are index changes.
    await store
      .openSession()
      .query({ collection: 'Orders' })
      .whereGreaterThan('Total', 0)
      .waitForNonStaleResults()
      .toList();

    const [docChanges, collectionChanges, prefixChanges, allChanges, indexChanges] = await Promise.all([
      docIterator,
      collectionIterator,
      prefixIterator,
      allIterator,
      indexIterator,
    ]);
    expect(docChanges.map((c) => [c.Id.toLowerCase(), c.Type])).toEqual([
      ['orders/1', 'Put'],
      ['orders/1', 'Delete'],
    ]);
    expect(seenByListener.map((c) => c.Type)).toEqual(['Put', 'Delete']);
    expect(collectionChanges.map((c) => c.Id.toLowerCase())).toEqual(['orders/1', 'orders/2', 'orders/1']);
    expect(prefixChanges.map((c) => c.Id.toLowerCase())).toEqual(['orders/1', 'orders/2', 'orders/1']);
    expect(allChanges.map((c) => [c.Id.toLowerCase(), c.Collection, c.Type])).toEqual([
      ['orders/1', 'Orders', 'Put'],
      ['orders/2', 'Orders', 'Put'],
      ['orders/1', 'Orders', 'Delete'],
    ]);
    expect(collectionChanges[0]).toMatchObject({ Collection: 'Orders', Type: 'Put' });
    expect(typeof collectionChanges[0]?.Etag).toBe('number');
    expect(indexChanges[0]?.Name).toMatch(/^Auto\/Orders/);
    for (const observable of [doc, collection, prefix, all, indexes]) observable.close();
  });

  it("notifies a static index's batches to forIndex, and no other index's", async () => {
    // The documents first: each index's first batch then has them to index.
    await put(store, 'invoices/1', { Total: 10, '@metadata': { '@collection': 'Invoices' } });
    await put(store, 'receipts/1', { Total: 20, '@metadata': { '@collection': 'Receipts' } });
    const changes = store.changes();
    const invoices = changes.forIndex('Invoices/ByTotal');
    const everyIndex = changes.forAllIndexes();
    await Promise.all([invoices.ensureSubscribedNow(), everyIndex.ensureSubscribedNow()]);
    // Both watch over one connection, and a listener hears each notification as it is received, before an
    // iterator is resumed with it: once `everyIndex` yielded one, `invoices` was offered all up to it.
    const toInvoices: IndexChange[] = [];
    invoices.subscribe((change) => toInvoices.push(change));
    const names = ['Invoices/ByTotal', 'Receipts/ByTotal'];
    const ofBoth = (type: IndexChange['Type']) => (seen: IndexChange[]) =>
      names.every((name) => seen.some((c) => c.Name === name && c.Type === type));

    const batches = takeUntil(everyIndex, ofBoth('BatchCompleted'));
    for (const name of names) {
      const created = await env.admin.call('PUT', `/databases/${env.database}/indexes`, {
        Name: name,
        Maps: [{ Collection: name.split('/')[0], Fields: { Total: 'Total' } }],
      });
      expect(created.status).toBe(201);
    }
    const ofInvoices = (await batches).filter((c) => c.Name === 'Invoices/ByTotal');
    expect(ofInvoices.map((c) => c.Type)).toEqual(expect.arrayContaining(['IndexAdded', 'BatchCompleted']));
    expect(toInvoices.slice(0, ofInvoices.length)).toEqual(ofInvoices);

    // Removed again: the tests after this one must not hear of these indexes (a batch of theirs would make
    // the aggressive cache suspect).
    const removals = takeUntil(everyIndex, ofBoth('IndexRemoved'));
    for (const name of names) {
      const path = `/databases/${env.database}/indexes?name=${encodeURIComponent(name)}`;
      expect((await env.admin.call('DELETE', path)).status).toBe(204);
    }
    await removals;
    expect(toInvoices.at(-1)).toMatchObject({ Name: 'Invoices/ByTotal', Type: 'IndexRemoved' });
    expect(toInvoices.filter((c) => c.Name !== 'Invoices/ByTotal')).toEqual([]);
    invoices.close();
    everyIndex.close();
  });

  it("serves reads from the aggressive cache without a request, and notices another store's write within 100 ms", async () => {
    const writer = env.store();
    await put(writer, 'settings/1', { Theme: 'dark', '@metadata': { '@collection': 'Settings' } });
    const handle = store.aggressivelyCacheFor(60_000);
    try {
      await handle.ensureSubscribedNow();
      const read = async () => (await store.openSession().load<{ Theme: string }>('settings/1'))?.Theme;
      expect(await read()).toBe('dark'); // fills the cache
      const before = { ...store.requestCounters };
      for (let i = 0; i < 5; i++) expect(await read()).toBe('dark');
      expect(store.requestCounters.sent).toBe(before.sent);
      expect(store.requestCounters.servedFromCache - before.servedFromCache).toBe(5);

      const session = writer.openSession();
      const settings = (await session.load<{ Theme: string }>('settings/1'))!;
      settings.Theme = 'light';
      await session.saveChanges();
      const written = performance.now();
      let theme = await read();
      while (theme !== 'light' && performance.now() - written < 5_000) {
        await nextTick();
        theme = await read();
      }
      const elapsed = performance.now() - written;
      expect(theme).toBe('light');
      // The one timing assertion of the issue: the change notification reaches the cache within 100 ms.
      expect(elapsed).toBeLessThanOrEqual(100);

      // The store's own save makes its cache suspect at once: reading your own write needs no notification.
      const mine = store.openSession();
      (await mine.load<{ Theme: string }>('settings/1'))!.Theme = 'blue';
      await mine.saveChanges();
      expect(await read()).toBe('blue');
    } finally {
      handle.dispose();
    }
  });
});

describe('streams', () => {
  beforeAll(async () => {
    const items = Array.from({ length: 500 }, (_, i) => ({
      id: `things/${String(i).padStart(4, '0')}`,
      document: { N: i, '@metadata': { '@collection': 'Things' } },
    }));
    expect((await store.bulkInsert(items)).processed).toBe(500);
  });

  it('streams a query, a collection and an id range to their @end line', async () => {
    const session = store.openSession();
    const query = session
      .query<{ N: number }>({ collection: 'Things' })
      .whereGreaterThanOrEqual('N', 100)
      .waitForNonStaleResults();
    const fromQuery = session.advanced.stream(query);
    let count = 0;
    for await (const result of fromQuery) {
      expect(result.document.N).toBeGreaterThanOrEqual(100);
      expect(result.id).toMatch(/^things\//);
      count += 1;
    }
    expect(count).toBe(400);
    expect(fromQuery.end?.Count).toBe(400);

    const collection = session.advanced.stream<{ N: number }>({ collection: 'Things' });
    const ns: number[] = [];
    for await (const { document } of collection) ns.push(document.N);
    expect(ns).toEqual(Array.from({ length: 500 }, (_, i) => i));

    const range = session.advanced.stream({ startsWith: 'things/01', startAfter: 'things/0149' });
    const ids: string[] = [];
    for await (const { id } of range) ids.push(id!);
    expect(ids[0]).toBe('things/0150');
    expect(ids.at(-1)).toBe('things/0199');
    expect(session.advanced.numberOfRequests).toBe(3);
  });

  it('releases the server when the loop is left early', async () => {
    const session = store.openSession();
    const stream = session.advanced.stream({ collection: 'Things' });
    let seen = 0;
    for await (const _ of stream) if (++seen === 10) break;
    expect(stream.end).toBeNull();
    // The connection was dropped, not drained: the store still works at once.
    expect(await store.openSession().load('things/0001')).toMatchObject({ N: 1 });
  });

  it('reports a stream of an unknown index as its typed error', async () => {
    const session = store.openSession();
    const stream = session.advanced.stream(session.query({ indexName: 'Missing' }));
    await expect(take(stream, 1)).rejects.toMatchObject({ code: 'IndexNotFound' });
  });
});

describe('subscriptions', () => {
  const seed = async (prefix: string, count: number) =>
    store.bulkInsert(
      Array.from({ length: count }, (_, i) => ({
        id: `${prefix}/${i + 1}`,
        document: { N: i + 1, '@metadata': { '@collection': prefix[0]!.toUpperCase() + prefix.slice(1) } },
      })),
    );

  it('creates, lists and deletes subscriptions, and delivers batches acknowledged as the loop moves on', async () => {
    await seed('tasks', 30);
    await store.subscriptions.create({ name: 'big-tasks', query: 'from Tasks where N > 10' });
    expect((await store.subscriptions.getSubscriptions()).map((s) => s.Name)).toContain('big-tasks');
    const worker = store.subscriptions.getSubscriptionWorker<{ N: number }>('big-tasks', { batchSize: 7 });
    const ns: number[] = [];
    const batchIds: number[] = [];
    for await (const batch of worker) {
      batchIds.push(batch.batchId);
      for (const item of batch.items) ns.push(item.result.N);
      if (ns.length >= 20) {
        batch.acknowledge();
        break;
      }
    }
    expect(ns).toEqual(Array.from({ length: 20 }, (_, i) => i + 11));
    expect(batchIds.length).toBe(3);
    const state = await store.subscriptions.getSubscription('big-tasks');
    expect(state.LastAcknowledgedEtag).toBeGreaterThan(0);
    await store.subscriptions.delete('big-tasks');
    const gone = store.subscriptions.getSubscriptionWorker('big-tasks');
    await expect(gone.next()).rejects.toBeInstanceOf(SubscriptionNotFoundError);
  });

  it('refuses a second consumer (4409) and lets a TakeOver replace the first (4410)', async () => {
    await seed('jobs', 5);
    await store.subscriptions.create({ name: 'jobs', query: 'from Jobs' });
    const first = store.subscriptions.getSubscriptionWorker('jobs', { batchSize: 1 });
    const firstBatch = await first.next();
    expect(firstBatch.done).toBe(false);
    const second = store.subscriptions.getSubscriptionWorker('jobs', { strategy: 'OpenIfFree' });
    await expect(second.next()).rejects.toBeInstanceOf(SubscriptionInUseError);
    const taker = store.subscriptions.getSubscriptionWorker('jobs', { strategy: 'TakeOver', batchSize: 5 });
    const taken = await taker.next();
    expect(taken.value?.items[0]?.id.toLowerCase()).toBe('jobs/1'); // the first consumer never acknowledged it
    await expect(first.next()).rejects.toBeInstanceOf(SubscriptionTakenOverError);
    await taker.close();
  });

  it('WaitForFree waits while another worker holds the subscription, then gets what that one left unacknowledged', async () => {
    await seed('letters', 6);
    await store.subscriptions.create({ name: 'letters', query: 'from Letters' });
    const ids = (batch: IteratorResult<SubscriptionBatch<unknown>, undefined>) =>
      batch.value?.items.map((item) => item.id.toLowerCase());
    const first = store.subscriptions.getSubscriptionWorker('letters', { batchSize: 2 });
    expect(ids(await first.next())).toEqual(['letters/1', 'letters/2']);

    const socketsBefore = env.stack.gateway.openWebSockets();
    const waiting = store.subscriptions.getSubscriptionWorker('letters', { strategy: 'WaitForFree' });
    const events: string[] = [];
    waiting.on('connected', () => events.push('waiting worker connected'));
    const waited = waiting.next();
    // Its socket is open (the tenant upgraded it and queued it behind the first worker), unlike an
    // OpenIfFree worker's, which is refused.
    await expect.poll(() => env.stack.gateway.openWebSockets()).toBe(socketsBefore + 1);
    // The first worker keeps the subscription: it is not taken over, it acknowledges and gets the next batch.
    expect(ids(await first.next())).toEqual(['letters/3', 'letters/4']);
    events.push('first worker closing');
    await first.close(); // letters/3 and letters/4 in hand, not acknowledged

    expect(ids(await waited)).toEqual(['letters/3', 'letters/4', 'letters/5', 'letters/6']);
    expect(events).toEqual(['first worker closing', 'waiting worker connected']);
    await waiting.close();
  });

  it('a consumer killed mid-batch loses nothing: the next one gets the unacknowledged batch and nothing acknowledged again', async () => {
    const total = 60;
    const batchSize = 5;
    await seed('events', total);
    await store.subscriptions.create({ name: 'events', query: 'from Events' });
    const client = env.admin;
    const child = spawn(
      process.execPath,
      [
        '--conditions=@rookery/source',
        '--import',
        'tsx',
        path.join(here, '..', 'test-fixtures', 'subscription-consumer.ts'),
      ],
      {
        env: {
          ...process.env,
          ROOKERY_URL: env.stack.gateway.url,
          ROOKERY_DATABASE: env.database,
          ROOKERY_CERT: client.certPem,
          ROOKERY_KEY: client.keyPem,
          ROOKERY_CA: env.stack.ca.certPem,
          ROOKERY_SUBSCRIPTION: 'events',
          ROOKERY_BATCH_SIZE: String(batchSize),
          ROOKERY_HOLD_AT: '4',
        },
        stdio: ['ignore', 'pipe', 'inherit'],
      },
    );
    const firstBatches: { batchId: number; ids: string[] }[] = [];
    const exited = new Promise((resolve) => child.once('exit', resolve));
    for await (const line of createInterface({ input: child.stdout! })) {
      firstBatches.push(JSON.parse(line));
      if (firstBatches.length === 4) {
        child.kill('SIGKILL'); // holding batch 4, unacknowledged
        break;
      }
    }
    await exited;
    // Batches 1-3 were acknowledged (the server sent the next only after each ack); batch 4 was not.
    const acknowledged = new Set(
      firstBatches.slice(0, 3).flatMap((b) => b.ids.map((id) => id.toLowerCase())),
    );
    const held = firstBatches[3]!.ids.map((id) => id.toLowerCase());

    const second = store.subscriptions.getSubscriptionWorker('events', { strategy: 'TakeOver', batchSize });
    const secondIds: string[] = [];
    for await (const batch of second) {
      secondIds.push(...batch.items.map((item) => item.id.toLowerCase()));
      if (new Set([...acknowledged, ...secondIds]).size >= total) break;
    }
    const everything = Array.from({ length: total }, (_, i) => `events/${i + 1}`);
    expect(new Set([...acknowledged, ...held, ...secondIds])).toEqual(new Set(everything));
    expect(secondIds.filter((id) => acknowledged.has(id))).toEqual([]);
    expect(secondIds.slice(0, held.length)).toEqual(held);
  });
});

describe('access', () => {
  it('lets a read-only principal stream queries and follow changes, and refuses it subscriptions to create', async () => {
    const reader = await env.principal({
      kind: 'program',
      name: 'reader',
      role: { kind: 'database', access: { [env.database]: 'read-only' } },
    });
    const readOnly = env.store(reader);
    const session = readOnly.openSession();
    let count = 0;
    for await (const _ of session.advanced.stream(
      session.query({ collection: 'Things' }).whereLessThan('N', 10),
    ))
      count++;
    expect(count).toBe(10);
    const watch = readOnly.changes().forDocument('things/0001');
    await watch.ensureSubscribedNow();
    const next = take(watch, 1);
    await put(store, 'things/0001', { N: 1, '@metadata': { '@collection': 'Things' } });
    expect((await next)[0]?.Id.toLowerCase()).toBe('things/0001');
    await expect(readOnly.subscriptions.create({ name: 'nope', query: 'from Things' })).rejects.toMatchObject(
      {
        code: 'Forbidden',
        status: 403,
      },
    );
  });
});

describe('refusals before the upgrade', () => {
  it("raises the gateway's typed error for a person without a two-factor session, on changes and subscriptions alike", async () => {
    const person = await env.principal({ kind: 'person', name: 'bea', role: { kind: 'tenant-admin' } });
    const personStore = env.store(person);
    const watch = personStore.changes().forAllDocuments();
    await expect(watch.ensureSubscribedNow()).rejects.toBeInstanceOf(TwoFactorRequiredError);
    await expect(take(watch, 1)).rejects.toBeInstanceOf(TwoFactorRequiredError);
    const worker = personStore.subscriptions.getSubscriptionWorker('anything');
    await expect(worker.next()).rejects.toBeInstanceOf(TwoFactorRequiredError);
  });
});

describe('a stream cut short', () => {
  it('throws StreamInterruptedError when the tenant dies mid-stream (no @end line)', async () => {
    const body = 'y'.repeat(1_000);
    await store.bulkInsert(
      Array.from({ length: 20_000 }, (_, i) => ({
        id: `blobs/${i}`,
        document: { body, '@metadata': { '@collection': 'Blobs' } },
      })),
    );
    const stream = store.openSession().advanced.stream({ collection: 'Blobs' });
    let seen = 0;
    const error = await (async () => {
      for await (const _ of stream) {
        seen += 1;
        // 20 MB cannot all sit in the socket buffers between the tenant and here: it is still sending.
        if (seen === 100) process.kill(env.stack.supervisor.info(env.tenantId).pid!, 'SIGKILL');
      }
    })().catch((e: unknown) => e);
    expect(error).toBeInstanceOf(StreamInterruptedError);
    expect(seen).toBeLessThan(20_000);
    expect(stream.end).toBeNull();
  });
});

describe('recovery from a dead tenant', () => {
  const killTenant = () => process.kill(env.stack.supervisor.info(env.tenantId).pid!, 'SIGKILL');

  it('reports the dropped changes connection, empties the aggressive cache, reconnects and watches again', async () => {
    const recovering = env.store();
    const handle = recovering.aggressivelyCacheFor(60_000);
    try {
      await handle.ensureSubscribedNow();
      await put(recovering, 'phoenix/1', { Life: 1, '@metadata': { '@collection': 'Phoenixes' } });
      const changes = recovering.changes();
      const phoenix = changes.forDocument('phoenix/1');
      await phoenix.ensureSubscribedNow();
      await recovering.openSession().load('phoenix/1');
      expect(recovering.requestExecutor.cache.size).toBeGreaterThan(0);
      const statuses: boolean[] = [];
      const errors: string[] = [];
      changes.on('connectionStatus', (status) => statuses.push(status.connected));
      phoenix.on('error', (error) => errors.push(error.code));

      killTenant();
      while (!statuses.includes(false)) await new Promise((resolve) => setTimeout(resolve, 20));
      expect(recovering.requestExecutor.cache.size).toBe(0); // nothing cached survives an unwatched gap
      expect(errors.length).toBeGreaterThan(0);
      // The next request wakes the tenant again; the connection comes back and the watch is sent again.
      await recovering.openSession().load('phoenix/1');
      await phoenix.ensureSubscribedNow();
      const next = take(phoenix, 1);
      await put(env.store(), 'phoenix/1', { Life: 2, '@metadata': { '@collection': 'Phoenixes' } });
      expect((await next)[0]).toMatchObject({ Type: 'Put' });
      expect(statuses.at(-1)).toBe(true);
    } finally {
      handle.dispose();
    }
  });

  it('a subscription worker rides over a tenant crash: it reconnects and nothing is lost', async () => {
    await store.bulkInsert(
      Array.from({ length: 40 }, (_, i) => ({
        id: `embers/${i + 1}`,
        document: { N: i + 1, '@metadata': { '@collection': 'Embers' } },
      })),
    );
    await store.subscriptions.create({ name: 'embers', query: 'from Embers' });
    const worker = store.subscriptions.getSubscriptionWorker<{ N: number }>('embers', { batchSize: 5 });
    const dropped: string[] = [];
    worker.on('connectionError', (error) => dropped.push(error.code));
    const seen = new Set<number>();
    let batches = 0;
    for await (const batch of worker) {
      for (const item of batch.items) seen.add(item.result.N);
      batches += 1;
      if (batches === 2) {
        killTenant();
        // Wake it again for the reconnection (the host starts a tenant on its next request).
        await store
          .openSession()
          .load('embers/1')
          .catch(() => null);
      }
      if (seen.size === 40) break;
    }
    expect(seen.size).toBe(40);
    expect(dropped.length).toBeGreaterThan(0);
  });
});
