// pnpm bench:writes — the write-path benchmark of issue [1].
//
// 1. Engine: 1,000 concurrent single-document batches, merged into shared
//    commits vs one commit per batch (durable, synchronous=FULL, same run).
// 2. HTTP: single-document PUTs from 64 concurrent connections to a real
//    tenant process.
// 3. HTTP: streamed bulk insert of 1 KB documents, after a warm-up bulk insert
//    (the first, which starts the parse thread, is timed on its own).
// The last line printed is one JSON object with the figures.
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { fileURLToPath } from 'node:url';
import { Database } from '@rookery/engine';
import { makeTempDir } from '@rookery/testkit';
import BetterSqlite3 from 'better-sqlite3';
import { Pool } from 'undici';
import { startServer } from './server-process.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
const ROUNDS = arg('rounds', 5);
const WARMUP_ROUNDS = 3;
const PUT_REQUESTS = arg('puts', 60_000);
const BULK_DOCS = arg('bulk', 200_000);

const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const log = (line: Record<string, unknown>) => process.stderr.write(`${JSON.stringify(line)}\n`);

/** 1,000 concurrent single-document batches against an open database; returns documents per second. */
async function concurrentBatches(db: Database, round: number): Promise<number> {
  const started = performance.now();
  await Promise.all(
    Array.from({ length: 1000 }, (_, i) =>
      db.batch([
        {
          Type: 'PUT',
          Id: `users/${round}-${i}`,
          Document: { Name: `User ${i}`, Age: i % 90, '@metadata': { '@collection': 'Users' } },
        },
      ]),
    ),
  );
  return 1000 / ((performance.now() - started) / 1000);
}

/**
 * Merged vs one commit per batch, each on its own long-lived database (as in
 * service: the writer thread stays warm). Rounds alternate between the two so
 * machine noise hits both alike; the first rounds only warm up.
 */
async function mergerComparison(): Promise<{ merged: number[]; unmerged: number[] }> {
  const tmp = makeTempDir('rookery-bench-');
  const mergedDb = Database.create(path.join(tmp.dir, 'merged'), 'merged', { mergeTransactions: true });
  const unmergedDb = Database.create(path.join(tmp.dir, 'unmerged'), 'unmerged', {
    mergeTransactions: false,
  });
  const merged: number[] = [];
  const unmerged: number[] = [];
  try {
    for (let round = 0; round < WARMUP_ROUNDS + ROUNDS; round++) {
      const m = await concurrentBatches(mergedDb, round);
      const u = await concurrentBatches(unmergedDb, round);
      if (round >= WARMUP_ROUNDS) {
        merged.push(m);
        unmerged.push(u);
      }
    }
    return { merged, unmerged };
  } finally {
    await Promise.all([mergedDb.close(), unmergedDb.close()]);
    tmp.cleanup();
  }
}

async function httpPuts(pool: Pool): Promise<number> {
  let next = 0;
  const body = JSON.stringify({
    Name: 'Ada Lovelace',
    Email: 'ada@example.com',
    Age: 36,
    Tags: ['math', 'engines'],
    '@metadata': { '@collection': 'Users' },
  });
  const headers = { 'content-type': 'application/json' };
  let failures = 0;
  const worker = async (total: number, offset: number) => {
    for (let i = next++; i < total; i = next++) {
      const { statusCode, body: response } = await pool.request({
        method: 'PUT',
        path: `/databases/bench/docs?id=users/${offset + i}`,
        headers,
        body,
      });
      await response.dump();
      if (statusCode !== 201) failures++;
    }
  };
  // Warm-up: JIT, connections, SQLite page cache.
  await Promise.all(Array.from({ length: 64 }, () => worker(5_000, 10_000_000)));
  next = 0;
  const started = performance.now();
  await Promise.all(Array.from({ length: 64 }, () => worker(PUT_REQUESTS, 0)));
  const seconds = (performance.now() - started) / 1000;
  if (failures > 0) throw new Error(`${failures} PUTs failed`);
  return PUT_REQUESTS / seconds;
}

/** NDJSON lines of ~1 KB documents, generated up front so the client costs little while we measure. */
function bulkPayload(count: number, idPrefix = 'packages/'): Buffer[] {
  const filler = 'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor '.repeat(10);
  const chunks: Buffer[] = [];
  let lines: string[] = [];
  for (let i = 0; i < count; i++) {
    const doc = {
      Name: `Package ${i}`,
      Version: `1.${i % 50}.${i % 7}`,
      Downloads: i * 7,
      Description: filler.slice(0, 840 + (i % 60)),
      '@metadata': { '@collection': 'Packages' },
    };
    lines.push(JSON.stringify({ Id: `${idPrefix}${i}`, Document: doc }));
    if (lines.length === 500) {
      chunks.push(Buffer.from(`${lines.join('\n')}\n`));
      lines = [];
    }
  }
  if (lines.length > 0) chunks.push(Buffer.from(`${lines.join('\n')}\n`));
  return chunks;
}

async function bulkInsert(
  pool: Pool,
  count: number,
  idPrefix?: string,
): Promise<{ docsPerSecond: number; avgDocBytes: number; ms: number }> {
  const chunks = bulkPayload(count, idPrefix);
  const bytes = chunks.reduce((sum, c) => sum + c.length, 0);
  const started = performance.now();
  const { statusCode, body } = await pool.request({
    method: 'POST',
    path: '/databases/bench/bulk_insert',
    headers: { 'content-type': 'application/x-ndjson' },
    body: Readable.from(chunks),
  });
  const text = await body.text();
  const seconds = (performance.now() - started) / 1000;
  const last = JSON.parse(text.trim().split('\n').at(-1)!) as { Type: string; Processed: number };
  if (statusCode !== 200 || last.Type !== 'Completed' || last.Processed !== count) {
    throw new Error(`bulk insert failed: ${statusCode} ${text.slice(-500)}`);
  }
  return { docsPerSecond: count / seconds, avgDocBytes: Math.round(bytes / count), ms: seconds * 1000 };
}

