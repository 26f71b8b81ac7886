// pnpm bench:ravendb-client — the official RavenDB client (`ravendb`, pinned) against @rookery/client on the
// same operations, in one run, through the real gateway over mutual TLS (the ravendb-compat suite's fixture:
// control store, CA, host with a real tenant process, gateway; the official client with the PKCS#12 file
// `rookery cert issue --format pkcs12` makes, @rookery/client with the PEM pair). Each client has a database
// of its own holding the same documents, and runs, one after the other:
//
// - bulk_insert_docs_per_s: BULK_DOCS documents through its bulk insert (seeding its database);
// - load_per_s: session.load of varied existing ids (a new session each time), HTTP cache off;
// - cached_load_per_s: the same with each client's ETag cache (GETs answered 304);
// - save_docs_per_s: saveChanges of sessions holding SAVE_BATCH new documents, SAVE_CONCURRENCY at once;
// - query_per_s: whereEquals on a field with varied terms, take 10 (an automatic index, built first).
//
// Stages go to stderr; the last stdout line is one JSON object: each figure per client and rookery/ravendb.
import os from 'node:os';
import { startRavenFixture } from '@rookery/gateway/ravendb-testing';
import type { DocumentStore as RavenStore } from 'ravendb';
import { DocumentStore } from '../src/index.js';

const BULK_DOCS = 20_000;
const LOAD_IDS = 1_000;
const SAVE_BATCH = 100;
const SAVE_CONCURRENCY = 4;
const CONCURRENCY = 16;
const PHASE_MS = 5_000;
const PRICES = 1_000;

