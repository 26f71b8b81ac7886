// pnpm bench:vs-postgres-suggest [--docs N] [--seed S] [--iterations N] [--typos N] — "did you mean"
// side by side with PostgreSQL 15 in one run, on the same vocabulary from the same generated
// NuGet-like package versions (default 100,000):
//
// - Rookery: the `Packages/Search` map/reduce index (its Query field is full text with
//   Suggestions: true), built by the indexer; IndexReader.suggest('Query', typo, 5) in process,
//   which reads the suggestion structure (src/indexing/suggest-store.ts). The same on a copy of
//   the index file without the structure measures the rule before it (prefix scans of fts_vocab).
// - PostgreSQL: a private server (@rookery/testkit), the index's vocabulary with its document
//   counts in a table `(term text primary key, docs int)`, a GiST pg_trgm index on term, and the
//   trigram KNN query an expert writes for "did you mean": `ORDER BY term <-> $1 LIMIT 5`
//   (GIN cannot order by distance), a prepared statement over the Unix socket.
//
// The typos are varied, not one repeated: TYPOS terms drawn from the vocabulary weighted by their
// document counts (as users search), each with one or two random edits (insert, delete,
// substitute, transpose), cycled ITERATIONS times after a warm-up. Every typo is first checked to get
// the same answer from the structure as from the prefix scan (the run stops otherwise); both sides answer it;
// `top1_in_pg_top5` says how often Rookery's first suggestion is among PostgreSQL's five (the
// rankings differ by design: edit distance, then frequency, against trigram similarity).
//
// The same for a bigger vocabulary: the package ids (`Packages/Ids`, PackageId a term field with
// Suggestions: true, tens of thousands of terms at 100k documents); keys are prefixed `query_` / `ids_`.
//
// Also measured: what keeping the structure costs a build (`index_build_s` against the same index
// without Suggestions, `index_build_without_suggestions_s`, built before it on the same documents), and
// how long the indexer takes to build the structure when it opens an index file
// made before it (`structure_build_on_open_ms`, the same vocabulary).
//
// Stages go to stderr; the last stdout line is one JSON object.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generatePackages, PACKAGES_SEARCH_INDEX, Random } from '@rookery/datagen';
import type { IndexDefinition } from '@rookery/protocol';
import { startPostgres } from '@rookery/testkit';
import BetterSqlite3 from 'better-sqlite3';
import pg from 'pg';
import { Database } from '../src/database.js';
import { DatabaseIndexer } from '../src/indexing/database-indexer.js';
import { INDEXES_DIRECTORY, indexFileName } from '../src/indexing/index-file.js';
import { SUGGEST_META_KEY } from '../src/indexing/suggest-store.js';
import { IndexReader } from '../src/query/index-reader.js';
import { arg } from './args.js';