/**
 * The storage ceiling: the same documents inserted straight into docs.db's
 * schema with better-sqlite3, 5,000 rows per durable transaction, no HTTP,
 * no parsing. Bulk insert can only approach this.
 */
async function rawSqliteCeiling(count: number): Promise<number> {
  const tmp = makeTempDir('rookery-bench-raw-');
  try {
    // Database.create applies the schema and pragmas; then the file is written directly.
    await Database.create(tmp.dir, 'raw').close();
    const sqlite = new BetterSqlite3(path.join(tmp.dir, 'docs.db'));
    sqlite.pragma('journal_mode = WAL');
    sqlite.pragma('synchronous = FULL');
    sqlite.pragma('wal_autocheckpoint = 10000');
    const insert = sqlite.prepare(
      'INSERT INTO docs (etag, id_lower, id, collection, last_modified, flags, metadata, body) VALUES (?, ?, ?, ?, ?, 0, NULL, ?)',
    );
    const filler = 'lorem ipsum dolor sit amet consectetur adipiscing elit sed do eiusmod tempor '.repeat(10);
    const bodies = Array.from({ length: 1000 }, (_, i) =>
      JSON.stringify({ Name: `Package ${i}`, Description: filler.slice(0, 840 + (i % 60)) }),
    );
    const started = performance.now();
    for (let start = 0; start < count; start += 5000) {
      sqlite.transaction(() => {
        for (let i = start; i < Math.min(count, start + 5000); i++) {
          insert.run(i + 1, `packages/${i}`, `packages/${i}`, 'Packages', Date.now(), bodies[i % 1000]!);
        }
      })();
    }
    const perSecond = count / ((performance.now() - started) / 1000);
    sqlite.close();
    return perSecond;
  } finally {
    tmp.cleanup();
  }
}

const { merged, unmerged } = await mergerComparison();
log({ stage: 'merger', merged: merged.map(Math.round), unmerged: unmerged.map(Math.round) });

// The ceiling first: the same client against a server that does nothing.
const noop = await startServer(path.join(here, 'noop-server.ts'));
const noopPool = new Pool(noop.url, { connections: 64, pipelining: 1 });
const noopPutPerSecond = await httpPuts(noopPool);
await noopPool.close();
await noop.stop();
log({ stage: 'http_put_noop_ceiling', requests: PUT_REQUESTS, per_s: Math.round(noopPutPerSecond) });

const tmp = makeTempDir('rookery-bench-http-');
const tenant = await startServer(path.join(here, '..', 'src', 'main.ts'), {
  ROOKERY_DATA: tmp.dir,
  ROOKERY_PORT: '0',
  ROOKERY_LOG_LEVEL: 'warn',
});
const pool = new Pool(tenant.url, { connections: 64, pipelining: 1 });
let httpPutPerSecond = 0;
let bulk = { docsPerSecond: 0, avgDocBytes: 0, ms: 0 };
try {
  const created = await pool.request({
    method: 'PUT',
    path: '/admin/databases',
    headers: { 'content-type': 'application/json' },
    body: '{"Name":"bench"}',
  });
  await created.body.dump();
  httpPutPerSecond = await httpPuts(pool);
  log({
    stage: 'http_put',
    requests: PUT_REQUESTS,
    per_s: Math.round(httpPutPerSecond),
    of_noop_ceiling: Number((httpPutPerSecond / noopPutPerSecond).toFixed(2)),
  });
  // A tenant's first bulk insert starts its parse thread (0.3 s here, where the tenant runs from its
  // TypeScript sources through tsx): timed on its own (first_bulk_insert_ms), then a warm-up, as the
  // PUTs above had theirs, so that the figure is the rate a bulk insert sustains.
  const first = await bulkInsert(pool, 1, 'first/');
  await bulkInsert(pool, 5_000, 'warmup/');
  bulk = await bulkInsert(pool, BULK_DOCS);
  const raw = await rawSqliteCeiling(BULK_DOCS);
  log({
    stage: 'bulk_insert',
    docs: BULK_DOCS,
    first_bulk_insert_ms: Math.round(first.ms),
    avg_doc_bytes: bulk.avgDocBytes,
    per_s: Math.round(bulk.docsPerSecond),
    raw_sqlite_ceiling_per_s: Math.round(raw),
    of_raw_ceiling: Number((bulk.docsPerSecond / raw).toFixed(2)),
  });
} finally {
  await pool.close();
  await tenant.stop();
  tmp.cleanup();
}

log({
  machine: {
    cpus: os.cpus().length,
    model: os.cpus()[0]?.model,
    memGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
  },
});
const mergedMedian = median(merged);
const unmergedMedian = median(unmerged);
console.log(
  JSON.stringify({
    bench: 'writes',
    merged_docs_per_s: Math.round(mergedMedian),
    unmerged_docs_per_s: Math.round(unmergedMedian),
    ratio: Number((mergedMedian / unmergedMedian).toFixed(1)),
    http_put_per_s: Math.round(httpPutPerSecond),
    bulk_insert_docs_per_s: Math.round(bulk.docsPerSecond),
  }),
);
