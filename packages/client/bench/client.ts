// pnpm bench:client — what the client gets from the real service, in one run: the whole stack in this
// process's care (startStack: control store, CA, host with a real tenant process, gateway on HTTPS), one
// tenant with a database, DocumentStores presenting real client certificates over TLS. Measures:
//
// - load_per_s: session.load of an existing document by id (a new session each time), HTTP cache off:
//   every load is a full GET through the gateway;
// - cached_load_per_s: the same loads with the ETag cache: each is a GET with If-None-Match answered 304;
// - aggressive_cached_load_per_s: the same under store.aggressivelyCacheFor: answered from the cache
//   without a request (the changes connection watching for writes);
// - save_batch_per_s: saveChanges of sessions holding SAVE_BATCH new documents each (one bulk_docs
//   transaction per save), SAVE_CONCURRENCY sessions at once; save_docs_per_s is the same in documents;
// - stream_docs_per_s: a collection of STREAM_DOCS documents streamed as NDJSON and parsed;
// - subscription_docs_per_s: the same documents consumed by a subscription worker (batches of 1,024,
//   each acknowledged before the next is sent);
// - changes_latency_p50_ms: from the start of a saveChanges in one store to the notification of that
//   document in another store's changes connection (p50 of CHANGES_SAMPLES sequential writes).
//
// Stages go to stderr; the last stdout line is one JSON object.
import os from 'node:os';
import { startStack } from '@rookery/gateway/testing';
import { DocumentStore } from '../src/index.js';

const LOAD_IDS = 1_000;
const STREAM_DOCS = 50_000;
const SAVE_BATCH = 100;
const SAVE_CONCURRENCY = 4;
const CONCURRENCY = 16;
const PHASE_MS = 5_000;
const CHANGES_SAMPLES = 200;