const DOCS = arg('docs', 100_000);
const SEED = arg('seed', 1);
const ITERATIONS = arg('iterations', 2_000);
const TYPOS = arg('typos', 500);
const CHUNK = 5_000;
const INDEX = PACKAGES_SEARCH_INDEX as IndexDefinition;
/** A bigger vocabulary: the package ids themselves (a term field), tens of thousands of them. */
const IDS_INDEX: IndexDefinition = {
  Name: 'Packages/Ids',
  Maps: [{ Collection: 'Packages', Fields: { PackageId: 'PackageId' } }],
  Fields: { PackageId: { Suggestions: true } },
};
const log = (message: string) =>
  process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${message}\n`);
const round = (n: number) => Math.round(n * 1000) / 1000;

function percentile(sorted: number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

async function measure(
  name: string,
  run: (i: number) => unknown | Promise<unknown>,
): Promise<{ p50: number; p99: number }> {
  for (let i = 0; i < Math.min(100, ITERATIONS); i++) await run(i);
  const times: number[] = [];
  for (let i = 0; i < ITERATIONS; i++) {
    const started = performance.now();
    await run(i);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  const result = { p50: round(percentile(times, 50)), p99: round(percentile(times, 99)) };
  log(`${name}: p50 ${result.p50} ms, p99 ${result.p99} ms`);
  return result;
}

/** Misspellings of vocabulary terms, drawn by document count, each with one or two random edits. */
function typosOf(vocabulary: { term: string; docs: number }[], count: number): string[] {
  const rng = new Random(SEED + 7);
  const total = vocabulary.reduce((sum, v) => sum + v.docs, 0);
  const letters = 'abcdefghijklmnopqrstuvwxyz';
  const typos = new Set<string>();
  for (let attempt = 0; typos.size < count && attempt < count * 50; attempt++) {
    let pick = rng.float() * total;
    let term = vocabulary[0]!.term;
    for (const v of vocabulary) {
      pick -= v.docs;
      if (pick <= 0) {
        term = v.term;
        break;
      }
    }
    const chars = Array.from(term);
    const edits = 1 + Math.floor(rng.float() * 2);
    for (let e = 0; e < edits; e++) {
      const at = Math.floor(rng.float() * chars.length);
      const letter = letters[Math.floor(rng.float() * letters.length)]!;
      const kind = Math.floor(rng.float() * 4);
      if (kind === 0) chars.splice(at, 0, letter);
      else if (kind === 1 && chars.length > 2) chars.splice(at, 1);
      else if (kind === 2) chars[at] = letter;
      else if (at + 1 < chars.length) [chars[at], chars[at + 1]] = [chars[at + 1]!, chars[at]!];
    }
    const typo = chars.join('');
    if (typo.length >= 2 && !vocabulary.some((v) => v.term === typo)) typos.add(typo);
  }
  return [...typos];
}

async function buildRookery(dir: string): Promise<{ indexMs: number; plainMs: number }> {
  const db = Database.create(dir, 'nuget');
  log(`inserting ${DOCS.toLocaleString('en')} package versions`);
  let chunk: { Id: string; Document: Record<string, unknown> }[] = [];
  for (const doc of generatePackages({ seed: SEED, packageVersions: DOCS })) {
    const { id, ...body } = doc;
    chunk.push({ Id: id, Document: body as unknown as Record<string, unknown> });
    if (chunk.length === CHUNK) {
      await db.insertMany(chunk);
      chunk = [];
    }
  }
  if (chunk.length > 0) await db.insertMany(chunk);
  await db.close();
  const indexer = new DatabaseIndexer(dir);
  const build = (definition: IndexDefinition) => {
    const started = performance.now();
    indexer.put(definition);
    indexer.runUntilIdle();
    const ms = performance.now() - started;
    log(`${definition.Name}: built in ${(ms / 1000).toFixed(1)} s`);
    return ms;
  };
  // What keeping the structure costs a build: the same index without Suggestions, built first, then deleted.
  const plain: IndexDefinition = {
    ...INDEX,
    Name: `${INDEX.Name}WithoutSuggestions`,
    Fields: { Query: { Indexing: 'Search' } },
  };
  const plainMs = build(plain);
  indexer.delete(plain.Name);
  const indexMs = build(INDEX);
  build(IDS_INDEX);
  indexer.close();
  return { indexMs, plainMs };
}

/** A copy of the index file as an older version wrote it: no suggestion structure, so suggest scans. */
function copyWithoutStructure(file: string, copy: string): void {
  const source = new BetterSqlite3(file, { readonly: true });
  source.exec(`VACUUM INTO '${copy.replaceAll("'", "''")}'`);
  source.close();
  const old = new BetterSqlite3(copy);
  old.exec(
    `DROP TABLE suggest_vocab; DROP TABLE suggest_variants; DROP TABLE suggest_tokens;
     DELETE FROM meta WHERE key = '${SUGGEST_META_KEY}';`,
  );
  old.close();
}

interface Figures {
  vocabulary_terms: number;
  variant_rows: number;
  typos: number;
  rookery_p50_ms: number;
  rookery_p99_ms: number;
  rookery_scan_p50_ms: number;
  rookery_scan_p99_ms: number;
  postgres_knn_p50_ms: number;
  postgres_knn_p99_ms: number;
  ratio_p50: number;
  ratio_p99: number;
  answered_share: number;
  top1_in_pg_top5_share: number;
}

