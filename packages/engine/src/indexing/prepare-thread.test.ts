import path from 'node:path';
import type { IndexDefinition } from '@rookery/protocol';
import { makeTempDir } from '@rookery/testkit';
import BetterSqlite3 from 'better-sqlite3';
import fc from 'fast-check';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Database } from '../database.js';
import { DatabaseIndexer } from './database-indexer.js';
import { INDEXES_DIRECTORY, indexFileName } from './index-file.js';
import { PrepareThread } from './prepare-thread.js';

const thread = new PrepareThread();
let tmp: ReturnType<typeof makeTempDir>;
let db: Database;

beforeEach(() => {
  tmp = makeTempDir();
  db = Database.create(tmp.dir, 'things');
});
afterEach(async () => {
  await db.close();
  tmp.cleanup();
});
afterAll(() => thread.close());

const doc = (collection: string, body: Record<string, unknown>) => ({
  ...body,
  '@metadata': { '@collection': collection },
});

const byFields: IndexDefinition = {
  Name: 'Things/ByFields',
  Maps: [
    {
      Collection: 'Things',
      Fields: {
        Name: 'Name',
        Size: 'Size',
        Tags: 'Tags',
        Missing: 'Nowhere',
        Where: { Lat: 'Lat', Lng: 'Lng' },
        Text: ['Name', 'Tags'],
      },
    },
  ],
  Fields: { Text: { Indexing: 'Search' }, Name: { Indexing: 'Exact' } },
};
// A max, not a sum: a floating-point sum would depend on the order a group's values come in.
const byTag: IndexDefinition = {
  Name: 'Things/ByTag',
  Maps: [`map('Things', t => (t.Tags || []).map(tag => ({ Tag: tag, Size: t.Size, Count: 1 })))`],
  Reduce: `groupBy(x => x.Tag).aggregate(g => ({ Tag: g.key, Size: g.values.reduce((m, x) => Math.max(m, x.Size), -1e9), Count: g.values.length }))`,
};

/** Everything an index file holds, keyed by document rather than by entry id. */
function dump(name: string): unknown {
  const file = new BetterSqlite3(path.join(tmp.dir, INDEXES_DIRECTORY, indexFileName(name)), {
    readonly: true,
  });
  try {
    const all = (sql: string) => file.prepare(sql).raw().all();
    return {
      entries: all('SELECT source, doc_id, stored FROM entries ORDER BY source, stored'),
      terms: all(`SELECT f.name, t.value, e.source FROM terms t JOIN fields f ON f.id = t.field
                  JOIN entries e ON e.id = t.entry ORDER BY 1, 2, 3, e.stored`),
      counts: all(
        'SELECT f.name, c.value, c.count FROM term_counts c JOIN fields f ON f.id = c.field ORDER BY 1, 2',
      ),
      spatial: all(
        'SELECT e.source, s.lat, s.lng FROM spatial s JOIN entries e ON e.id = s.entry ORDER BY 1',
      ),
      fts: file.prepare("SELECT name FROM sqlite_schema WHERE name = 'fts'").get()
        ? all('SELECT term, col, doc, cnt FROM fts_vocab ORDER BY 1, 2')
        : null,
      meta: all("SELECT key, value FROM meta WHERE key IN ('entries', 'last_etag') ORDER BY key"),
    };
  } finally {
    file.close();
  }
}

async function stepUntilIdle(indexer: DatabaseIndexer): Promise<void> {
  for (;;) {
    const progress = await indexer.step();
    if (progress.length === 0) return;
    if (progress.every((p) => p.documents === 0 && p.errors > 0)) throw new Error('indexing failed');
  }
}

