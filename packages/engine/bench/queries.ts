// pnpm bench:queries [--docs N] [--seed S] [--iterations N] [--dir D] — indexing speed and query latency
// on generated NuGet-like package versions (default 1,000,000), in one run:
//
// - index_map_docs_per_s: a map index over every version (PackageId,
//   IsPrerelease, DownloadCount, Created, Tags, full-text Query);
// - index_mapreduce_docs_per_s: the `Packages/Search` map/reduce index of the
//   NuGet test (background.md), grouped by (PackageId, IsPrerelease);
// - p50/p99 ms of the NuGet pages and the other query shapes, each run
//   ITERATIONS times after a warm-up, through the engine's IndexReader (the
//   same code the HTTP API runs; HTTP is measured by the k6 suite); the
//   searches also "cold", with the reader's match bitmaps dropped before each, and "mixed":
//   ITERATIONS searches (words, and pairs of words) drawn with repetition, Zipf-weighted over the
//   whole vocabulary of the Query field (nuget-workload.ts), as users search: hundreds of distinct
//   words, a few recurring (search_1term_mixed_*, search_2terms_mixed_*, mixed_distinct_words);
// - point_equality and startswith_prefix look up PackageIds sampled uniformly across every version
//   (a reservoir of 1,000), not the first few.
//
// --per-tag adds a stderr line per search tag (8 common, 8 rare): its matches and ms for the SQL plan
// alone, and with match bitmaps for the first query and once kept (one reader, common tags first).
//
// --dir D keeps the database and its indexes in D; a later run with the same
// D and --docs reuses them and only measures queries (indexing figures are
// then 0): for working on query code without rebuilding 1M documents.
//
// --inline also builds both indexes again with every batch prepared on the
// indexing thread (the same writer, without the prepare thread), after the
// measured builds, and adds index_*_inline_docs_per_s: a ratio in one run.
//
// Stages go to stderr; the last stdout line is one JSON object.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { generatePackages, Random, TAGS } from '@rookery/datagen';
import type { IndexDefinition } from '@rookery/protocol';
import { Database } from '../src/database.js';
import { DatabaseIndexer } from '../src/indexing/database-indexer.js';
import { INDEXES_DIRECTORY, indexFileName } from '../src/indexing/index-file.js';
import { PrepareThread } from '../src/indexing/prepare-thread.js';
import { IndexReader } from '../src/query/index-reader.js';
import type { IndexQuery, Predicate } from '../src/query/plan.js';
import { arg, dirArg } from './args.js';
import { BY_FIELDS_INDEX, SEARCH_INDEX } from './nuget-indexes.js';
import {
  countWords,
  queryWords,
  Reservoir,
  type Vocabulary,
  zipfPairs,
  zipfWords,
} from './nuget-workload.js';
import { log, percentile, round } from './stats.js';

const DOCS = arg('docs', 1_000_000);
const SEED = arg('seed', 1);
const ITERATIONS = arg('iterations', 300);
const CHUNK = 5_000;
const INLINE = process.argv.includes('--inline');
const KEEP_DIR = dirArg('dir');

function measure(name: string, run: (i: number) => unknown): { p50: number; p99: number } {
  for (let i = 0; i < Math.min(30, ITERATIONS); i++) run(i);
  const times: number[] = [];
  for (let i = 0; i < ITERATIONS; i++) {
    const started = performance.now();
    run(i);
    times.push(performance.now() - started);
  }
  times.sort((a, b) => a - b);
  const result = { p50: round(percentile(times, 50)), p99: round(percentile(times, 99)) };
  log(`${name}: p50 ${result.p50} ms, p99 ${result.p99} ms`);
  return result;
}

interface Built {
  mapRate: number;
  reduceRate: number;
  /** With --inline: the same builds with batches prepared on the indexing thread. */
  mapInlineRate: number | null;
  reduceInlineRate: number | null;
  ids: string[];
  /** The Query field's words with their document counts (the mixed searches draw from it). */
  vocabulary: [string, number][];
}

