// The PostgreSQL side of `pnpm bench:index-build --postgres true`: the same documents (read from the
// docs.db the Rookery side indexes) loaded as jsonb into a private PostgreSQL 15 (@rookery/testkit),
// and the indexes an expert would build for the same two Rookery indexes, timed as a build from
// scratch over existing rows:
//
// - map (`Packages/ByFields`, six fields): one expression btree per exact field (PackageId,
//   IsPrerelease, DownloadCount, Created), a GIN (jsonb_ops: `@>` containment) on the Tags array,
//   and a GIN on the full-text `Query` (Tags, Title, PackageId: `to_tsvector('simple', …)`, the
//   tokens FTS5's unicode61 makes on this data), each by CREATE INDEX over the loaded table;
// - map/reduce (`Packages/Search`): a materialized view grouped by (PackageId, IsPrerelease) with
//   the sum of VersionDownloadCount, the min of Created, the distinct tags and the words of the
//   group as a tsvector, and its indexes: unique (package_id, is_prerelease), DownloadCount,
//   Created, GIN on tags, GIN on the words. Rookery's map/reduce stays incremental after its
//   build; this view must be refreshed whole.
//
// maintenance_work_mem is 256 MB (PostgreSQL's default is 64 MB): what the Rookery side's writer
// cache is, and what an expert sets before building indexes. Loading is not timed; VACUUM ANALYZE
// runs before the timing, so the table is all-visible, as after a bulk load's vacuum.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { type PostgresServer, startPostgres } from '@rookery/testkit';
import pg from 'pg';
import { Database } from '../src/database.js';

const LOAD_CHUNK = 5_000;

const MAP_INDEXES = [
  "CREATE INDEX map_package_id ON packages ((body->>'PackageId'))",
  "CREATE INDEX map_is_prerelease ON packages (((body->>'IsPrerelease')::boolean))",
  "CREATE INDEX map_download_count ON packages (((body->>'DownloadCount')::bigint))",
  "CREATE INDEX map_created ON packages ((body->>'Created'))",
  "CREATE INDEX map_tags ON packages USING gin ((body->'Tags'))",
  `CREATE INDEX map_query ON packages USING gin (
     to_tsvector('simple', (body->'Tags') || (body->'Title') || (body->'PackageId')))`,
];
const MAP_DROP =
  'DROP INDEX IF EXISTS map_package_id, map_is_prerelease, map_download_count, map_created, map_tags, map_query';

const MAPREDUCE_BUILD = [
  `CREATE MATERIALIZED VIEW packages_search AS
   SELECT package_id, is_prerelease, download_count, created,
     ARRAY(SELECT DISTINCT t FROM jsonb_array_elements(tag_lists) l, jsonb_array_elements_text(l) t) AS tags,
     to_tsvector('simple', words) AS query
   FROM (
     SELECT body->>'PackageId' AS package_id, (body->>'IsPrerelease')::boolean AS is_prerelease,
       sum((body->>'VersionDownloadCount')::bigint) AS download_count, min(body->>'Created') AS created,
       jsonb_agg(body->'Tags') AS tag_lists,
       jsonb_agg((body->'Tags') || (body->'Title') || (body->'PackageId')) AS words
     FROM packages GROUP BY 1, 2
   ) g`,
  'CREATE UNIQUE INDEX search_key ON packages_search (package_id, is_prerelease)',
  'CREATE INDEX search_download_count ON packages_search (download_count)',
  'CREATE INDEX search_created ON packages_search (created)',
  'CREATE INDEX search_tags ON packages_search USING gin (tags)',
  'CREATE INDEX search_query ON packages_search USING gin (query)',
];
const MAPREDUCE_DROP = 'DROP MATERIALIZED VIEW IF EXISTS packages_search';

export interface PostgresIndexBuild {
  /** Builds the index from scratch (dropping an earlier build) and returns docs/s over the loaded documents. */
  build(index: 'map' | 'mapreduce'): Promise<number>;
  stop(): Promise<void>;
}

/** Starts a private PostgreSQL and loads every document of `docsDir`/docs.db (read from a copy). */
export async function startPostgresIndexBuild(
  docsDir: string,
  log: (message: string) => void,
): Promise<PostgresIndexBuild> {
  const server: PostgresServer = await startPostgres();
  const client = new pg.Client({ host: server.socketDir, port: server.port, user: 'postgres' });
  try {
    await client.connect();
    await client.query("SET maintenance_work_mem = '256MB'");
    await client.query('CREATE TABLE packages (id text PRIMARY KEY, body jsonb NOT NULL)');
    const documents = await load(docsDir, client);
    await client.query('VACUUM ANALYZE packages');
    log(`postgres: ${documents.toLocaleString('en')} documents loaded`);
    return {
      async build(index) {
        await client.query(index === 'map' ? MAP_DROP : MAPREDUCE_DROP);
        await client.query('CHECKPOINT'); // the drop's and load's writes are not charged to the build
        const started = performance.now();
        for (const sql of index === 'map' ? MAP_INDEXES : MAPREDUCE_BUILD) await client.query(sql);
        return Math.round(documents / ((performance.now() - started) / 1000));
      },
      async stop() {
        await client.end();
        await server.stop();
      },
    };
  } catch (error) {
    await client.end().catch(() => undefined);
    await server.stop();
    throw error;
  }
}

/** Copies the documents of docs.db into `packages`, in etag order; returns how many. */
async function load(docsDir: string, client: pg.Client): Promise<number> {
  const copy = fs.mkdtempSync(path.join(os.tmpdir(), 'rookery-index-build-pg-'));
  try {
    for (const file of ['docs.db', 'docs.db-wal']) {
      const from = path.join(docsDir, file);
      if (fs.existsSync(from)) fs.copyFileSync(from, path.join(copy, file));
    }
    const db = Database.open(copy);
    let loaded = 0;
    try {
      for (let etag = 0; ; ) {
        const changes = db.changesAfter(etag, LOAD_CHUNK);
        if (changes.length === 0) break;
        etag = changes.at(-1)!.etag;
        const ids: string[] = [];
        const bodies: string[] = [];
        for (const change of changes) {
          if (change.deleted) continue;
          const doc = db.get(change.id);
          if (!doc) continue;
          ids.push(change.id.toLowerCase());
          bodies.push(doc.json);
        }
        await client.query('INSERT INTO packages SELECT * FROM unnest($1::text[], $2::jsonb[])', [
          ids,
          bodies,
        ]);
        loaded += ids.length;
      }
    } finally {
      await db.close();
    }
    return loaded;
  } finally {
    fs.rmSync(copy, { recursive: true, force: true });
  }
}
