// pnpm bench:vs-postgres-search [--docs N] [--seed S] [--queries N] — full-text searches side by side
// with PostgreSQL 15 in one run, on the same generated NuGet-like package versions (default 200,000):
//
// - Rookery: the benchmarks' map index `Packages/ByFields` (bench/nuget-indexes.ts; Query = Tags +
//   Title + PackageId, full text), built by the indexer; IndexReader.run in process (the code the HTTP
//   API runs).
// - PostgreSQL: a private server (@rookery/testkit), loaded by postgres-nuget.ts (shared with
//   bench:vs-postgres-queries): one row per version with its id, IsPrerelease, DownloadCount, Created
//   and the Query words as a tsvector made from exactly the tokens FTS5 makes (letters and digits,
//   lowercased: `array_to_tsvector`, so both sides search the same words), a GIN index on the
//   tsvector and a partial btree on (DownloadCount DESC, Created, seq) WHERE NOT IsPrerelease — what
//   an expert builds for "these words, not prerelease, most downloaded first, with the total" (README.md
//   here) — after VACUUM ANALYZE; two prepared statements over the Unix socket, the total and the page:
//   `SELECT count(*) FROM packages WHERE NOT is_prerelease AND body @@ $1` and `SELECT id FROM packages
//   WHERE NOT is_prerelease AND body @@ $1 ORDER BY download_count DESC, created, seq LIMIT 30` (`seq`,
//   the insertion order, breaks ties as Rookery's entry order does).
// - Rookery as it read searches before the full-text postings (`rookery_fts5_*`: the same file, a
//   reader with `postings: false`, every search through FTS5): before and after in one run.
//
// The query shape is the NuGet listing page of bench:queries: `not prerelease and search(Query, …)`,
// ordered by DownloadCount descending then Created, 30 per page, with the total.
//
// Cold = the first query of a term in the run on both sides: every measured query uses words never
// queried before in the run (the 1-term and 2-term phases draw from disjoint halves of the vocabulary),
// drawn without repetition weighted by document count (as users search), so neither Rookery's match
// bitmaps nor PostgreSQL's shared buffers hold that term's postings from an earlier query, and the OS
// page cache holds only what the build left. The page caches are NOT dropped (a benchmark shares this
// machine; `echo 3 > /proc/sys/vm/drop_caches` would disturb it): both files are freshly written, so
// both sides start from the same warm OS cache. Warm = the same queries again right after.
//
// Every query is checked to give the same total and the same page on both sides (the run stops
// otherwise). Stages go to stderr; the last stdout line is one JSON object.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { Random } from '@rookery/datagen';
import { startPostgres } from '@rookery/testkit';
import pg from 'pg';
import { IndexReader } from '../src/query/index-reader.js';
import type { IndexQuery, Predicate } from '../src/query/plan.js';
import { arg } from './args.js';
import { buildByFields } from './nuget-indexes.js';
import { drawTerms, type Vocabulary } from './nuget-workload.js';
import { loadBothSides, planOf } from './postgres-nuget.js';
import { log, round, summary } from './stats.js';

const DOCS = arg('docs', 200_000);
const SEED = arg('seed', 1);
const QUERIES = arg('queries', 100);

/** Both sides loaded (postgres-nuget.ts), then Rookery's index built; returns the `Query` vocabulary and the index's file. */
async function build(dir: string, client: pg.Client): Promise<{ vocabulary: Vocabulary; file: string }> {
  const { vocabulary } = await loadBothSides(dir, client, { docs: DOCS, seed: SEED });
  return { vocabulary, file: buildByFields(dir) };
}

