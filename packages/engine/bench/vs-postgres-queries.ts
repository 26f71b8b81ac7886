// pnpm bench:vs-postgres-queries [--docs N] [--seed S] [--iterations N] [--queries N] [--dir D] — every
// query shape of bench:queries side by side with PostgreSQL 15 in one run, on the same generated
// NuGet-like package versions (default 200,000), every answer checked equal on both sides.
//
// - Rookery: the benchmarks' map index `Packages/ByFields` (nuget-indexes.ts: PackageId,
//   IsPrerelease, DownloadCount, Created, Tags; Query = Tags + Title + PackageId, full text), built by
//   the indexer; IndexReader in process (the code behind `POST /queries`).
// - PostgreSQL: a private server (@rookery/testkit), one typed row per version and the indexes an
//   expert builds for exactly these queries (postgres-nuget.ts; README.md here says why each); each
//   query ONE prepared statement, total and page in one round trip, over the Unix socket.
//
// Rows (p50 and p99 ms; ITERATIONS runs after a warm-up unless said):
// - listing_page: not prerelease, DownloadCount desc then Created, 30 per page, pages 0–2, with total;
// - search_1term / search_2terms (`and`): the listing with search(Query, words):
//   cold = QUERIES words never queried before in the run, drawn by document count without
//   repetition (nuget-workload.ts drawTerms); warm = the same words again; mixed = ITERATIONS
//   words (pairs) drawn with repetition, Zipf-weighted over the whole vocabulary (as users search);
// - facets_tags_precomputed / facets_tags_adhoc: the top 20 tags over every version: Rookery's
//   facets against a materialized count view, and against an aggregate over the table;
// - startswith_prefix: PackageId starting with the first 3 letters of a sampled id, 30, with total;
// - point_equality: PackageId = a sampled id, with total.
// The ids are sampled uniformly across the data (a reservoir), not the first few.
//
// Sides go in rotating order per query, so no side always finds the other's reads in the OS cache.
// The run fails if any answer differs (total and page ids; the facets' tags and counts).
// --dir D keeps the docs.db (for `bench:index-build --docs-dir D`, as bench:vs-postgres does).
//
// Stages go to stderr; the last stdout line is one JSON object: `rows` maps each figure to
// {rookery, postgres, ratio} (ratio = postgres / rookery: above 1, Rookery is faster).
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Random } from '@rookery/datagen';
import { startPostgres } from '@rookery/testkit';
import pg from 'pg';
import { IndexReader } from '../src/query/index-reader.js';
import type { IndexQuery, Predicate } from '../src/query/plan.js';
import { arg, dirArg } from './args.js';
import { buildByFields } from './nuget-indexes.js';
import { drawTerms, zipfPairs, zipfWords } from './nuget-workload.js';
import { loadBothSides, planOf } from './postgres-nuget.js';
import { type Latency, log, round, summary } from './stats.js';

const DOCS = arg('docs', 200_000);
const SEED = arg('seed', 1);
const ITERATIONS = arg('iterations', 300);
const QUERIES = arg('queries', 100);
const WARMUP = 30;
const KEEP_DIR = dirArg('dir');

/** What both sides answer, compared as JSON: the total and the page's ids, or the facet's values. */
type Answer = { total: number; ids: string[] } | { facets: [string, number][] };
type Side = 'rookery' | 'postgres';
const SIDES: Side[] = ['rookery', 'postgres'];

/** One query shape: how each side answers one input. */
interface Shape<I> {
  rookery(input: I): Answer;
  postgres(input: I): Promise<Answer>;
}

/**
 * Runs every input on both sides in rotating order, checks the answers are equal (throws otherwise),
 * and returns each side's p50/p99. `warmup` inputs run first, unmeasured and unchecked.
 */
