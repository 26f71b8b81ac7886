// pnpm bench:vs-postgres-suggest [--docs N] [--seed S] [--iterations N] [--typos N] — "did you mean"
// side by side with PostgreSQL 15 in one run, on the same vocabulary from the same generated
// NuGet-like package versions (default 100,000):
//
// - Rookery: the `Packages/Search` map/reduce index (its Query field is full text with
//   Suggestions: true), built by the indexer; IndexReader.suggest('Query', typo, 5) in process,
//   which reads the suggestion structure (src/indexing/suggest-store.ts). The same on a copy of
//   the index file without the structure measures the rule before it (prefix scans of fts_vocab).
// - PostgreSQL: a private server (@rookery/testkit), the index's vocabulary with its document
//   counts in `vocab(term text primary key, docs int)`, a GiST pg_trgm index on term, and the
//   trigram KNN query an expert writes for "did you mean": `ORDER BY term <-> $1 LIMIT 5`
//   (GIN cannot order by distance), a prepared statement over the Unix socket.
//
// The typos are varied, not one repeated: TYPOS terms drawn from the vocabulary weighted by their
// document counts (as users search), each with one or two random edits (insert, delete,
// substitute, transpose), cycled ITERATIONS times after a warm-up. Both sides answer every typo;
// `top1_in_pg_top5` says how often Rookery's first suggestion is among PostgreSQL's five (the
// rankings differ by design: edit distance, then frequency, against trigram similarity).
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

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
const DOCS = arg('docs', 100_000);
const SEED = arg('seed', 1);
const ITERATIONS = arg('iterations', 2_000);
const TYPOS = arg('typos', 500);
const CHUNK = 5_000;
const INDEX = PACKAGES_SEARCH_INDEX as IndexDefinition;
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