/** Inserts the documents and builds both indexes in `dir`; the ids are a sample of PackageIds to query. */
async function buildDatabase(dir: string): Promise<Built> {
  const db = Database.create(dir, 'nuget');
  log(`inserting ${DOCS.toLocaleString('en')} package versions`);
  // Sampled across every version: a reservoir, so late packages are as likely as the first.
  const sample = new Reservoir<string>(1_000, SEED);
  const vocabulary: Vocabulary = new Map();
  let chunk: { Id: string; Document: Record<string, unknown> }[] = [];
  for (const doc of generatePackages({ seed: SEED, packageVersions: DOCS })) {
    const { id, ...body } = doc;
    chunk.push({ Id: id, Document: body as unknown as Record<string, unknown> });
    sample.offer(doc.PackageId);
    countWords(vocabulary, queryWords(doc));
    if (chunk.length === CHUNK) {
      await db.insertMany(chunk);
      chunk = [];
    }
  }
  if (chunk.length > 0) await db.insertMany(chunk);
  await db.close();

  // As the indexer process runs it: batches read and mapped on a second thread while the last one is written.
  const prepareThread = new PrepareThread();
  const indexer = new DatabaseIndexer(dir, { prepareThread });
  const build = async (definition: IndexDefinition, inline = false) => {
    if (!indexer.reset(definition.Name)) indexer.put(definition);
    const how = inline ? ' (prepared inline)' : '';
    const started = performance.now();
    let done = 0;
    for (;;) {
      const progress = inline ? indexer.runOnce() : await indexer.step();
      if (progress.length === 0) break;
      done += progress.reduce((sum, p) => sum + p.documents, 0);
      if (done % 163_840 < 16_384) log(`${definition.Name}${how}: ${done.toLocaleString('en')} documents`);
    }
    const seconds = (performance.now() - started) / 1000;
    const rate = Math.round(DOCS / seconds);
    log(`${definition.Name}${how}: ${rate.toLocaleString('en')} docs/s (${seconds.toFixed(1)} s)`);
    return rate;
  };
  // With --inline, each index is built a second time right after, the old way, for a ratio in one run.
  const mapRate = await build(BY_FIELDS_INDEX);
  const mapInlineRate = INLINE ? await build(BY_FIELDS_INDEX, true) : null;
  const reduceRate = await build(SEARCH_INDEX);
  const reduceInlineRate = INLINE ? await build(SEARCH_INDEX, true) : null;
  for (const name of indexer.names) {
    const errors = indexer.stats(name)?.ErrorsCount ?? 0;
    if (errors > 0) throw new Error(`${name} has ${errors} indexing errors`);
  }
  indexer.close();
  await prepareThread.close();
  return {
    mapRate,
    reduceRate,
    mapInlineRate,
    reduceInlineRate,
    ids: sample.items,
    vocabulary: [...vocabulary],
  };
}

