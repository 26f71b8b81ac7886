// The idle floor: an indexer polled every second over a database where nothing happens must answer
// from one pragma (docs.db's data_version), not by asking every index; and every way work can arrive
// (the tenant's commit, a put, a delete, a reset, an adoption) must end that quiet. Real files throughout.
import path from 'node:path';
import type { IndexDefinition } from '@rookery/protocol';
import { makeTempDir } from '@rookery/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Database } from '../database.js';
import { DatabaseIndexer } from './database-indexer.js';
import { PrepareThread } from './prepare-thread.js';

const BY_NAME: IndexDefinition = {
  Name: 'Users/ByName',
  Maps: [{ Collection: 'Users', Fields: { Name: 'Name' } }],
};

let tmp: ReturnType<typeof makeTempDir>;
const cleanups: (() => void | Promise<void>)[] = [];
beforeEach(() => {
  tmp = makeTempDir('rookery-quiet-look-');
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  tmp.cleanup();
});

async function setup(): Promise<{ db: Database; indexer: DatabaseIndexer }> {
  const directory = path.join(tmp.dir, 'db');
  const db = Database.create(directory, 'shop');
  cleanups.push(() => db.close());
  await writeUsers(db, 0, 20);
  const thread = new PrepareThread();
  cleanups.push(() => thread.close());
  const indexer = new DatabaseIndexer(directory, { batchSize: 8, prepareThread: thread });
  cleanups.push(() => indexer.close());
  indexer.put(BY_NAME);
  return { db, indexer };
}

async function writeUsers(db: Database, from: number, count: number): Promise<void> {
  await db.batch(
    Array.from({ length: count }, (_, i) => ({
      Type: 'PUT' as const,
      Id: `users/${from + i}`,
      Document: { Name: `user ${from + i}`, '@metadata': { '@collection': 'Users' } },
    })),
  );
}

/** What the indexer process does on each look: steps until nothing is left, then marks the quiet point. */
async function lookUntilQuiet(indexer: DatabaseIndexer): Promise<number> {
  let batches = 0;
  for (;;) {
    if (indexer.isQuiet()) return batches;
    const progress = await indexer.step();
    if (progress.length === 0) {
      indexer.markQuiet();
      return batches;
    }
    batches += progress.length;
  }
}

describe('the indexer over an idle database', () => {
  it('answers every later look from one pragma until the tenant commits, then indexes the write', async () => {
    const { db, indexer } = await setup();
    expect(await lookUntilQuiet(indexer)).toBeGreaterThan(0);
    expect(indexer.isQuiet()).toBe(true);
    for (let i = 0; i < 50; i++) expect(await lookUntilQuiet(indexer)).toBe(0);
    expect(indexer.quietLooks).toBe(51);

    await writeUsers(db, 100, 1);
    expect(indexer.isQuiet()).toBe(false);
    expect(await lookUntilQuiet(indexer)).toBe(1);
    expect(indexer.stats(BY_NAME.Name)).toMatchObject({ IsStale: false, EntriesCount: 21 });
    expect(indexer.isQuiet()).toBe(true);
  });

  it('ends the quiet on a put, a delete and a reset made here, which commit nothing to docs.db', async () => {
    const { indexer } = await setup();
    await lookUntilQuiet(indexer);
    const byId: IndexDefinition = {
      Name: 'Users/ById',
      Maps: [{ Collection: 'Users', Fields: { Id: 'id()' } }],
    };
    indexer.put(byId);
    expect(indexer.isQuiet()).toBe(false);
    expect(await lookUntilQuiet(indexer)).toBeGreaterThan(0);
    expect(indexer.stats(byId.Name)).toMatchObject({ IsStale: false, EntriesCount: 20 });

    expect(indexer.reset(byId.Name)).toBe(true);
    expect(indexer.isQuiet()).toBe(false);
    expect(await lookUntilQuiet(indexer)).toBeGreaterThan(0);
    expect(indexer.stats(byId.Name)).toMatchObject({ IsStale: false, EntriesCount: 20 });

    expect(indexer.delete(byId.Name)).toBe(true);
    expect(indexer.isQuiet()).toBe(false);
  });

  it('does not mark a quiet point over a change made while its step was in flight', async () => {
    const { indexer } = await setup();
    await lookUntilQuiet(indexer);
    indexer.lookAgain();
    const stepping = indexer.step();
    // A put arrives over IPC while the step awaits the prepare thread.
    indexer.put({ Name: 'Users/Other', Maps: [{ Collection: 'Users', Fields: { Other: 'Name' } }] });
    expect(await stepping).toEqual([]);
    indexer.markQuiet();
    expect(indexer.isQuiet()).toBe(false);
    expect(await lookUntilQuiet(indexer)).toBeGreaterThan(0);
    expect(indexer.stats('Users/Other')).toMatchObject({ IsStale: false, EntriesCount: 20 });
  });
});