async function buildRookery(dir: string): Promise<{ file: string; indexMs: number; plainMs: number }> {
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
  indexer.close();
  return { file: path.join(dir, INDEXES_DIRECTORY, indexFileName(INDEX.Name)), indexMs, plainMs };
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

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rookery-bench-suggest-'));
  const server = await startPostgres();
  const client = new pg.Client({ host: server.socketDir, port: server.port, user: 'postgres' });
  try {
    const { file, indexMs, plainMs } = await buildRookery(dir);
    const raw = new BetterSqlite3(file, { readonly: true });
    const vocabulary = raw
      .prepare(
        `SELECT v.term AS term, v.docs AS docs FROM suggest_vocab v JOIN fields f ON f.id = v.field
         WHERE f.name = 'Query' ORDER BY v.docs DESC, v.term`,
      )
      .all() as { term: string; docs: number }[];
    const variants = (raw.prepare('SELECT count(*) AS n FROM suggest_variants').get() as { n: number }).n;
    raw.close();
    log(`vocabulary of Query: ${vocabulary.length.toLocaleString('en')} terms, ${variants} variant rows`);

    // The structure built on open, as for a file made before it: the indexer's open is timed.
    const oldDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rookery-bench-suggest-old-'));
    const oldFile = path.join(oldDir, INDEXES_DIRECTORY, indexFileName(INDEX.Name));
    fs.mkdirSync(path.dirname(oldFile), { recursive: true });
    copyWithoutStructure(file, oldFile);
    fs.copyFileSync(path.join(dir, 'docs.db'), path.join(oldDir, 'docs.db'));
    const scanCopy = path.join(oldDir, 'scan.db');
    copyWithoutStructure(file, scanCopy);
    const scanning = new IndexReader(scanCopy);
    const openStarted = performance.now();
    new DatabaseIndexer(oldDir).close();
    const buildOnOpenMs = performance.now() - openStarted;
    log(`structure built on open in ${buildOnOpenMs.toFixed(0)} ms`);

    await client.connect();
    await client.query('CREATE EXTENSION pg_trgm');
    await client.query('CREATE TABLE vocab (term text PRIMARY KEY, docs integer NOT NULL)');
    for (let i = 0; i < vocabulary.length; i += 1_000) {
      const slice = vocabulary.slice(i, i + 1_000);
      await client.query(`INSERT INTO vocab (term, docs) SELECT * FROM unnest($1::text[], $2::int[])`, [
        slice.map((v) => v.term),
        slice.map((v) => v.docs),
      ]);
    }
    await client.query('CREATE INDEX vocab_trgm ON vocab USING gist (term gist_trgm_ops)');
    await client.query('VACUUM ANALYZE vocab');
    const knn = { name: 'knn', text: 'SELECT term FROM vocab ORDER BY term <-> $1 LIMIT 5' };
    const plan = await client.query(`EXPLAIN SELECT term FROM vocab ORDER BY term <-> 'jquryt' LIMIT 5`);
    const planText = plan.rows.map((r: Record<string, string>) => Object.values(r)[0]).join(' | ');
    if (!planText.includes('vocab_trgm'))
      throw new Error(`PostgreSQL does not use the trigram index: ${planText}`);

    const typos = typosOf(vocabulary, TYPOS);
    log(`${typos.length} distinct typos, e.g. ${typos.slice(0, 8).join(', ')}`);

    const reader = new IndexReader(file);
    let top1InPg = 0;
    let answered = 0;
    let sameAsScan = 0;
    for (const typo of typos) {
      const ours = reader.suggest('Query', typo, 5);
      const theirs = (await client.query<{ term: string }>({ ...knn, values: [typo] })).rows.map(
        (r) => r.term,
      );
      if (JSON.stringify(ours) === JSON.stringify(scanning.suggest('Query', typo, 5))) sameAsScan++;
      if (ours.length > 0) answered++;
      if (ours[0] !== undefined && theirs.includes(ours[0])) top1InPg++;
    }
    if (sameAsScan !== typos.length)
      throw new Error(`the structure answered ${typos.length - sameAsScan} typos unlike the scan`);

    const rookery = await measure('rookery suggest', (i) =>
      reader.suggest('Query', typos[i % typos.length]!, 5),
    );
    const scan = await measure('rookery suggest by prefix scan (before)', (i) =>
      scanning.suggest('Query', typos[i % typos.length]!, 5),
    );
    const postgres = await measure('postgres pg_trgm knn', (i) =>
      client.query({ ...knn, values: [typos[i % typos.length]!] }),
    );
    const floor = await measure('postgres SELECT 1', () => client.query({ name: 'one', text: 'SELECT 1' }));
    reader.close();
    scanning.close();
    fs.rmSync(oldDir, { recursive: true, force: true });

    const line = {
      bench: 'vs-postgres-suggest',
      docs: DOCS,
      vocabulary_terms: vocabulary.length,
      variant_rows: variants,
      typos: typos.length,
      iterations: ITERATIONS,
      index_build_s: round(indexMs / 1000),
      index_build_without_suggestions_s: round(plainMs / 1000),
      structure_build_on_open_ms: round(buildOnOpenMs),
      rookery_suggest_p50_ms: rookery.p50,
      rookery_suggest_p99_ms: rookery.p99,
      rookery_suggest_scan_p50_ms: scan.p50,
      rookery_suggest_scan_p99_ms: scan.p99,
      postgres_trgm_knn_p50_ms: postgres.p50,
      postgres_trgm_knn_p99_ms: postgres.p99,
      postgres_select1_p50_ms: floor.p50,
      ratio_p50: round(postgres.p50 / rookery.p50),
      ratio_p99: round(postgres.p99 / rookery.p99),
      answered_share: round(answered / typos.length),
      top1_in_pg_top5_share: round(top1InPg / Math.max(1, answered)),
    };
    process.stdout.write(`${JSON.stringify(line)}\n`);
  } finally {
    await client.end().catch(() => undefined);
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
