import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import type { IndexDefinition } from '@rookery/protocol';
import { makeTempDir, spawnTs, waitForExit } from '@rookery/testkit';
import BetterSqlite3 from 'better-sqlite3';
import fc from 'fast-check';
import { afterEach, describe, expect, it } from 'vitest';
import { Database } from '../database.js';
import { dumpIndexFile } from '../test-fixtures/index-dump.js';
import { BULK_BUILD_META_KEY, TERMS_STAGING_TABLE } from './bulk-build.js';
import { DatabaseIndexer } from './database-indexer.js';
import { INDEXES_DIRECTORY, indexFileName } from './index-file.js';

type Cleanups = (() => Promise<void> | void)[];

/** Runs the cleanups, last first (indexers close before their database, directories go last). */
async function clean(cleanups: Cleanups): Promise<void> {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
}

const cleanups: Cleanups = [];
afterEach(() => clean(cleanups));

/** A map index with exact, numeric, array and full-text fields, suggestions on two of them. */
const MAP_INDEX: IndexDefinition = {
  Name: 'Items/ByFields',
  Maps: [{ Collection: 'Items', Fields: { Name: 'Name', N: 'N', Tags: 'Tags', Text: ['Text', 'Name'] } }],
  Fields: { Text: { Indexing: 'Search', Suggestions: true }, Tags: { Suggestions: true } },
};

/** The NuGet index's shape in small: grouped, summed, distinct values, a full-text result field. */
const REDUCE_INDEX: IndexDefinition = {
  Name: 'Items/ByGroup',
  Maps: [{ Collection: 'Items', Fields: { Group: 'Group', N: 'N', Tags: 'Tags', Text: ['Text', 'Name'] } }],
  Reduce: {
    GroupBy: ['Group'],
    Aggregate: { N: { Sum: 'N' }, Tags: { Distinct: 'Tags' }, Text: { Distinct: 'Text' } },
  },
  Fields: { Text: { Indexing: 'Search', Suggestions: true } },
};

/** The same, grouped by name: many groups, so its reduce phase takes many chunks (the crash test). */
const REDUCE_BY_NAME_INDEX: IndexDefinition = {
  Name: 'Items/ByName',
  Maps: [{ Collection: 'Items', Fields: { Name: 'Name', N: 'N', Tags: 'Tags', Text: ['Text', 'Name'] } }],
  Reduce: {
    GroupBy: ['Name'],
    Aggregate: { N: { Sum: 'N' }, Tags: { Distinct: 'Tags' }, Text: { Distinct: 'Text' } },
  },
  Fields: { Text: { Indexing: 'Search', Suggestions: true } },
};

interface Item {
  Name: string;
  Group: string;
  N: number | null;
  Tags: string[];
  Text: string;
}

const word = fc.stringMatching(/^[a-eA][a-e]{0,6}$/);
const item = fc.record({
  Name: word,
  // Up to ten groups: with batches of 2–9 documents (and as many groups a chunk), a reduce phase of several chunks.
  Group: fc.constantFrom('g0', 'g1', 'g2', 'g3', 'g4', 'g5', 'g6', 'g7', 'g8', 'g9'),
  N: fc.option(fc.integer({ min: -5, max: 50 }), { nil: null }),
  Tags: fc.array(word, { maxLength: 4 }),
  Text: fc.array(word, { maxLength: 5 }).map((words) => words.join(' ')),
});
/** A change after the first documents: a write of an id (new or existing), or a delete. */
const change = fc.record({ id: fc.nat(40), doc: fc.option(item, { nil: null }) });

const put = (id: number, doc: Item) => ({
  Type: 'PUT' as const,
  Id: `items/${id}`,
  Document: { ...doc, '@metadata': { '@collection': 'Items' } },
});

async function openDatabase(owner: Cleanups): Promise<{ dir: string; db: Database }> {
  const tmp = makeTempDir();
  const db = Database.create(tmp.dir, 'items');
  owner.push(() => tmp.cleanup());
  owner.push(() => db.close());
  return { dir: tmp.dir, db };
}