describe('indexing on the prepare thread', () => {
  it('leaves every index exactly as preparing on the indexing thread does (property)', async () => {
    const operation = fc.oneof(
      fc.record({
        kind: fc.constant('put' as const),
        id: fc.integer({ min: 0, max: 40 }),
        name: fc.constantFrom('Ann', 'bo', 'Cy', 'ann'),
        size: fc.oneof(fc.integer({ min: -3, max: 3 }), fc.double({ noNaN: true, noDefaultInfinity: true })),
        tags: fc.array(fc.constantFrom('red', 'Blue', 'red', 'gold'), { maxLength: 20 }),
        lat: fc.option(fc.double({ min: -90, max: 90, noNaN: true }), { nil: undefined }),
      }),
      fc.record({ kind: fc.constant('delete' as const), id: fc.integer({ min: 0, max: 40 }) }),
    );
    const threaded = new DatabaseIndexer(tmp.dir, { batchSize: 7, prepareThread: thread });
    threaded.put(byFields);
    threaded.put(byTag);
    await fc.assert(
      fc.asyncProperty(fc.array(fc.array(operation, { maxLength: 20 }), { maxLength: 4 }), async (rounds) => {
        for (const ops of rounds) {
          for (const op of ops) {
            if (op.kind === 'delete') await db.batch([{ Type: 'DELETE', Id: `things/${op.id}` }]);
            else {
              const body = { Name: op.name, Size: op.size, Tags: op.tags, Lat: op.lat, Lng: op.lat };
              await db.batch([{ Type: 'PUT', Id: `things/${op.id}`, Document: doc('Things', body) }]);
            }
          }
          // Indexing between rounds: later rounds update and delete what earlier ones indexed.
          await threaded.step();
        }
        await stepUntilIdle(threaded);
        const fromThread = [dump(byFields.Name), dump(byTag.Name)];
        threaded.reset(byFields.Name);
        threaded.reset(byTag.Name);
        threaded.runUntilIdle();
        expect([dump(byFields.Name), dump(byTag.Name)]).toEqual(fromThread);
      }),
      { numRuns: 15 },
    );
    threaded.close();
  });

  it('never applies a batch prepared for an index that was reset meanwhile', async () => {
    const lines = Array.from({ length: 100 }, (_, i) => ({
      Id: `things/${i}`,
      Document: doc('Things', { Name: `n${i}`, Size: i, Tags: ['red'] }),
    }));
    await db.insertMany(lines);
    const indexer = new DatabaseIndexer(tmp.dir, { batchSize: 10, prepareThread: thread });
    indexer.put(byFields);
    expect((await indexer.step())[0]?.documents).toBe(10); // the next batch is now being prepared
    const inFlight = indexer.step(); // waits for that batch…
    indexer.reset(byFields.Name); // …while the index starts again from scratch
    expect(await inFlight).toEqual([]);
    await stepUntilIdle(indexer);
    const stats = indexer.stats(byFields.Name)!;
    expect(stats.EntriesCount).toBe(100);
    expect(stats.ErrorsCount).toBe(0);
    expect(dump(byFields.Name)).toMatchObject({ counts: expect.arrayContaining([['Tags', 'red', 100]]) });
    indexer.close();
  });

  it('reports a map that fails, runs tenant code on the thread, and survives the thread going away', async () => {
    await db.insertMany([
      { Id: 'things/1', Document: doc('Things', { Tags: ['a'], Size: 1 }) },
      { Id: 'things/2', Document: doc('Things', { Tags: 'not an array', Size: 2 }) },
      { Id: 'things/3', Document: doc('Things', { Tags: ['a', 'b'], Size: 3 }) },
    ]);
    const own = new PrepareThread();
    const indexer = new DatabaseIndexer(tmp.dir, { prepareThread: own });
    indexer.put(byTag);
    const pending = indexer.step();
    await own['thread'].running().terminate(); // the batch in flight fails, and the next step starts a new thread
    expect(await pending).toEqual([expect.objectContaining({ documents: 0, errors: 1 })]);
    expect(indexer.stats(byTag.Name)?.Errors[0]?.Error).toMatch(
      /indexing failed: the indexing thread stopped/,
    );
    await stepUntilIdle(indexer);
    const stats = indexer.stats(byTag.Name)!;
    expect(stats.Errors[0]).toMatchObject({ Document: 'things/2', Error: expect.stringMatching(/map/) });
    expect(dump(byTag.Name)).toMatchObject({
      entries: [
        ['r:"a"', null, JSON.stringify({ Tag: 'a', Size: 3, Count: 2 })],
        ['r:"b"', null, JSON.stringify({ Tag: 'b', Size: 3, Count: 1 })],
      ],
    });
    indexer.close();
    await own.close();
  });
});
