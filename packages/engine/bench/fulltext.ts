// pnpm bench:fulltext [--docs N] [--queries N] — SQLite FTS5 against minisearch for
// Rookery's full-text index fields, on the same generated NuGet-like package
// documents (default 200,000), in one run:
//
// - index build (docs/s): FTS5 into a file-backed contentless table (WAL,
//   synchronous=NORMAL, 5,000 rows per transaction); minisearch addAll in memory;
// - persistence: FTS5 is on disk already (size after a WAL checkpoint, and the
//   cost of opening it and answering a first query); minisearch JSON.stringify +
//   write, its file size, and the time to load it back;
// - memory: the JS heap minisearch's index holds (after a full GC);
// - query latency p50/p99 over 1,000 queries each (`--queries`): a common
//   term, a rare term, a two-term AND, a prefix (`jq*`), top 10 by relevance
//   (BM25 in both), and for FTS5 also the first 10 without ranking;
// - agreement: the same queries must match the same documents in both engines.
//
// The full-text field is Title + Tags + Description + PackageId. Tokenisation
// is the same on both sides: FTS5's unicode61 (token characters are Unicode
// letters, numbers and private-use characters, lowercased; diacritics kept)
// and a minisearch tokenizer splitting on everything else.
//
// Stages go to stderr; stdout gets one JSON line per engine, then the summary.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import v8 from 'node:v8';
import vm from 'node:vm';
import BetterSqlite3 from 'better-sqlite3';
import MiniSearch, { type Options as MiniSearchOptions } from 'minisearch';
import { generatePackages, type PackageDocument, TAGS } from '../../datagen/src/index.js';
import { arg } from './args.js';

const DOCS = arg('docs', 200_000);
const SEED = arg('seed', 1);
const QUERIES = arg('queries', 1_000);
const BATCH = 5_000;

v8.setFlagsFromString('--expose-gc');
const gc = vm.runInNewContext('gc') as () => void;
const log = (line: Record<string, unknown>) => process.stderr.write(`${JSON.stringify(line)}\n`);
const mb = (bytes: number) => Math.round((bytes / 1_048_576) * 10) / 10;
const round = (value: number, digits = 3) => Math.round(value * 10 ** digits) / 10 ** digits;
const percentile = (sorted: number[], p: number) =>
  sorted[Math.min(sorted.length - 1, Math.floor(p * sorted.length))] ?? Number.NaN;
const heapUsed = () => {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
};
const fileSize = (file: string) => (fs.existsSync(file) ? fs.statSync(file).size : 0);

const fullText = (d: PackageDocument) => `${d.Title} ${d.Tags.join(' ')} ${d.Description} ${d.PackageId}`;

// ---------------------------------------------------------------------------
// Queries: the same list for both engines, cycled to 1,000 per kind.

interface Query {
  kind: 'common' | 'rare' | 'and' | 'prefix';
  /** The terms, already tokenised (lowercase alphanumerics). */
  terms: string[];
  prefix: boolean;
}

const plainTags = TAGS.filter((tag) => /^[a-z0-9]+$/.test(tag));
const queries: Record<Query['kind'], Query[]> = {
  // The most frequent tags: each in a large share of the documents.
  common: plainTags.slice(0, 10).map((tag) => ({ kind: 'common', terms: [tag], prefix: false })),
  // The least frequent tags: each in roughly 0.1–0.2% of the documents.
  rare: plainTags.slice(-10).map((tag) => ({ kind: 'rare', terms: [tag], prefix: false })),
  // Pairs of frequent tags.
  and: Array.from({ length: 10 }, (_, i) => ({
    kind: 'and' as const,
    terms: [plainTags[i % 5]!, plainTags[5 + i]!],
    prefix: false,
  })),
  prefix: [{ kind: 'prefix', terms: ['jq'], prefix: true }],
};
const allQueries = Object.values(queries).flat();
const label = (q: Query) => q.terms.join(' AND ') + (q.prefix ? '*' : '');