async function phase<I>(
  label: string,
  shape: Shape<I>,
  inputs: readonly I[],
  warmup: readonly I[] = [],
): Promise<Record<Side, Latency>> {
  for (const input of warmup) {
    shape.rookery(input);
    await shape.postgres(input);
  }
  const times: Record<Side, number[]> = { rookery: [], postgres: [] };
  let matches = 0;
  for (const [q, input] of inputs.entries()) {
    const answers = new Map<Side, string>();
    for (let k = 0; k < SIDES.length; k++) {
      const side = SIDES[(q + k) % SIDES.length]!;
      const started = performance.now();
      const answer = side === 'rookery' ? shape.rookery(input) : await shape.postgres(input);
      times[side].push(performance.now() - started);
      answers.set(side, JSON.stringify(answer));
      if (side === 'rookery' && 'total' in answer) matches += answer.total;
    }
    if (answers.get('rookery') !== answers.get('postgres')) {
      throw new Error(
        `${label} ${JSON.stringify(input)}: the answers differ:\n rookery  ${answers.get('rookery')}\n postgres ${answers.get('postgres')}`,
      );
    }
  }
  const average = matches > 0 ? `, ${Math.round(matches / inputs.length)} matches on average` : '';
  log(`${label}: ${inputs.length} queries, answers equal${average}`);
  return {
    rookery: summary(`${label} rookery`, times.rookery),
    postgres: summary(`${label} postgres`, times.postgres),
  };
}

/** A prepared statement answering `{ total, ids }` in one round trip. */
function pageStatement(client: pg.Client, name: string, text: string) {
  return async (values: unknown[]): Promise<Answer> => {
    const { rows } = await client.query<{ total: string; ids: string[] }>({ name, text, values });
    return { total: Number(rows[0]?.total ?? 0), ids: rows[0]?.ids ?? [] };
  };
}