async function main(): Promise<void> {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'rookery-bench-search-'));
  const server = await startPostgres();
  const client = new pg.Client({ host: server.socketDir, port: server.port, user: 'postgres' });
  try {
    await client.connect();
    const { vocabulary, file } = await build(dir, client);
    const reader = new IndexReader(file);
    const notPrerelease: Predicate = { kind: 'compare', field: 'IsPrerelease', op: '=', value: false };
    const listing = (words: string[]): IndexQuery => ({
      where: {
        kind: 'and',
        children: [
          notPrerelease,
          { kind: 'search', field: 'Query', terms: words.join(' '), operator: 'and' },
        ],
      },
      orderBy: [
        { kind: 'field', field: 'DownloadCount', descending: true },
        { kind: 'field', field: 'Created', descending: false },
      ],
      skip: 0,
      take: 30,
    });
    // What an expert writes for a page with its total: the count (GIN bitmap scan) and the page (the
    // planner's choice: the listing btree filtered for common words, GIN + sort for rare ones), two
    // prepared statements in one round trip each. (`count(*) OVER ()` in the page query would make
    // PostgreSQL read every match in listing order: slower, so not used.)
    const countStatement = {
      name: 'count',
      text: 'SELECT count(*) AS total FROM packages WHERE NOT is_prerelease AND body @@ $1::tsquery',
    };
    const pageStatement = {
      name: 'page',
      text: `SELECT id FROM packages WHERE NOT is_prerelease AND body @@ $1::tsquery
             ORDER BY download_count DESC, created, seq LIMIT 30`,
    };
    for (const statement of [countStatement, pageStatement]) {
      log(`postgres plan: ${await planOf(client, statement.text.replace('$1::tsquery', "'json'::tsquery"))}`);
    }
    // Before this change's read path: every search through FTS5 (IndexReaderOptions.postings false).
    const fts5Reader = new IndexReader(file, { postings: false });
    // The listing filter itself is warm on every side: only the words are new.
    for (const r of [reader, fts5Reader]) r.run({ ...listing([]), where: notPrerelease });
    await client.query('SELECT count(*) FROM packages WHERE NOT is_prerelease');

    const rng = new Random(SEED + 11);
    const used = new Set<string>();
    const single = drawTerms(vocabulary, QUERIES, used, rng).map((w) => [w]);
    const pairPool = drawTerms(vocabulary, QUERIES * 2, used, rng);
    const pairs = single.map((_, i) => [pairPool[2 * i]!, pairPool[2 * i + 1]!]);
    log(`${single.length} single words (e.g. ${single.slice(0, 5).join(', ')}), ${pairs.length} pairs`);

    type Side = 'rookery' | 'rookery_fts5' | 'postgres';
    const SIDES: Side[] = ['rookery', 'rookery_fts5', 'postgres'];
    const ask = async (side: Side, words: string[]): Promise<{ total: number; ids: string[] }> => {
      if (side === 'postgres') {
        const tsquery = words.map((w) => `'${w}'`).join(' & ');
        const count = await client.query<{ total: string }>({ ...countStatement, values: [tsquery] });
        const page = await client.query<{ id: string }>({ ...pageStatement, values: [tsquery] });
        return { total: Number(count.rows[0]?.total ?? 0), ids: page.rows.map((r) => r.id) };
      }
      const result = (side === 'rookery' ? reader : fts5Reader).run(listing(words));
      return { total: result.total, ids: result.entries.map((e) => (e.docId ?? '').toLowerCase()) };
    };
    const run = async (queries: string[][], label: string) => {
      const times = new Map<Side, number[]>(SIDES.map((side) => [side, []]));
      let matches = 0;
      for (const [q, words] of queries.entries()) {
        // Rotate who goes first, so no side always finds another's reads in the OS cache.
        const order = SIDES.map((_, k) => SIDES[(q + k) % SIDES.length]!);
        const answers = new Map<Side, string>();
        for (const side of order) {
          const started = performance.now();
          const answer = await ask(side, words);
          times.get(side)!.push(performance.now() - started);
          answers.set(side, JSON.stringify(answer));
          if (side === 'rookery') matches += answer.total;
        }
        if (new Set(answers.values()).size !== 1) {
          throw new Error(`${label} ${words.join(' ')}: the answers differ: ${JSON.stringify([...answers])}`);
        }
      }
      log(`${label}: ${Math.round(matches / queries.length)} matches on average`);
      return Object.fromEntries(
        SIDES.map((side) => [side, summary(`${label} ${side}`, times.get(side)!)]),
      ) as Record<Side, { p50: number; p99: number }>;
    };
    const cold1 = await run(single, '1 term cold');
    const cold2 = await run(pairs, '2 terms cold');
    const warm1 = await run(single, '1 term warm');
    const warm2 = await run(pairs, '2 terms warm');
    reader.close();
    fts5Reader.close();
    const line: Record<string, number | string> = {
      bench: 'vs-postgres-search',
      docs: DOCS,
      queries: QUERIES,
    };
    for (const [name, figures] of Object.entries({ cold1, cold2, warm1, warm2 })) {
      const key = name.replace(/(\d)$/, (_, n) => `_${n}term${n === '1' ? '' : 's'}`);
      for (const side of SIDES) {
        line[`${side}_${key}_p50_ms`] = figures[side].p50;
        line[`${side}_${key}_p99_ms`] = figures[side].p99;
      }
      line[`ratio_${key}_p50`] = round(figures.postgres.p50 / figures.rookery.p50);
      line[`ratio_${key}_p99`] = round(figures.postgres.p99 / figures.rookery.p99);
    }
    process.stdout.write(`${JSON.stringify(line)}\n`);
  } finally {
    await client.end().catch(() => undefined);
    await server.stop();
    fs.rmSync(dir, { recursive: true, force: true });
  }
}

await main();