async function applyChange(db: Database, ids: Set<number>, c: { id: number; doc: Item | null }) {
  if (c.doc) {
    await db.batch([put(c.id, c.doc)]);
    ids.add(c.id);
  } else if (ids.has(c.id)) {
    await db.batch([{ Type: 'DELETE', Id: `items/${c.id}` }]);
    ids.delete(c.id);
  }
}

const fileOf = (dir: string, definition: IndexDefinition) =>
  path.join(dir, INDEXES_DIRECTORY, indexFileName(definition.Name));

const bulkStateOf = (file: string) => {
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    return db.prepare('SELECT value FROM meta WHERE key = ?').get(BULK_BUILD_META_KEY) !== undefined;
  } finally {
    db.close();
  }
};

/** Where a bulk build is: a map/reduce build's map or reduce phase, or a map build's entries ('entries'); null: none. */
const bulkPhaseOf = (file: string) => {
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    const row = db.prepare('SELECT value FROM meta WHERE key = ?').get(BULK_BUILD_META_KEY) as
      | { value: string }
      | undefined;
    if (!row) return null;
    const state = JSON.parse(row.value) as { reduceLater?: boolean; mappedTo?: number };
    if (state.reduceLater !== true) return 'entries';
    return state.mappedTo === undefined ? 'map' : 'reduce';
  } finally {
    db.close();
  }
};

/** Where a bulk build's rows are while it lasts: term rows staged, not in terms yet; map results; entries. */
const bulkRowsOf = (file: string) => {
  const db = new BetterSqlite3(file, { readonly: true });
  try {
    const has = (name: string) =>
      db.prepare('SELECT 1 FROM sqlite_schema WHERE name = ?').get(name) !== undefined;
    const count = (table: string) =>
      has(table) ? (db.prepare(`SELECT count(*) AS n FROM ${table}`).get() as { n: number }).n : null;
    return {
      staged: count(TERMS_STAGING_TABLE),
      terms: count('terms'),
      entries: count('entries'),
      mapResults: count('map_results'),
      /** The map results' key index, which a map/reduce build's map phase leaves for its end. */
      byKey: has('map_results_by_key'),
    };
  } finally {
    db.close();
  }
};

/** What a killed or unfinished bulk build's file must hold in each phase. */
const expectPhaseRows = (file: string, phase: 'entries' | 'map' | 'reduce') => {
  const rows = bulkRowsOf(file);
  expect(bulkPhaseOf(file)).toBe(phase);
  expect(rows.terms).toBe(0);
  if (phase === 'map') {
    // Map results only: no group reduced, nothing staged, and the key index not made yet.
    expect(rows).toMatchObject({ entries: 0, staged: 0, byKey: false });
    expect(rows.mapResults).toBeGreaterThan(0);
  } else {
    expect(rows.entries).toBeGreaterThan(0);
    expect(rows.staged).toBeGreaterThan(0);
    if (phase === 'reduce') expect(rows.byKey).toBe(true);
  }
};