const log = (m: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${m}\n`);

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

/** Seconds `op` takes. */
async function timed(op: () => Promise<void>): Promise<number> {
  const started = performance.now();
  await op();
  return (performance.now() - started) / 1000;
}

const product = (i: number) => ({ Name: `Product ${i}`, Price: i % PRICES, Tags: ['bench', `t${i % 10}`] });
/** Ids spread over the loaded range, so that consecutive loads do not hit the same document. */
const idOf = (i: number) => `products/${(i * 7919) % LOAD_IDS}`;

interface Figures {
  bulk_insert_docs_per_s: number;
  load_per_s: number;
  cached_load_per_s: number;
  save_docs_per_s: number;
  query_per_s: number;
}

class Product {
  public Name = '';
  public Price = 0;
  public Tags: string[] = [];
}

async function ravendb(
  store: (configure: (store: RavenStore) => void) => Promise<RavenStore>,
): Promise<Figures> {
  const main = await store((s) => {
    s.conventions.maxNumberOfRequestsPerSession = 1_000_000;
  });
  log(`ravendb: bulk insert of ${BULK_DOCS}`);
  const bulkSeconds = await timed(async () => {
    const bulk = main.bulkInsert();
    for (let i = 0; i < BULK_DOCS; i++)
      await bulk.store(Object.assign(new Product(), product(i)), `products/${i}`);
    await bulk.finish();
  });
  log('ravendb: loads, HTTP cache off');
  const uncached = await store((s) => {
    s.conventions.maxHttpCacheSize = 0;
  });
  const loadPerS = await rate(CONCURRENCY, PHASE_MS, async (i) => {
    await uncached.openSession().load(idOf(i));
  });
  log('ravendb: cached loads');
  for (let i = 0; i < LOAD_IDS; i++) await main.openSession().load(`products/${i}`);
  const cachedPerS = await rate(CONCURRENCY, PHASE_MS, async (i) => {
    await main.openSession().load(idOf(i));
  });
  log('ravendb: session saves');
  const savePerS = await rate(SAVE_CONCURRENCY, PHASE_MS, async () => {
    const session = main.openSession();
    for (let j = 0; j < SAVE_BATCH; j++) await session.store(Object.assign(new Product(), product(j)));
    await session.saveChanges();
  });
  log('ravendb: queries with varied terms');
  await main
    .openSession()
    .query({ collection: 'Products' })
    .whereEquals('Price', 0)
    .waitForNonStaleResults()
    .all();
  const queryPerS = await rate(CONCURRENCY, PHASE_MS, async (i) => {
    await main
      .openSession()
      .query({ collection: 'Products' })
      .whereEquals('Price', (i * 31) % PRICES)
      .take(10)
      .all();
  });
  return figures(bulkSeconds, loadPerS, cachedPerS, savePerS, queryPerS);
}

async function rookery(
  store: (conventions?: { maxHttpCacheBytes?: number }) => DocumentStore,
): Promise<Figures> {
  const main = store();
  log(`rookery: bulk insert of ${BULK_DOCS}`);
  const bulkSeconds = await timed(async () => {
    function* items() {
      for (let i = 0; i < BULK_DOCS; i++)
        yield {
          id: `products/${i}`,
          document: { ...product(i), '@metadata': { '@collection': 'Products' } },
        };
    }
    await main.bulkInsert(items());
  });
  log('rookery: loads, HTTP cache off');
  const uncached = store({ maxHttpCacheBytes: 0 });
  const loadPerS = await rate(CONCURRENCY, PHASE_MS, async (i) => {
    await uncached.openSession().load(idOf(i));
  });
  log('rookery: cached loads');
  for (let i = 0; i < LOAD_IDS; i++) await main.openSession().load(`products/${i}`);
  const cachedPerS = await rate(CONCURRENCY, PHASE_MS, async (i) => {
    await main.openSession().load(idOf(i));
  });
  log('rookery: session saves');
  const savePerS = await rate(SAVE_CONCURRENCY, PHASE_MS, async () => {
    const session = main.openSession();
    for (let j = 0; j < SAVE_BATCH; j++)
      await session.store({ ...product(j), '@metadata': { '@collection': 'Products' } });
    await session.saveChanges();
  });
  log('rookery: queries with varied terms');
  await main
    .openSession()
    .query({ collection: 'Products' })
    .whereEquals('Price', 0)
    .waitForNonStaleResults()
    .toList();
  const queryPerS = await rate(CONCURRENCY, PHASE_MS, async (i) => {
    await main
      .openSession()
      .query({ collection: 'Products' })
      .whereEquals('Price', (i * 31) % PRICES)
      .take(10)
      .toList();
  });
  return figures(bulkSeconds, loadPerS, cachedPerS, savePerS, queryPerS);
}

function figures(bulkSeconds: number, load: number, cached: number, saves: number, queries: number): Figures {
  return {
    bulk_insert_docs_per_s: Math.round(BULK_DOCS / bulkSeconds),
    load_per_s: Math.round(load),
    cached_load_per_s: Math.round(cached),
    save_docs_per_s: Math.round(saves * SAVE_BATCH),
    query_per_s: Math.round(queries),
  };
}

const fixture = await startRavenFixture('bench-ravendb', { requestsPerSecond: 1e9, storageBytes: 2 ** 40 });
const rookeryStores: DocumentStore[] = [];
try {
  await fixture.createDatabase('official');
  await fixture.createDatabase('own');
  const official = await ravendb((configure) => fixture.store('official', configure));
  const own = await rookery((conventions = {}) => {
    const store = new DocumentStore({
      url: fixture.stack.gateway.url,
      database: 'own',
      certificate: { cert: fixture.admin.certPem, key: fixture.admin.keyPem },
      ca: fixture.stack.ca.certPem,
      conventions: { maxNumberOfRequestsPerSession: 1_000_000, ...conventions },
    }).initialize();
    rookeryStores.push(store);
    return store;
  });
  const ratio = Object.fromEntries(
    (Object.keys(own) as (keyof Figures)[]).map((key) => [
      key,
      Number((own[key] / Math.max(1, official[key])).toFixed(2)),
    ]),
  );
  const result = {
    bench: 'ravendb-client',
    ravendb: official,
    rookery: own,
    rookery_over_ravendb: ratio,
    bulk_docs: BULK_DOCS,
    save_batch_size: SAVE_BATCH,
    concurrency: CONCURRENCY,
    phase_ms: PHASE_MS,
    cpus: os.cpus().length,
    // The machine is shared: a 1-minute load average far above the cores means the figures are low.
    load_average_1m: Number(os.loadavg()[0]!.toFixed(2)),
    node: process.version,
  };
  process.stdout.write(`${JSON.stringify(result)}\n`);
} finally {
  for (const store of rookeryStores) await store.close().catch(() => undefined);
  await fixture.close();
}