const log = (m: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${m}\n`);
const round = (n: number) => Math.round(n);

/** Runs `op` from `concurrency` loops for `ms`; operations per second. */
async function rate(concurrency: number, ms: number, op: (i: number) => Promise<void>): Promise<number> {
  let done = 0;
  const started = performance.now();
  const deadline = started + ms;
  await Promise.all(
    Array.from({ length: concurrency }, async () => {
      while (performance.now() < deadline) await op(done++);
    }),
  );
  return done / ((performance.now() - started) / 1000);
}

const stack = await startStack();
const stores: DocumentStore[] = [];
try {
  log('stack started; creating the tenant, its database and a principal');
  const admin = await stack.tenantAdmin(
    { id: 'bench', name: 'Bench', quota: { requestsPerSecond: 1e9, storageBytes: 2 ** 40 } },
    'bench',
  );
  const created = await admin.call('PUT', '/admin/databases', { Name: 'db' });
  if (created.status !== 201) throw new Error(`creating the database: ${created.status} ${created.text}`);
  const storeWith = (conventions: ConstructorParameters<typeof DocumentStore>[0]['conventions'] = {}) => {
    const store = new DocumentStore({
      url: stack.gateway.url,
      database: 'db',
      certificate: { cert: admin.certPem, key: admin.keyPem },
      ca: stack.ca.certPem,
      conventions: { maxNumberOfRequestsPerSession: 1_000_000, ...conventions },
    }).initialize();
    stores.push(store);
    return store;
  };
  const store = storeWith();

  log(`seeding ${STREAM_DOCS} documents with bulk insert`);
  function* documents() {
    for (let i = 0; i < STREAM_DOCS; i++) {
      yield {
        id: `products/${i}`,
        document: {
          Name: `Product ${i}`,
          Price: i % 1000,
          Tags: ['bench', `t${i % 10}`],
          '@metadata': { '@collection': 'Products' },
        },
      };
    }
  }
  await store.bulkInsert(documents());
  const idOf = (i: number) => `products/${(i * 7919) % LOAD_IDS}`;

  log('load_per_s (HTTP cache off)');
  const uncached = storeWith({ maxHttpCacheBytes: 0 });
  const loadPerS = await rate(CONCURRENCY, PHASE_MS, async (i) => {
    await uncached.openSession().load(idOf(i));
  });

  log('cached_load_per_s (ETag cache, 304s)');
  for (let i = 0; i < LOAD_IDS; i++) await store.openSession().load(`products/${i}`);
  const before304 = store.requestCounters.notModified;
  const cachedLoadPerS = await rate(CONCURRENCY, PHASE_MS, async (i) => {
    await store.openSession().load(idOf(i));
  });
  const notModified = store.requestCounters.notModified - before304;

  log('aggressive_cached_load_per_s');
  const aggressive = store.aggressivelyCacheFor(10 * 60_000);
  await aggressive.ensureSubscribedNow();
  for (let i = 0; i < LOAD_IDS; i++) await store.openSession().load(`products/${i}`);
  const beforeAggressive = store.requestCounters.sent;
  const aggressivePerS = await rate(CONCURRENCY, PHASE_MS, async (i) => {
    await store.openSession().load(idOf(i));
    // Answered without I/O: let the event loop breathe so the changes connection is still served.
    if (i % 1_000 === 0) await new Promise((resolve) => setImmediate(resolve));
  });
  const aggressiveSent = store.requestCounters.sent - beforeAggressive;
  aggressive.dispose();

  log(`save_batch_per_s (${SAVE_BATCH} new documents per saveChanges, ${SAVE_CONCURRENCY} at once)`);
  const saver = storeWith();
  const saveBatchPerS = await rate(SAVE_CONCURRENCY, PHASE_MS, async () => {
    const session = saver.openSession();
    for (let j = 0; j < SAVE_BATCH; j++) {
      await session.store({ Name: 'saved', N: j, '@metadata': { '@collection': 'Saved' } });
    }
    await session.saveChanges();
  });

  log(`stream_docs_per_s (${STREAM_DOCS} documents)`);
  let streamed = 0;
  const streamStart = performance.now();
  for await (const _ of store.openSession().advanced.stream({ collection: 'Products' })) streamed += 1;
  const streamPerS = streamed / ((performance.now() - streamStart) / 1000);

  log(`subscription_docs_per_s (${STREAM_DOCS} documents)`);
  await store.subscriptions.create({ name: 'bench', query: 'from Products' });
  const worker = store.subscriptions.getSubscriptionWorker('bench', { batchSize: 1_024 });
  let consumed = 0;
  const subscriptionStart = performance.now();
  for await (const batch of worker) {
    consumed += batch.items.length;
    if (consumed >= STREAM_DOCS) {
      batch.acknowledge();
      break;
    }
  }
  const subscriptionPerS = consumed / ((performance.now() - subscriptionStart) / 1000);

  log(`changes_latency_p50_ms (${CHANGES_SAMPLES} writes)`);
  const watcher = storeWith();
  const feed = watcher.changes().forDocumentsStartingWith('pings/');
  await feed.ensureSubscribedNow();
  const latencies: number[] = [];
  for (let i = 0; i < CHANGES_SAMPLES; i++) {
    const id = `pings/${i}`;
    const seen = new Promise<number>((resolve) => {
      const stop = feed.subscribe((change) => {
        if (change.Id.toLowerCase() !== id) return;
        stop();
        resolve(performance.now());
      });
    });
    const session = saver.openSession();
    await session.store({ N: i, '@metadata': { '@collection': 'Pings' } }, id);
    const started = performance.now();
    await session.saveChanges();
    latencies.push((await seen) - started);
  }
  latencies.sort((a, b) => a - b);
  const p50 = latencies[Math.floor(latencies.length / 2)]!;

  const result = {
    bench: 'client',
    load_per_s: round(loadPerS),
    cached_load_per_s: round(cachedLoadPerS),
    aggressive_cached_load_per_s: round(aggressivePerS),
    save_batch_per_s: Number(saveBatchPerS.toFixed(1)),
    save_batch_size: SAVE_BATCH,
    save_docs_per_s: round(saveBatchPerS * SAVE_BATCH),
    stream_docs_per_s: round(streamPerS),
    subscription_docs_per_s: round(subscriptionPerS),
    changes_latency_p50_ms: Number(p50.toFixed(2)),
    stream_docs: streamed,
    subscription_docs: consumed,
    load_concurrency: CONCURRENCY,
    cached_304s: notModified,
    aggressive_requests_sent: aggressiveSent,
    cpus: os.cpus().length,
    // The machine is shared: a 1-minute load average far above the 2 cores means the figures are low.
    load_average_1m: Number(os.loadavg()[0]!.toFixed(2)),
    node: process.version,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
} finally {
  for (const s of stores) await s.close().catch(() => undefined);
  await stack.close();
}