async function main(): Promise<void> {
  const dir = KEEP_DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), 'rookery-bench-queries-'));
  // v2: {ids, vocabulary}; a v1 file (the ids alone, sampled from the first versions) is rebuilt.
  const built = path.join(dir, `bench-${DOCS}-${SEED}.v2.json`);
  try {
    let figures: Built;
    if (KEEP_DIR && fs.existsSync(built)) {
      log(`reusing the database in ${dir}`);
      const kept = JSON.parse(fs.readFileSync(built, 'utf8')) as Pick<Built, 'ids' | 'vocabulary'>;
      figures = { mapRate: 0, reduceRate: 0, mapInlineRate: null, reduceInlineRate: null, ...kept };
    } else {
      if (KEEP_DIR) fs.rmSync(dir, { recursive: true, force: true });
      fs.mkdirSync(dir, { recursive: true });
      figures = await buildDatabase(dir);
      fs.writeFileSync(built, JSON.stringify({ ids: figures.ids, vocabulary: figures.vocabulary }));
    }
    const { mapRate, reduceRate, mapInlineRate, reduceInlineRate, ids } = figures;
    // The mixed searches: WARM_UP + ITERATIONS draws, so measure()'s warm-up takes its own words.
    const vocabulary: Vocabulary = new Map(figures.vocabulary);
    const rng = new Random(SEED, 11);
    const draws = ITERATIONS + Math.min(30, ITERATIONS);
    const mixedWords = zipfWords(vocabulary, draws, rng);
    const mixedPairs = zipfPairs(vocabulary, draws, rng).map(([a, b]) => `${a} ${b}`);
    const mixedDistinct = new Set(mixedWords.slice(-ITERATIONS)).size;
    log(
      `mixed searches: ${mixedDistinct} distinct words in ${ITERATIONS} (e.g. ${mixedWords.slice(0, 8).join(', ')})`,
    );
    let mixed1 = 0;
    let mixed2 = 0;

    const open = (name: string) => new IndexReader(path.join(dir, INDEXES_DIRECTORY, indexFileName(name)));
    const search = open(SEARCH_INDEX.Name);
    const byFields = open(BY_FIELDS_INDEX.Name);
    const notPrerelease: Predicate = { kind: 'compare', field: 'IsPrerelease', op: '=', value: false };
    const listing = (where: Predicate, page: number): IndexQuery => ({
      where,
      orderBy: [
        { kind: 'field', field: 'DownloadCount', descending: true },
        { kind: 'field', field: 'Created', descending: false },
      ],
      skip: page * 30,
      take: 30,
    });
    const common = TAGS.slice(0, 8);
    const rare = TAGS.slice(-40);
    const withSearch = (terms: string, operator: 'and' | 'or'): Predicate => ({
      kind: 'and',
      children: [notPrerelease, { kind: 'search', field: 'Query', terms, operator }],
    });
    const check = (what: string, total: number) => {
      if (total === 0)
        throw new Error(`${what} matched nothing: the benchmark would measure an empty answer`);
    };
    check('listing', search.run(listing(notPrerelease, 0)).total);
    check('search', search.run(listing(withSearch(common[0] ?? 'json', 'or'), 0)).total);

    if (process.argv.includes('--per-tag')) {
      const file = path.join(dir, INDEXES_DIRECTORY, indexFileName(SEARCH_INDEX.Name));
      const sqlOnly = new IndexReader(file, { matchSets: 'never' });
      const bitmaps = new IndexReader(file);
      const ms = (run: () => unknown) => {
        const started = performance.now();
        run();
        return round(performance.now() - started);
      };
      const median = (times: number[]) =>
        percentile(
          [...times].sort((a, b) => a - b),
          50,
        );
      for (const tag of [...common, ...rare.slice(0, 8)]) {
        const q = listing(withSearch(tag, 'or'), 0);
        const sql = median([0, 1, 2].map(() => ms(() => sqlOnly.run(q))));
        const first = ms(() => bitmaps.run(q));
        const kept = median([0, 1, 2].map(() => ms(() => bitmaps.run(q))));
        const page = bitmaps.run(q);
        const matchPlan = page.plan.Children?.[0]?.Details ?? '';
        log(
          JSON.stringify({
            stage: 'per_tag',
            tag,
            matches: page.total,
            sql_ms: sql,
            first_ms: first,
            kept_ms: kept,
            bitmaps: matchPlan.startsWith('bitmaps'),
          }),
        );
      }
      sqlOnly.close();
      bitmaps.close();
    }

    const results = {
      listing_page: measure('listing_page', (i) => search.run(listing(notPrerelease, i % 3))),
      search_1term: measure('search_1term', (i) =>
        search.run(listing(withSearch((i % 2 ? common : rare)[i % 8] ?? 'json', 'or'), 0)),
      ),
      search_2terms: measure('search_2terms', (i) =>
        search.run(listing(withSearch(`${common[i % 8]} ${common[(i + 3) % 8]}`, 'and'), 0)),
      ),
      // The same with no match bitmaps kept: every query reads its terms' bitmaps or probes in SQL, as the
      // first query after the indexer commits does.
      search_1term_cold: measure('search_1term_cold', (i) => {
        search.dropMatchSets();
        return search.run(listing(withSearch((i % 2 ? common : rare)[i % 8] ?? 'json', 'or'), 0));
      }),
      search_2terms_cold: measure('search_2terms_cold', (i) => {
        search.dropMatchSets();
        return search.run(listing(withSearch(`${common[i % 8]} ${common[(i + 3) % 8]}`, 'and'), 0));
      }),
      // Drawn in sequence, warm-up included: the reader keeps what earlier words read, as in service.
      search_1term_mixed: measure('search_1term_mixed', () =>
        search.run(listing(withSearch(mixedWords[mixed1++ % draws] ?? 'json', 'or'), 0)),
      ),
      search_2terms_mixed: measure('search_2terms_mixed', () =>
        search.run(listing(withSearch(mixedPairs[mixed2++ % mixedPairs.length] ?? 'json', 'and'), 0)),
      ),
      facets_tags_whole_dataset: measure('facets_tags_whole_dataset', () =>
        search.facets(null, [{ kind: 'terms', field: 'Tags', name: 'Tags', top: 20, order: 'countDesc' }]),
      ),
      suggest: measure('suggest', (i) => {
        const word = common[i % 8] ?? 'jquery';
        return search.suggest('Query', `${word.slice(0, 2)}${word.slice(3)}x`, 5);
      }),
      startswith_prefix: measure('startswith_prefix', (i) =>
        byFields.run({
          where: { kind: 'startsWith', field: 'PackageId', value: (ids[i % ids.length] ?? 'a').slice(0, 3) },
          orderBy: [],
          skip: 0,
          take: 30,
        }),
      ),
      point_equality: measure('point_equality', (i) =>
        byFields.run({
          where: { kind: 'compare', field: 'PackageId', op: '=', value: ids[(i + 7) % ids.length] ?? '' },
          orderBy: [],
          skip: 0,
          take: 30,
        }),
      ),
    };
    search.close();
    byFields.close();

    const line: Record<string, number | string> = {
      bench: 'queries',
      docs: DOCS,
      sampled_package_ids: ids.length,
      mixed_distinct_words: mixedDistinct,
      index_map_docs_per_s: mapRate,
      index_mapreduce_docs_per_s: reduceRate,
      ...(mapInlineRate !== null && reduceInlineRate !== null
        ? { index_map_inline_docs_per_s: mapInlineRate, index_mapreduce_inline_docs_per_s: reduceInlineRate }
        : {}),
    };
    for (const [name, r] of Object.entries(results)) {
      line[`${name}_p50_ms`] = r.p50;
      line[`${name}_p99_ms`] = r.p99;
    }
    process.stdout.write(`${JSON.stringify(line)}\n`);
  } finally {
    if (!KEEP_DIR) fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