interface Engine {
  /** The ids of the 10 best matches. */
  top10(q: Query): number[];
  /** Every matching id. */
  all(q: Query): number[];
}

function latencies(engine: Engine): Record<string, { p50_ms: number; p99_ms: number }> {
  const out: Record<string, { p50_ms: number; p99_ms: number }> = {};
  for (const [kind, list] of Object.entries(queries)) {
    for (const q of list) engine.top10(q); // warm-up: statements compiled, pages cached
    const times: number[] = [];
    let sink = 0;
    for (let i = 0; i < QUERIES; i++) {
      const q = list[i % list.length]!;
      const started = performance.now();
      sink += engine.top10(q).length;
      times.push(performance.now() - started);
    }
    times.sort((a, b) => a - b);
    out[kind] = { p50_ms: round(percentile(times, 0.5)), p99_ms: round(percentile(times, 0.99)) };
    if (sink < 0) throw new Error('unreachable');
  }
  return out;
}

// ---------------------------------------------------------------------------
// Documents: generated once, the text of each kept so that neither engine's
// build time includes generating it.

let started = performance.now();
const texts: string[] = new Array(DOCS);
{
  let i = 0;
  for (const document of generatePackages({ seed: SEED, packageVersions: DOCS }))
    texts[i++] = fullText(document);
}
const textBytes = texts.reduce((sum, text) => sum + Buffer.byteLength(text), 0);
log({
  stage: 'generate',
  docs: DOCS,
  ms: Math.round(performance.now() - started),
  avg_text_bytes: Math.round(textBytes / DOCS),
});
const tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'rookery-fulltext-'));

