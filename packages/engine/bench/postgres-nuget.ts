// The generated NuGet-like package versions loaded on both sides of a PostgreSQL comparison, in one
// pass over the generator: Rookery's docs.db (the caller builds its index) and a PostgreSQL table with
// the columns and indexes an expert makes for the query shapes of bench:queries. Shared by
// bench:vs-postgres-queries and bench:vs-postgres-search; README.md in this folder gives each index
// and why. (bench:index-build --postgres loads jsonb documents instead: it times index builds over
// stored JSON, postgres-index-build.ts.)
import { generatePackages, type PackageDocument } from '@rookery/datagen';
import type pg from 'pg';
import { Database } from '../src/database.js';
import { countWords, queryWords, Reservoir, type Vocabulary } from './nuget-workload.js';
import { log } from './stats.js';

const CHUNK = 5_000;

/**
 * One row per version. `id` and `package_id` are as Rookery's term fields compare them (lowercased);
 * `seq` is the insertion order, which is the order of Rookery's index entries, so ties in an order
 * are broken the same way on both sides; `body` holds exactly the tokens FTS5 makes of Tags, Title
 * and PackageId (`array_to_tsvector`: no stemming or stop words, so both sides search the same words).
 */
const TABLE = `CREATE TABLE packages (
  id text PRIMARY KEY, seq integer NOT NULL, package_id text NOT NULL, is_prerelease boolean NOT NULL,
  download_count bigint NOT NULL, created text NOT NULL, tags text[] NOT NULL, body tsvector NOT NULL)`;

/** The indexes an expert builds for the benchmark's queries (README.md says why each). */
export const EXPERT_INDEXES = [
  'CREATE INDEX packages_body ON packages USING gin (body)',
  'CREATE INDEX packages_listing ON packages (download_count DESC, created, seq) WHERE NOT is_prerelease',
  'CREATE INDEX packages_package_id ON packages (package_id, seq)',
  `CREATE MATERIALIZED VIEW tag_counts AS
     SELECT tag, count(*)::integer AS n FROM packages, unnest(tags) AS tag GROUP BY tag`,
  'CREATE UNIQUE INDEX tag_counts_tag ON tag_counts (tag)',
  'CREATE INDEX tag_counts_top ON tag_counts (n DESC, tag)',
];

export interface Loaded {
  /** Word → versions holding it, over the `Query` field's words. */
  vocabulary: Vocabulary;
  /** PackageIds of versions sampled uniformly across the data (Reservoir). */
  packageIds: string[];
  documents: number;
}

/**
 * Generates `docs` versions (seed `seed`) into a new docs.db in `dir` and into `packages` through
 * `client`, then builds EXPERT_INDEXES and runs VACUUM ANALYZE (all-visible, fresh statistics, as
 * after a bulk load). maintenance_work_mem is raised for the index builds, as an expert would.
 */
export async function loadBothSides(
  dir: string,
  client: pg.Client,
  options: { docs: number; seed: number; sample?: number },
): Promise<Loaded> {
  const db = Database.create(dir, 'nuget');
  await client.query(TABLE);
  log(`inserting ${options.docs.toLocaleString('en')} package versions on both sides`);
  const vocabulary: Vocabulary = new Map();
  const sample = new Reservoir<string>(options.sample ?? 1_000, options.seed);
  let seq = 0;
  let chunk: PackageDocument[] = [];
  const flush = async () => {
    await db.insertMany(
      chunk.map(({ id, ...body }) => ({ Id: id, Document: body as unknown as Record<string, unknown> })),
    );
    const words = chunk.map((d) => {
      const own = queryWords(d);
      countWords(vocabulary, own);
      return JSON.stringify(own);
    });
    await client.query(
      `INSERT INTO packages SELECT u.id, u.seq, u.package_id, u.pre, u.dl, u.created,
         ARRAY(SELECT json_array_elements_text(u.tags::json)),
         array_to_tsvector(ARRAY(SELECT json_array_elements_text(u.words::json)))
       FROM unnest($1::text[], $2::int[], $3::text[], $4::boolean[], $5::bigint[], $6::text[], $7::text[], $8::text[])
         AS u(id, seq, package_id, pre, dl, created, tags, words)`,
      [
        chunk.map((d) => d.id.toLowerCase()),
        chunk.map(() => seq++),
        chunk.map((d) => d.PackageId.toLowerCase()),
        chunk.map((d) => d.IsPrerelease),
        chunk.map((d) => d.DownloadCount),
        chunk.map((d) => d.Created),
        chunk.map((d) => JSON.stringify(d.Tags.map((t) => t.toLowerCase()))),
        words,
      ],
    );
    chunk = [];
  };
  for (const doc of generatePackages({ seed: options.seed, packageVersions: options.docs })) {
    sample.offer(doc.PackageId);
    chunk.push(doc);
    if (chunk.length === CHUNK) await flush();
  }
  if (chunk.length > 0) await flush();
  await db.close();
  const started = performance.now();
  await client.query("SET maintenance_work_mem = '256MB'");
  for (const sql of EXPERT_INDEXES) await client.query(sql);
  await client.query('VACUUM ANALYZE packages');
  await client.query('ANALYZE tag_counts');
  log(`postgres indexes built in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return { vocabulary, packageIds: sample.items, documents: seq };
}

/** The plan PostgreSQL chose for `sql` (one line), to log beside the figures. */
export async function planOf(client: pg.Client, sql: string): Promise<string> {
  const plan = await client.query(`EXPLAIN ${sql}`);
  return plan.rows.map((r: Record<string, string>) => Object.values(r)[0]?.trim()).join(' | ');
}