async function main(): Promise<void> {
  const dir = KEEP_DIR ?? fs.mkdtempSync(path.join(os.tmpdir(), 'rookery-bench-vs-pg-queries-'));
  if (KEEP_DIR) {
    fs.rmSync(dir, { recursive: true, force: true });
    fs.mkdirSync(dir, { recursive: true });
  }
  const server = await startPostgres();
  const client = new pg.Client({ host: server.socketDir, port: server.port, user: 'postgres' });
  try {
    await client.connect();
    const loaded = await loadBothSides(dir, client, { docs: DOCS, seed: SEED });
    // A plan per word: a prepared statement's generic plan cannot know a word's selectivity, and one
    // chosen for common words (walk the listing index, test each row) reads the whole index for a
    // rare pair (~300 ms at 200k, measured). An expert forces custom plans for such statements.
    await client.query('SET plan_cache_mode = force_custom_plan');
    const reader = new IndexReader(buildByFields(dir));

    const rookeryPage = (query: IndexQuery): Answer => {
      const page = reader.run(query);
      return { total: page.total, ids: page.entries.map((e) => (e.docId ?? '').toLowerCase()) };
    };
    const notPrerelease: Predicate = { kind: 'compare', field: 'IsPrerelease', op: '=', value: false };
    const listingOrder: IndexQuery['orderBy'] = [
      { kind: 'field', field: 'DownloadCount', descending: true },
      { kind: 'field', field: 'Created', descending: false },
    ];
    // Ties after (DownloadCount, Created) are in index-entry order on Rookery: `seq` on PostgreSQL.
    const LISTING = 'ORDER BY download_count DESC, created, seq';

    const listing: Shape<number> = {
      rookery: (page) =>
        rookeryPage({ where: notPrerelease, orderBy: listingOrder, skip: page * 30, take: 30 }),
      postgres: (page) =>
        pageStatement(
          client,
          'listing',
          `SELECT (SELECT count(*) FROM packages WHERE NOT is_prerelease) AS total,
             ARRAY(SELECT id FROM packages WHERE NOT is_prerelease ${LISTING} OFFSET $1 LIMIT 30) AS ids`,
        )([page * 30]),
    };
    const tsquery = (words: string[]) => words.map((w) => `'${w}'`).join(' & ');
    const searchPg = pageStatement(
      client,
      'search',
      `SELECT (SELECT count(*) FROM packages WHERE NOT is_prerelease AND body @@ $1::tsquery) AS total,
         ARRAY(SELECT id FROM packages WHERE NOT is_prerelease AND body @@ $1::tsquery ${LISTING} LIMIT 30) AS ids`,
    );
    const search: Shape<string[]> = {
      rookery: (words) =>
        rookeryPage({
          where: {
            kind: 'and',
            children: [
              notPrerelease,
              { kind: 'search', field: 'Query', terms: words.join(' '), operator: 'and' },
            ],
          },
          orderBy: listingOrder,
          skip: 0,
          take: 30,
        }),
      postgres: (words) => searchPg([tsquery(words)]),
    };
    const rookeryFacets = (): Answer => {
      const [tags] = reader.facets(null, [
        { kind: 'terms', field: 'Tags', name: 'Tags', top: 20, order: 'countDesc' },
      ]);
      return { facets: (tags?.Values ?? []).map((v) => [v.Range, v.Count] as [string, number]) };
    };
    const pgFacets = (name: string, text: string) => async (): Promise<Answer> => {
      const { rows } = await client.query<{ tag: string; n: number }>({ name, text });
      return { facets: rows.map((r) => [r.tag, r.n] as [string, number]) };
    };
    const TOP = 'ORDER BY n DESC, tag LIMIT 20';
    const facetsPrecomputed: Shape<null> = {
      rookery: rookeryFacets,
      postgres: pgFacets('facets_view', `SELECT tag, n FROM tag_counts ${TOP}`),
    };
    const facetsAdhoc: Shape<null> = {
      rookery: rookeryFacets,
      postgres: pgFacets(
        'facets_adhoc',
        `SELECT tag, count(*)::integer AS n FROM packages, unnest(tags) AS tag GROUP BY tag ${TOP}`,
      ),
    };
    // Rookery answers a query without an order in index order: by term, then entry (`seq`).
    const startsWithPg = pageStatement(
      client,
      'starts_with',
      `SELECT (SELECT count(*) FROM packages WHERE package_id >= $1 AND package_id < $2) AS total,
         ARRAY(SELECT id FROM packages WHERE package_id >= $1 AND package_id < $2
               ORDER BY package_id, seq LIMIT 30) AS ids`,
    );
    const startsWith: Shape<string> = {
      rookery: (prefix) =>
        rookeryPage({
          where: { kind: 'startsWith', field: 'PackageId', value: prefix },
          orderBy: [],
          skip: 0,
          take: 30,
        }),
      // The server's collation is C (bytewise): every id starting with the prefix sorts below prefix + U+10FFFF.
      postgres: (prefix) => startsWithPg([prefix.toLowerCase(), `${prefix.toLowerCase()}\u{10FFFF}`]),
    };
    const equalityPg = pageStatement(
      client,
      'point_equality',
      `SELECT (SELECT count(*) FROM packages WHERE package_id = $1) AS total,
         ARRAY(SELECT id FROM packages WHERE package_id = $1 ORDER BY seq LIMIT 30) AS ids`,
    );
    const pointEquality: Shape<string> = {
      rookery: (id) =>
        rookeryPage({
          where: { kind: 'compare', field: 'PackageId', op: '=', value: id },
          orderBy: [],
          skip: 0,
          take: 30,
        }),
      postgres: (id) => equalityPg([id.toLowerCase()]),
    };

    for (const [what, sql] of [
      ['listing', `SELECT id FROM packages WHERE NOT is_prerelease ${LISTING} LIMIT 30`],
      ['search', `SELECT count(*) FROM packages WHERE NOT is_prerelease AND body @@ 'json'::tsquery`],
      [
        'starts_with',
        `SELECT id FROM packages WHERE package_id >= 'mic' AND package_id < 'mid' ORDER BY package_id, seq LIMIT 30`,
      ],
    ] as const) {
      log(`postgres plan, ${what}: ${await planOf(client, sql)}`);
    }

    const ids = loaded.packageIds;
    const cycle = <T>(items: readonly T[], count: number, offset = 0) =>
      Array.from({ length: count }, (_, i) => items[(i + offset) % items.length]!);
    const rng = new Random(SEED, 11);
    const used = new Set<string>();
    const single = drawTerms(loaded.vocabulary, QUERIES, used, rng).map((w) => [w]);
    const pairPool = drawTerms(loaded.vocabulary, QUERIES * 2, used, rng);
    const pairs = single.map((_, i) => [pairPool[2 * i]!, pairPool[2 * i + 1]!]);
    const mixed1 = zipfWords(loaded.vocabulary, ITERATIONS, rng).map((w) => [w]);
    const mixed2 = zipfPairs(loaded.vocabulary, ITERATIONS, rng);
    log(
      `cold: ${single.length} words, ${pairs.length} pairs; mixed: ${new Set(mixed1.flat()).size} distinct words in ${mixed1.length} searches (e.g. ${mixed1
        .slice(0, 8)
        .join(', ')})`,
    );

    const pages = Array.from({ length: ITERATIONS }, (_, i) => i % 3);
    const none = Array.from({ length: ITERATIONS }, () => null);
    // The listing filter is warm on both sides before the searches, so only the words are new.
    const figures: Record<string, Record<Side, Latency>> = {};
    figures.listing_page = await phase('listing_page', listing, pages, pages.slice(0, WARMUP));
    figures.search_1term_cold = await phase('search_1term_cold', search, single);
    figures.search_2terms_cold = await phase('search_2terms_cold', search, pairs);
    figures.search_1term_warm = await phase('search_1term_warm', search, single);
    figures.search_2terms_warm = await phase('search_2terms_warm', search, pairs);
    figures.search_1term_mixed = await phase('search_1term_mixed', search, mixed1);
    figures.search_2terms_mixed = await phase('search_2terms_mixed', search, mixed2);
    figures.facets_tags_precomputed = await phase(
      'facets_tags_precomputed',
      facetsPrecomputed,
      none,
      none.slice(0, WARMUP),
    );
    figures.facets_tags_adhoc = await phase(
      'facets_tags_adhoc',
      facetsAdhoc,
      none.slice(0, Math.min(ITERATIONS, 50)),
      none.slice(0, 3),
    );
    const prefixes = cycle(ids, ITERATIONS).map((id) => id.slice(0, 3));
    figures.startswith_prefix = await phase(
      'startswith_prefix',
      startsWith,
      prefixes,
      cycle(ids, WARMUP, ITERATIONS).map((id) => id.slice(0, 3)),
    );
    figures.point_equality = await phase(
      'point_equality',
      pointEquality,
      cycle(ids, ITERATIONS, 7),
      cycle(ids, WARMUP, ITERATIONS + 7),
    );
    // PostgreSQL's floor: a round trip over the socket that does nothing (sub-millisecond rows are bounded by it).
    const selectOne: number[] = [];
    for (let i = -WARMUP; i < ITERATIONS; i++) {
      const started = performance.now();
      await client.query({ name: 'one', text: 'SELECT 1' });
      if (i >= 0) selectOne.push(performance.now() - started);
    }
    const floor = summary('postgres SELECT 1', selectOne);
    reader.close();
    // What PostgreSQL did, warm, for the listing page and a two-word search (the log beside the figures).
    const explain = async (what: string, sql: string) =>
      log(`postgres plan, ${what}: ${await planOf(client, `(ANALYZE, COSTS OFF) ${sql}`)}`);
    await explain(
      'listing',
      `SELECT (SELECT count(*) FROM packages WHERE NOT is_prerelease) AS total,
         ARRAY(SELECT id FROM packages WHERE NOT is_prerelease ${LISTING} OFFSET 30 LIMIT 30) AS ids`,
    );
    for (const words of [single[0] ?? ['json'], pairs[0] ?? ['json', 'net']]) {
      const literal = `'${tsquery(words).replaceAll("'", "''")}'`;
      await explain(
        `search ${words.join(' ')}`,
        `SELECT (SELECT count(*) FROM packages WHERE NOT is_prerelease AND body @@ ${literal}::tsquery) AS total,
           ARRAY(SELECT id FROM packages WHERE NOT is_prerelease AND body @@ ${literal}::tsquery ${LISTING} LIMIT 30)`,
      );
    }
    const version = await client.query<{ server_version: string }>('SHOW server_version');

    const rows: Record<string, { rookery: number; postgres: number; ratio: number }> = {};
    for (const [name, f] of Object.entries(figures)) {
      for (const p of ['p50', 'p99'] as const) {
        rows[`${name}_${p}_ms`] = {
          rookery: f.rookery[p],
          postgres: f.postgres[p],
          ratio: round(f.postgres[p] / f.rookery[p]),
        };
      }
    }
    process.stdout.write(
      `${JSON.stringify({
        bench: 'vs-postgres-queries',
        docs: DOCS,
        iterations: ITERATIONS,
        cold_queries: QUERIES,
        mixed_distinct_words: new Set(mixed1.flat()).size,
        sampled_package_ids: ids.length,
        postgres_version: version.rows[0]?.server_version,
        postgres_select1_p50_ms: floor.p50,
        rows,
      })}\n`,
    );
  } finally {
    await client.end().catch(() => undefined);
    await server.stop();
    if (!KEEP_DIR) fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