describe('the first build of an index (bulk build)', () => {
  it.each([
    ['map', MAP_INDEX],
    ['map/reduce', REDUCE_INDEX],
  ])(
    '%s: the file equals the one built incrementally, with documents changed during the build (property)',
    async (_, definition) => {
      await fc.assert(
        fc.asyncProperty(
          fc.array(item, { minLength: 1, maxLength: 30 }),
          fc.array(change, { maxLength: 12 }),
          fc.integer({ min: 2, max: 9 }),
          async (initial, changes, batchSize) => {
            // Each run owns what it opens and closes it, whether it passes or not.
            const cleanups: Cleanups = [];
            try {
              // Built from existing documents, in batches: bulk, with the changes arriving mid-build.
              const bulk = await openDatabase(cleanups);
              const bulkIds = new Set<number>();
              await bulk.db.batch(initial.map((doc, i) => put(i, doc)));
              for (const i of initial.keys()) bulkIds.add(i);
              const bulkIndexer = new DatabaseIndexer(bulk.dir, { batchSize });
              cleanups.push(() => bulkIndexer.close());
              bulkIndexer.put(definition);
              bulkIndexer.runOnce();
              // A first batch that did not reach the end leaves the file in its bulk build: a map build's
              // term rows staged (unindexed), no rows in terms yet; a map/reduce build's map results alone.
              const file = fileOf(bulk.dir, definition);
              expect(bulkStateOf(file)).toBe(initial.length > batchSize);
              if (initial.length > batchSize) expectPhaseRows(file, definition.Reduce ? 'map' : 'entries');
              // Half the changes arrive during the map phase, half during the reduce phase (if any).
              const half = Math.ceil(changes.length / 2);
              for (const c of changes.slice(0, half)) await applyChange(bulk.db, bulkIds, c);
              while (bulkPhaseOf(file) === 'map') bulkIndexer.runOnce();
              if (bulkPhaseOf(file) === 'reduce') {
                // Until its last chunk the index is stale, and answers nothing (the meta key: index-reader.ts).
                expect(bulkIndexer.stats(definition.Name)?.IsStale).toBe(true);
                bulkIndexer.runOnce();
              }
              for (const c of changes.slice(half)) await applyChange(bulk.db, bulkIds, c);
              bulkIndexer.runUntilIdle();

              // Built incrementally: the index first, then every document and change indexed as it comes.
              const incremental = await openDatabase(cleanups);
              const ids = new Set<number>();
              const indexer = new DatabaseIndexer(incremental.dir, { batchSize });
              cleanups.push(() => indexer.close());
              indexer.put(definition);
              for (const [i, doc] of initial.entries()) {
                await applyChange(incremental.db, ids, { id: i, doc });
                indexer.runUntilIdle();
              }
              for (const c of changes) {
                await applyChange(incremental.db, ids, c);
                indexer.runUntilIdle();
              }

              const built = dumpIndexFile(fileOf(bulk.dir, definition));
              expect(built).toEqual(dumpIndexFile(fileOf(incremental.dir, definition)));
              expect(built.schema.map((o) => o.name)).toContain('terms_by_entry');
              expect(built.meta.map((m) => m.key)).not.toContain(BULK_BUILD_META_KEY);
              expect(built.schema.map((o) => o.name)).not.toContain(TERMS_STAGING_TABLE);
            } finally {
              await clean(cleanups);
            }
          },
        ),
        // Ten runs; the whole check, shrinking included, stops at 150 s (counted as a failure), inside the test's time.
        { numRuns: 10, interruptAfterTimeLimit: 150_000, markInterruptAsFailure: true },
      );
    },
    180_000,
  ); // two databases and builds per run: half a minute for ten runs on a loaded machine

  it('map/reduce: a group whose reduce fails in the reduce phase is an error naming it, and the build goes on to its end', async () => {
    const { dir, db } = await openDatabase(cleanups);
    const teams = ['red', 'bad', 'blue', 'red', 'bad', 'green'];
    await db.batch(
      teams.map((Team, i) => ({
        Type: 'PUT' as const,
        Id: `users/${i}`,
        Document: { Team, '@metadata': { '@collection': 'Users' } },
      })),
    );
    // Batches of two: three of documents, then chunks of (at most) two groups.
    const indexer = new DatabaseIndexer(dir, { batchSize: 2 });
    cleanups.push(() => indexer.close());
    const definition: IndexDefinition = {
      Name: 'Users/Teams',
      Maps: ["map('Users', u => ({ Team: u.Team, Count: 1 }))"],
      Reduce:
        'groupBy(x => x.Team).aggregate(g => { if (g.key === "bad") throw new Error("cannot add"); ' +
        'return { Team: g.key, Count: g.values.length }; })',
    };
    indexer.put(definition);
    indexer.runOnce();
    expect(bulkPhaseOf(fileOf(dir, definition))).toBe('map');
    indexer.runUntilIdle();
    const stats = indexer.stats(definition.Name)!;
    expect(bulkStateOf(fileOf(dir, definition))).toBe(false);
    expect(stats).toMatchObject({ IsStale: false, EntriesCount: 3, LastIndexedEtag: db.lastEtag });
    expect(stats.Errors).toHaveLength(1);
    expect(stats.Errors[0]?.Error).toMatch(/group "bad".*cannot add/);
  });

  it.each([
    ['map', MAP_INDEX, 'entries'],
    ['map/reduce, in its map phase', REDUCE_BY_NAME_INDEX, 'map'],
    ['map/reduce, in its reduce phase', REDUCE_BY_NAME_INDEX, 'reduce'],
  ] as const)(
    '%s: a build killed midway leaves a file that says so, and the next indexer finishes it to the same file',
    async (_, definition, phase) => {
      const BUILDER = path.join(
        path.dirname(fileURLToPath(import.meta.url)),
        '..',
        'test-fixtures',
        'index-builder.ts',
      );
      const tmp = makeTempDir();
      cleanups.push(() => tmp.cleanup());
      const dir = tmp.dir;
      const db = Database.create(dir, 'items');
      const random = fc.sample(item, { numRuns: 200, seed: 7 });
      await db.batch(random.map((doc, i) => put(i, doc)));
      await db.close(); // the builder and the indexers after it read docs.db on their own
      // Six batches are indexed (in the reduce phase: six of its chunks of 10 groups, of ~190), then the
      // child is told to go on and killed at once: it dies during the seventh or just after it, in either
      // case long before the build's end (20 batches of documents, then the chunks).
      const file = fileOf(dir, definition);
      const child = spawnTs(BUILDER, [dir, JSON.stringify(definition), '10']);
      const exited = waitForExit(child);
      let batches = 0;
      await new Promise<void>((resolve, reject) => {
        child.on('message', (message: { ready: true } | { lastEtag: number | null }) => {
          if ('lastEtag' in message && message.lastEtag === null) {
            child.kill('SIGKILL');
            reject(new Error(`the build ended before its ${phase} phase had taken six steps`));
            return;
          }
          if ('lastEtag' in message && bulkPhaseOf(file) === phase) batches += 1;
          if (batches < 6) child.send('next');
          else {
            child.send('next');
            child.kill('SIGKILL');
            resolve();
          }
        });
        void exited.then(({ signal }) => {
          if (signal !== 'SIGKILL') reject(new Error(`the builder exited on its own (signal ${signal})`));
        });
      });
      expect((await exited).signal).toBe('SIGKILL');
      // What the killed build committed is where its phase keeps it: the restarted build goes on from there.
      expectPhaseRows(file, phase);

      // The same documents built without a break, in a copy of the database.
      const whole = makeTempDir();
      cleanups.push(() => whole.cleanup());
      for (const name of fs.readdirSync(dir).filter((f) => f.startsWith('docs.db')))
        fs.copyFileSync(path.join(dir, name), path.join(whole.dir, name));
      const uninterrupted = new DatabaseIndexer(whole.dir, { batchSize: 10 });
      uninterrupted.put(definition);
      uninterrupted.runUntilIdle();
      const entries = uninterrupted.stats(definition.Name)?.EntriesCount;
      uninterrupted.close();

      const restarted = new DatabaseIndexer(dir, { batchSize: 10 });
      cleanups.push(() => restarted.close());
      restarted.runUntilIdle();
      expect(bulkStateOf(file)).toBe(false);
      const stats = restarted.stats(definition.Name);
      expect(stats?.IsStale).toBe(false);
      expect(stats?.EntriesCount).toBe(definition.Reduce ? entries : random.length);
      expect(dumpIndexFile(file)).toEqual(dumpIndexFile(fileOf(whole.dir, definition)));
    },
    180_000,
  ); // a child process starts (tsx) and three builds run: minutes on a loaded machine
});