try {
  // -------------------------------------------------------------------------
  // SQLite FTS5

  const dbFile = path.join(tmp, 'fts.db');
  let db = new BetterSqlite3(dbFile);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = NORMAL');
  // contentless_delete=1 (SQLite 3.43+) keeps DELETE/UPDATE possible without storing the text twice.
  let ftsTable = "content='', contentless_delete=1";
  try {
    db.exec(`CREATE VIRTUAL TABLE probe USING fts5(body, ${ftsTable}); DROP TABLE probe;`);
  } catch {
    db.exec('CREATE TABLE docs_text(id INTEGER PRIMARY KEY, body TEXT)');
    ftsTable = "content='docs_text', content_rowid='id'";
  }
  db.exec(`CREATE VIRTUAL TABLE fts USING fts5(body, ${ftsTable}, tokenize='unicode61 remove_diacritics 0')`);
  const external = ftsTable.startsWith("content='docs_text'");
  const insertText = external ? db.prepare('INSERT INTO docs_text(id, body) VALUES (?, ?)') : undefined;
  const insert = db.prepare('INSERT INTO fts(rowid, body) VALUES (?, ?)');
  const insertBatch = db.transaction((from: number, to: number) => {
    for (let i = from; i < to; i++) {
      insertText?.run(i + 1, texts[i]);
      insert.run(i + 1, texts[i]);
    }
  });
  started = performance.now();
  for (let from = 0; from < DOCS; from += BATCH) insertBatch(from, Math.min(DOCS, from + BATCH));
  const ftsBuildMs = performance.now() - started;
  started = performance.now();
  db.pragma('wal_checkpoint(TRUNCATE)');
  const ftsCheckpointMs = performance.now() - started;
  const ftsDiskBytes = fileSize(dbFile) + fileSize(`${dbFile}-wal`);
  const ftsSegments = (
    db.prepare('SELECT count(DISTINCT id >> 37) AS n FROM fts_data WHERE (id >> 37) > 0').get() as {
      n: number;
    }
  ).n;
  db.close();
  log({ stage: 'fts5 build', ms: Math.round(ftsBuildMs), table: ftsTable, disk_mb: mb(ftsDiskBytes) });

  // What a tenant pays on start: open the file, then a first (cold) query for a rare term.
  started = performance.now();
  db = new BetterSqlite3(dbFile);
  db.pragma('journal_mode = WAL');
  const search = db.prepare('SELECT rowid AS id FROM fts WHERE fts MATCH ? ORDER BY rank LIMIT 10').pluck();
  const searchUnranked = db.prepare('SELECT rowid AS id FROM fts WHERE fts MATCH ? LIMIT 10').pluck();
  const matchAll = db.prepare('SELECT rowid AS id FROM fts WHERE fts MATCH ?').pluck();
  const ftsOpenMs = performance.now() - started;
  const ftsQuery = (q: Query) => q.terms.map((term) => (q.prefix ? `${term}*` : `"${term}"`)).join(' AND ');
  started = performance.now();
  search.all(ftsQuery(queries.rare[0]!));
  const ftsFirstQueryMs = performance.now() - started;
  const ftsCacheSize = db.pragma('cache_size', { simple: true }) as number;
  const fts5: Engine = {
    top10: (q) => search.all(ftsQuery(q)) as number[],
    all: (q) => matchAll.all(ftsQuery(q)) as number[],
  };
  const ftsLatency = latencies(fts5);
  // For reference: the first 10 matches in rowid order, no scoring (minisearch always scores every match).
  const ftsUnrankedLatency = latencies({
    ...fts5,
    top10: (q) => searchUnranked.all(ftsQuery(q)) as number[],
  });

  // A one-off merge of all segments (what a bulk load could end with): its cost and the size after it.
  started = performance.now();
  db.exec("INSERT INTO fts(fts) VALUES ('optimize')");
  db.pragma('wal_checkpoint(TRUNCATE)');
  const ftsOptimizeMs = performance.now() - started;
  const ftsOptimizedBytes = fileSize(dbFile) + fileSize(`${dbFile}-wal`);

  const fts5Line = {
    engine: 'fts5',
    docs: DOCS,
    sqlite: (db.prepare('SELECT sqlite_version() AS v').get() as { v: string }).v,
    table: ftsTable,
    build_ms: Math.round(ftsBuildMs),
    build_docs_per_s: Math.round(DOCS / (ftsBuildMs / 1000)),
    checkpoint_ms: Math.round(ftsCheckpointMs),
    segments: ftsSegments,
    disk_mb: mb(ftsDiskBytes),
    open_ms: round(ftsOpenMs, 1),
    first_query_ms: round(ftsFirstQueryMs, 1),
    // SQLite's page cache per connection (negative: KiB); memory outside the JS heap is bounded by it.
    cache_size: ftsCacheSize,
    latency: ftsLatency,
    unranked_latency: ftsUnrankedLatency,
    optimize_ms: Math.round(ftsOptimizeMs),
    optimized_disk_mb: mb(ftsOptimizedBytes),
  };
  process.stdout.write(`${JSON.stringify(fts5Line)}\n`);

  // -------------------------------------------------------------------------
  // minisearch

  // Documents are their numbers; the text is looked up, so the heap measured
  // after indexing is the index's, not a copy of the documents.
  const miniOptions: MiniSearchOptions<number> = {
    fields: ['body'],
    idField: 'id',
    extractField: (doc, field) => (field === 'id' ? doc : texts[doc - 1]),
    tokenize: (text) => text.split(/[^\p{L}\p{N}\p{Co}]+/u),
    processTerm: (term) => (term.length === 0 ? null : term.toLowerCase()),
    searchOptions: { combineWith: 'AND', prefix: false, fuzzy: false },
  };
  const heapBefore = heapUsed();
  let mini: MiniSearch<number> | undefined = new MiniSearch<number>(miniOptions);
  let ids: number[] | undefined = Array.from({ length: DOCS }, (_, i) => i + 1);
  started = performance.now();
  mini.addAll(ids);
  const miniBuildMs = performance.now() - started;
  ids = undefined;
  const miniHeapBytes = heapUsed() - heapBefore;
  log({ stage: 'minisearch build', ms: Math.round(miniBuildMs), heap_mb: mb(miniHeapBytes) });

  const jsonFile = path.join(tmp, 'minisearch.json');
  let persistMs: number | null = null;
  let persistBytes: number | null = null;
  let loadMs: number | null = null;
  let loadedHeapBytes: number | null = null;
  let persistError: string | null = null;
  try {
    started = performance.now();
    let json: string | undefined = JSON.stringify(mini);
    fs.writeFileSync(jsonFile, json);
    persistMs = performance.now() - started;
    json = undefined;
    persistBytes = fileSize(jsonFile);
    // Load into an empty heap (as a tenant starting would): drop the built index first.
    const documentCount = mini.documentCount;
    mini = undefined;
    const heapBeforeLoad = heapUsed();
    started = performance.now();
    const loaded = MiniSearch.loadJSON<number>(fs.readFileSync(jsonFile, 'utf8'), miniOptions);
    loadMs = performance.now() - started;
    loadedHeapBytes = heapUsed() - heapBeforeLoad;
    if (loaded.documentCount !== documentCount) throw new Error('loaded index differs');
    mini = loaded;
  } catch (error) {
    persistError = String(error);
    log({ stage: 'minisearch persist failed', error: persistError });
  }
  if (mini === undefined) throw new Error('no minisearch index left to query');
  const index = mini;
  const miniSearch = (q: Query) => index.search(q.terms.join(' '), { prefix: q.prefix });
  const minisearch: Engine = {
    top10: (q) =>
      miniSearch(q)
        .slice(0, 10)
        .map((r) => r.id as number),
    all: (q) => miniSearch(q).map((r) => r.id as number),
  };
  const miniLatency = latencies(minisearch);

  const miniLine = {
    engine: 'minisearch',
    docs: DOCS,
    build_ms: Math.round(miniBuildMs),
    build_docs_per_s: Math.round(DOCS / (miniBuildMs / 1000)),
    heap_mb: mb(miniHeapBytes),
    persist_ms: persistMs === null ? null : Math.round(persistMs),
    persist_mb: persistBytes === null ? null : mb(persistBytes),
    load_ms: loadMs === null ? null : Math.round(loadMs),
    loaded_heap_mb: loadedHeapBytes === null ? null : mb(loadedHeapBytes),
    persist_error: persistError,
    latency: miniLatency,
  };
  process.stdout.write(`${JSON.stringify(miniLine)}\n`);

  // -------------------------------------------------------------------------
  // Agreement: the same documents for every distinct query.

  const disagreements: Record<string, unknown>[] = [];
  const matches: Record<string, number> = {};
  for (const q of allQueries) {
    const a = fts5.all(q).sort((x, y) => x - y);
    const b = minisearch.all(q).sort((x, y) => x - y);
    matches[label(q)] = a.length;
    const same = a.length === b.length && a.every((id, i) => id === b[i]);
    if (!same) disagreements.push({ query: label(q), fts5: a.length, minisearch: b.length });
  }
  db.close();
  const agreement = { queries: allQueries.length, disagreements, matches };
  log({ stage: 'agreement', ...agreement });

  process.stdout.write(
    `${JSON.stringify({
      bench: 'fulltext',
      docs: DOCS,
      queries_per_kind: QUERIES,
      fts5_build_docs_per_s: fts5Line.build_docs_per_s,
      minisearch_build_docs_per_s: miniLine.build_docs_per_s,
      fts5_search_p50_ms: ftsLatency['common']!.p50_ms,
      minisearch_search_p50_ms: miniLatency['common']!.p50_ms,
      fts5_disk_mb: fts5Line.disk_mb,
      minisearch_persist_mb: miniLine.persist_mb,
      minisearch_load_ms: miniLine.load_ms,
      minisearch_heap_mb: miniLine.heap_mb,
      fts5_open_ms: fts5Line.open_ms,
      agree: disagreements.length === 0,
    })}\n`,
  );
} finally {
  fs.rmSync(tmp, { recursive: true, force: true });
}
