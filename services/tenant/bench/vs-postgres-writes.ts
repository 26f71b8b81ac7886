// pnpm bench:vs-postgres-writes [--puts N] [--bulk N] [--seed S] — durable writes side by side with
// PostgreSQL 15 in one run (issue [13]), on the same generated NuGet-like package versions
// (@rookery/datagen, ids `packages/<id>/<version>`, ~690 bytes of JSON each):
//
// 1. Single-document writes from 64 connections, each waiting for its answer before the next:
//    - Rookery: `PUT /databases/bench/docs?id=…` to a real tenant process (src/main.ts) over plain
//      HTTP/1.1 on 127.0.0.1, not through the gateway (its TLS and proxying are measured by
//      `pnpm bench:gateway`), with the tenant's default durability: SQLite WAL, synchronous=FULL
//      (the WAL is fsynced before a commit is acknowledged), one commit per merger batch.
//    - PostgreSQL: a private durable server (@rookery/testkit, fsync, synchronous_commit and
//      full_page_writes on: its defaults), 64 `pg` clients over its Unix socket, each running the
//      prepared upsert `INSERT … ON CONFLICT (id) DO UPDATE` into `docs (id text primary key, body jsonb)`.
// 2. Bulk load of BULK documents into an empty collection/table:
//    - Rookery: one streamed NDJSON `POST /databases/bench/bulk_insert` (its durable chunks).
//    - PostgreSQL: one `COPY docs (id, body) FROM STDIN` (text format) in its own transaction,
//      streamed from the client through pg-copy-streams over the Unix socket.
// Each phase warms up both sides first (JIT, connections, caches) with documents of other ids. After
// the run, a sample of ids is read back from both sides and compared (the run fails on a difference).
//
// `--puts 0` runs the bulk load alone (no single-document phase; its figures are then null).
// With ROOKERY_BENCH_CPU_PROF=<dir>, the tenant and its indexer write V8 CPU profiles there on exit.
//
// Stages go to stderr; the last stdout line is one JSON object with both figures and the ratios
// (Rookery / PostgreSQL: above 1 means Rookery is faster).
import os from 'node:os';
import path from 'node:path';
import { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { fileURLToPath } from 'node:url';
import { makeTempDir, startPostgres } from '@rookery/testkit';
import pg from 'pg';
import { from as copyFrom } from 'pg-copy-streams';
import { Pool } from 'undici';
import { cpuByThread, cpuPerOperation } from './process-cpu.js';
import { CONNECTIONS, concurrently, type Doc, putDocuments as documents, rookeryPuts } from './put-load.js';
import { startServer } from './server-process.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
const PUTS = arg('puts', 40_000);
const BULK = arg('bulk', 200_000);
const SEED = arg('seed', 1);
const WARMUP_PUTS = 5_000;
const WARMUP_BULK = 5_000;
const SAMPLE = 200;

const log = (line: Record<string, unknown>) => process.stderr.write(`${JSON.stringify(line)}\n`);
const ratio = (a: number, b: number) => Number((a / b).toFixed(2));

const UPSERT = {
  name: 'upsert_doc',
  text: 'INSERT INTO docs (id, body) VALUES ($1, $2::jsonb) ON CONFLICT (id) DO UPDATE SET body = EXCLUDED.body',
};

async function postgresUpserts(clients: pg.Client[], docs: Doc[]): Promise<number> {
  return concurrently(docs, async (loop, doc) => {
    await clients[loop]!.query({ ...UPSERT, values: [doc.id, doc.json] });
  });
}

/** One line per document, 500 lines to a chunk, built before the clock starts. */
function chunked(docs: Doc[], line: (doc: Doc) => string): Buffer[] {
  const chunks: Buffer[] = [];
  for (let start = 0; start < docs.length; start += 500) {
    chunks.push(
      Buffer.from(
        docs
          .slice(start, start + 500)
          .map(line)
          .join(''),
      ),
    );
  }
  return chunks;
}

/** Rookery's bulk insert: NDJSON `{Id, Document}` lines. */
const ndjsonLine = (doc: Doc) => `{"Id":${JSON.stringify(doc.id)},"Document":${doc.json}}\n`;

/** COPY text format: `id<TAB>body` lines; JSON has no raw tabs or newlines, and backslashes are doubled. */
const copyLine = (doc: Doc) => `${doc.id.replaceAll('\\', '\\\\')}\t${doc.json.replaceAll('\\', '\\\\')}\n`;

async function rookeryBulk(pool: Pool, docs: Doc[]): Promise<number> {
  const chunks = chunked(docs, ndjsonLine);
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
  if (statusCode !== 200 || last.Type !== 'Completed' || last.Processed !== docs.length) {
    throw new Error(`bulk insert failed: ${statusCode} ${text.slice(-500)}`);
  }
  return docs.length / seconds;
}

async function postgresCopy(client: pg.Client, docs: Doc[]): Promise<number> {
  const chunks = chunked(docs, copyLine);
  const started = performance.now();
  await client.query('BEGIN');
  await pipeline(Readable.from(chunks), client.query(copyFrom('COPY docs (id, body) FROM STDIN')));
  await client.query('COMMIT');
  return docs.length / ((performance.now() - started) / 1000);
}

/** Reads SAMPLE of the ids back from both sides and fails on any difference from what was written. */
async function checkSameAnswers(pool: Pool, client: pg.Client, docs: Doc[]): Promise<void> {
  const canonical = (value: unknown): unknown =>
    Array.isArray(value)
      ? value.map(canonical)
      : value !== null && typeof value === 'object'
        ? Object.fromEntries(
            Object.entries(value)
              .filter(([key]) => key !== '@metadata')
              .sort(([a], [b]) => (a < b ? -1 : 1))
              .map(([key, v]) => [key, canonical(v)]),
          )
        : value;
  const step = Math.max(1, Math.floor(docs.length / SAMPLE));
  for (let i = 0; i < docs.length; i += step) {
    const doc = docs[i]!;
    const expected = JSON.stringify(canonical(JSON.parse(doc.json)));
    const { body } = await pool.request({
      method: 'GET',
      path: `/databases/bench/docs?id=${encodeURIComponent(doc.id)}`,
    });
    const answer = (await body.json()) as { Results: unknown[] };
    const rookery = JSON.stringify(canonical(answer.Results[0]));
    const { rows } = await client.query<{ body: unknown }>('SELECT body FROM docs WHERE id = $1', [doc.id]);
    const postgres = JSON.stringify(canonical(rows[0]?.body));
    if (rookery !== expected || postgres !== expected) {
      throw new Error(
        `${doc.id} differs:\n written  ${expected}\n Rookery  ${rookery}\n Postgres ${postgres}`,
      );
    }
  }
  const { rows } = await client.query<{ n: string }>('SELECT count(*) AS n FROM docs');
  log({ stage: 'same_answers', sampled: Math.ceil(docs.length / step), postgres_rows: Number(rows[0]!.n) });
}

const putDocs = documents(PUTS, SEED, 'put/');
const putWarmup = documents(WARMUP_PUTS, SEED + 1, 'warm-put/');
const bulkDocs = documents(BULK, SEED + 2, 'bulk/');
const bulkWarmup = documents(WARMUP_BULK, SEED + 3, 'warm-bulk/');
const avgBytes = Math.round(bulkDocs.reduce((sum, d) => sum + d.json.length, 0) / bulkDocs.length);
log({ stage: 'documents', puts: PUTS, bulk: BULK, avg_doc_bytes: avgBytes });

const postgres = await startPostgres({ durable: true });
const clients = Array.from(
  { length: CONNECTIONS },
  () =>
    new pg.Client({ host: postgres.socketDir, port: postgres.port, user: 'postgres', database: 'postgres' }),
);
const tmp = makeTempDir('rookery-bench-vs-pg-');
const profileDir = process.env.ROOKERY_BENCH_CPU_PROF;
const tenant = await startServer(path.join(here, '..', 'src', 'main.ts'), {
  ROOKERY_DATA: tmp.dir,
  ROOKERY_PORT: '0',
  ROOKERY_LOG_LEVEL: 'warn',
  ...(profileDir ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profileDir}` } : {}),
});
const pool = new Pool(tenant.url, { connections: CONNECTIONS, pipelining: 1 });
const figures: Record<string, number> = {};
/** µs of CPU per measured PUT, of the tenant process and its indexer, per thread and in total. */
let cpuPerPut: Record<string, number> = {};

/** Phase 1 (skipped with `--puts 0`): warm both, then Rookery and PostgreSQL back to back on the same documents. */
async function singleDocumentWrites(): Promise<void> {
  await rookeryPuts(pool, putWarmup);
  await postgresUpserts(clients, putWarmup);
  const cpuBefore = cpuByThread(tenant.pid);
  figures.rookery_put_per_s = await rookeryPuts(pool, putDocs);
  cpuPerPut = cpuPerOperation(cpuBefore, cpuByThread(tenant.pid), putDocs.length);
  figures.postgres_upsert_per_s = await postgresUpserts(clients, putDocs);
  log({
    stage: 'single_document_writes',
    documents: PUTS,
    rookery_per_s: Math.round(figures.rookery_put_per_s),
    postgres_per_s: Math.round(figures.postgres_upsert_per_s),
    rookery_cpu_us_per_put: cpuPerPut,
  });
}
try {
  await Promise.all(clients.map((c) => c.connect()));
  const admin = clients[0]!;
  const settings = await admin.query<{ s: string }>(
    "SELECT string_agg(name || '=' || setting, ' ') AS s FROM pg_settings WHERE name IN ('fsync', 'synchronous_commit', 'full_page_writes', 'wal_sync_method', 'shared_buffers', 'server_version')",
  );
  log({ stage: 'postgres', settings: settings.rows[0]!.s });
  await admin.query('CREATE TABLE docs (id text PRIMARY KEY, body jsonb NOT NULL)');
  const created = await pool.request({
    method: 'PUT',
    path: '/admin/databases',
    headers: { 'content-type': 'application/json' },
    body: '{"Name":"bench"}',
  });
  await created.body.dump();

  if (PUTS > 0) await singleDocumentWrites();
  // 2. Bulk loads: a warm-up load each (it also starts Rookery's parse thread), then the measured one.
  await rookeryBulk(pool, bulkWarmup);
  await postgresCopy(admin, bulkWarmup);
  const bulkCpuBefore = cpuByThread(tenant.pid);
  figures.rookery_bulk_per_s = await rookeryBulk(pool, bulkDocs);
  const cpuPerBulkDoc = cpuPerOperation(bulkCpuBefore, cpuByThread(tenant.pid), bulkDocs.length);
  figures.postgres_copy_per_s = await postgresCopy(admin, bulkDocs);
  log({
    stage: 'bulk_load',
    documents: BULK,
    rookery_per_s: Math.round(figures.rookery_bulk_per_s),
    postgres_per_s: Math.round(figures.postgres_copy_per_s),
    // The request thread is `main`, bulk insert's parse thread one of the others (a worker thread's name).
    rookery_cpu_us_per_doc: cpuPerBulkDoc,
  });

  await checkSameAnswers(pool, admin, [...putDocs, ...bulkDocs]);
} finally {
  await pool.close();
  await tenant.stop();
  tmp.cleanup();
  await Promise.all(clients.map((c) => c.end().catch(() => undefined)));
  await postgres.stop();
}

log({
  machine: {
    cpus: os.cpus().length,
    model: os.cpus()[0]?.model,
    memGiB: Math.round(os.totalmem() / 2 ** 30),
    node: process.version,
    loadavg: os.loadavg().map((l) => Number(l.toFixed(1))),
  },
});
console.log(
  JSON.stringify({
    bench: 'vs-postgres-writes',
    documents: { puts: PUTS, bulk: BULK, avg_doc_bytes: avgBytes, connections: CONNECTIONS },
    put_per_s:
      PUTS > 0
        ? {
            rookery: Math.round(figures.rookery_put_per_s!),
            postgres: Math.round(figures.postgres_upsert_per_s!),
          }
        : null,
    put_ratio: PUTS > 0 ? ratio(figures.rookery_put_per_s!, figures.postgres_upsert_per_s!) : null,
    rookery_cpu_us_per_put: cpuPerPut.total ?? null,
    bulk_per_s: {
      rookery: Math.round(figures.rookery_bulk_per_s!),
      postgres: Math.round(figures.postgres_copy_per_s!),
    },
    bulk_ratio: ratio(figures.rookery_bulk_per_s!, figures.postgres_copy_per_s!),
  }),
);