/** One field's vocabulary on both sides: the same terms and counts, the same typos, the answers checked. */
async function compare(
  client: pg.Client,
  dir: string,
  definition: IndexDefinition,
  field: string,
  table: string,
): Promise<Figures> {
  const file = path.join(dir, INDEXES_DIRECTORY, indexFileName(definition.Name));
  const raw = new BetterSqlite3(file, { readonly: true });
  const vocabulary = raw
    .prepare(
      `SELECT v.term AS term, v.docs AS docs FROM suggest_vocab v JOIN fields f ON f.id = v.field
       WHERE f.name = ? ORDER BY v.docs DESC, v.term`,
    )
    .all(field) as { term: string; docs: number }[];
  const variants = (raw.prepare('SELECT count(*) AS n FROM suggest_variants').get() as { n: number }).n;
  raw.close();
  log(
    `${definition.Name} ${field}: ${vocabulary.length.toLocaleString('en')} terms, ${variants} variant rows`,
  );

  await client.query(`CREATE TABLE ${table} (term text PRIMARY KEY, docs integer NOT NULL)`);
  for (let i = 0; i < vocabulary.length; i += 10_000) {
    const slice = vocabulary.slice(i, i + 10_000);
    await client.query(`INSERT INTO ${table} (term, docs) SELECT * FROM unnest($1::text[], $2::int[])`, [
      slice.map((v) => v.term),
      slice.map((v) => v.docs),
    ]);
  }
  await client.query(`CREATE INDEX ${table}_trgm ON ${table} USING gist (term gist_trgm_ops)`);
  await client.query(`VACUUM ANALYZE ${table}`);
  const knn = { name: `knn_${table}`, text: `SELECT term FROM ${table} ORDER BY term <-> $1 LIMIT 5` };
  const plan = await client.query(`EXPLAIN SELECT term FROM ${table} ORDER BY term <-> 'jquryt' LIMIT 5`);
  const planText = plan.rows.map((r: Record<string, string>) => Object.values(r)[0]).join(' | ');
  if (!planText.includes(`${table}_trgm`))
    throw new Error(`PostgreSQL does not use the trigram index: ${planText}`);

  const typos = typosOf(vocabulary, TYPOS);
  log(`${typos.length} distinct typos, e.g. ${typos.slice(0, 6).join(', ')}`);
  const reader = new IndexReader(file);
  const scanFile = path.join(dir, `scan-${table}.db`);
  copyWithoutStructure(file, scanFile);
  const scanning = new IndexReader(scanFile);
  try {
    let top1InPg = 0;
    let answered = 0;
    for (const typo of typos) {
      const ours = reader.suggest(field, typo, 5);
      const before = scanning.suggest(field, typo, 5);
      if (JSON.stringify(ours) !== JSON.stringify(before))
        throw new Error(
          `for ${typo} the structure answered ${ours.join(', ')}, the scan ${before.join(', ')}`,
        );
      const theirs = (await client.query<{ term: string }>({ ...knn, values: [typo] })).rows.map(
        (r) => r.term,
      );
      if (ours.length > 0) answered++;
      if (ours[0] !== undefined && theirs.includes(ours[0])) top1InPg++;
    }
    const typo = (i: number) => typos[i % typos.length]!;
    const rookery = await measure(`${field}: rookery suggest`, (i) => reader.suggest(field, typo(i), 5));
    const scan = await measure(`${field}: rookery by prefix scan (before)`, (i) =>
      scanning.suggest(field, typo(i), 5),
    );
    const postgres = await measure(`${field}: postgres pg_trgm knn`, (i) =>
      client.query({ ...knn, values: [typo(i)] }),
    );
    return {
      vocabulary_terms: vocabulary.length,
      variant_rows: variants,
      typos: typos.length,
      rookery_p50_ms: rookery.p50,
      rookery_p99_ms: rookery.p99,
      rookery_scan_p50_ms: scan.p50,
      rookery_scan_p99_ms: scan.p99,
      postgres_knn_p50_ms: postgres.p50,
      postgres_knn_p99_ms: postgres.p99,
      ratio_p50: round(postgres.p50 / rookery.p50),
      ratio_p99: round(postgres.p99 / rookery.p99),
      answered_share: round(answered / typos.length),
      top1_in_pg_top5_share: round(top1InPg / Math.max(1, answered)),
    };
  } finally {
    reader.close();
    scanning.close();
  }
}

/** How long the indexer takes to build the structure on opening a file made before it (docs.db beside it). */
function buildOnOpenMs(dir: string): number {
  const oldDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rookery-bench-suggest-old-'));
  try {
    const oldFile = path.join(oldDir, INDEXES_DIRECTORY, indexFileName(INDEX.Name));
    fs.mkdirSync(path.dirname(oldFile), { recursive: true });
    copyWithoutStructure(path.join(dir, INDEXES_DIRECTORY, indexFileName(INDEX.Name)), oldFile);
    fs.copyFileSync(path.join(dir, 'docs.db'), path.join(oldDir, 'docs.db'));
    const started = performance.now();
    new DatabaseIndexer(oldDir).close();
    const ms = performance.now() - started;
    log(`structure built on open in ${ms.toFixed(0)} ms`);
    return ms;
  } finally {
    fs.rmSync(oldDir, { recursive: true, force: true });
  }
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rookery-bench-suggest-'));
  const server = await startPostgres();
  const client = new pg.Client({ host: server.socketDir, port: server.port, user: 'postgres' });
  try {
    const { indexMs, plainMs } = await buildRookery(dir);
    const openMs = buildOnOpenMs(dir);
    await client.connect();
    await client.query('CREATE EXTENSION pg_trgm');
    const query = await compare(client, dir, INDEX, 'Query', 'vocab_query');
    const ids = await compare(client, dir, IDS_INDEX, 'PackageId', 'vocab_ids');
    const floor = await measure('postgres SELECT 1', () => client.query({ name: 'one', text: 'SELECT 1' }));
    const line: Record<string, number | string> = {
      bench: 'vs-postgres-suggest',
      docs: DOCS,
      iterations: ITERATIONS,
      index_build_s: round(indexMs / 1000),
      index_build_without_suggestions_s: round(plainMs / 1000),
      structure_build_on_open_ms: round(openMs),
      postgres_select1_p50_ms: floor.p50,
    };
    for (const [key, value] of Object.entries(query)) line[`query_${key}`] = value;
    for (const [key, value] of Object.entries(ids)) line[`ids_${key}`] = value;
    process.stdout.write(`${JSON.stringify(line)}\n`);
  } finally {
    await client.end().catch(() => undefined);
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
