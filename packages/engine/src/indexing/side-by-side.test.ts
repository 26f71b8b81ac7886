// A changed definition of an existing index is built side by side (RavenDB's `ReplacementOf` index): the
// old index keeps answering, stale, from its old definition until the new one has caught up, then the new
// one takes its place; a second change while one builds supersedes it; a crash mid-replacement leaves the
// old index answering and the replacement resuming. Real files, the real query runner; batches run by hand.
import fs from 'node:fs';
import path from 'node:path';
import type { IndexDefinition } from '@rookery/protocol';
import { makeTempDir } from '@rookery/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Database } from '../database.js';
import { IndexCatalog } from '../query/index-catalog.js';
import { QueryRunner } from '../query/query-runner.js';
import { DatabaseIndexer } from './database-indexer.js';
import { INDEXES_DIRECTORY, indexFileName, REPLACING_DIRECTORY } from './index-file.js';
import { SandboxBudget } from './sandbox-budget.js';

const V1: IndexDefinition = {
  Name: 'Users/ByColor',
  Maps: [{ Collection: 'Users', Fields: { Color: 'Color' } }],
};
/** The same name, another field under the queried name: its answers tell the two definitions apart. */
const V2: IndexDefinition = {
  Name: 'Users/ByColor',
  Maps: [{ Collection: 'Users', Fields: { Color: 'Shade' } }],
};
const V3: IndexDefinition = {
  Name: 'Users/ByColor',
  Maps: [{ Collection: 'Users', Fields: { Color: 'Tone' } }],
};
const USERS = 40;

let tmp: ReturnType<typeof makeTempDir>;
let db: Database;
let indexer: DatabaseIndexer;
let catalog: IndexCatalog;
let runner: QueryRunner;
const cleanups: (() => void)[] = [];

beforeEach(async () => {
  tmp = makeTempDir('rookery-side-by-side-');
  db = Database.create(tmp.dir, 'shop');
  indexer = new DatabaseIndexer(tmp.dir, { batchSize: 8 });
  catalog = new IndexCatalog(tmp.dir);
  runner = new QueryRunner(db, catalog, {
    putIndex: async () => {},
    waitForNonStale: async () => false,
    retireWhenCaughtUp: () => {},
  });
  // Color is red for all; Shade is blue for all; Tone is green for the even ones.
  await db.batch(
    Array.from({ length: USERS }, (_, i) => ({
      Type: 'PUT' as const,
      Id: `users/${i}`,
      Document: {
        Color: 'red',
        Shade: 'blue',
        Tone: i % 2 === 0 ? 'green' : 'grey',
        '@metadata': { '@collection': 'Users' },
      },
    })),
  );
  indexer.put(V1);
  indexer.runUntilIdle();
});
afterEach(async () => {
  catalog.close();
  indexer.close();
  await db.close();
  tmp.cleanup();
  for (const cleanup of cleanups.splice(0)) cleanup();
});

async function answer(color: string): Promise<{ count: number; stale: boolean }> {
  const prepared = await runner.prepare({ query: `from index 'Users/ByColor' where Color = '${color}'` });
  const { result } = runner.run(prepared);
  return { count: result.TotalResults, stale: result.IsStale };
}

describe('a changed index definition', () => {
  it('is answered by the old definition, stale, until the new one has caught up, then by the new one', async () => {
    expect(await answer('red')).toEqual({ count: USERS, stale: false });
    expect(indexer.put(V2)).toEqual({ created: true });
    expect(await answer('red')).toEqual({ count: USERS, stale: true });
    expect(indexer.replacing).toEqual([V1.Name]);
    indexer.runOnce(); // one batch of 8 into the replacement: still the old one answering
    expect(await answer('red')).toEqual({ count: USERS, stale: true });
    expect(await answer('blue')).toEqual({ count: 0, stale: true });

    indexer.runUntilIdle();
    expect(indexer.replacing).toEqual([]);
    expect(await answer('blue')).toEqual({ count: USERS, stale: false });
    expect(await answer('red')).toEqual({ count: 0, stale: false });
    expect(indexer.stats(V1.Name)).toMatchObject({ IsStale: false, EntriesCount: USERS });
    expect(fs.readdirSync(path.join(tmp.dir, INDEXES_DIRECTORY, REPLACING_DIRECTORY))).toEqual([]);
  });

  it('a second change while one builds replaces the replacement; putting the old one back calls it off', async () => {
    indexer.put(V2);
    indexer.runOnce();
    indexer.put(V3);
    expect(indexer.replacing).toEqual([V1.Name]);
    indexer.runUntilIdle();
    expect(await answer('green')).toEqual({ count: USERS / 2, stale: false });
    expect(await answer('blue')).toEqual({ count: 0, stale: false });

    indexer.put(V1);
    expect(indexer.replacing).toEqual([V1.Name]);
    expect(indexer.put(V3)).toEqual({ created: false }); // the answering one put again: nothing to build
    expect(indexer.replacing).toEqual([]);
    indexer.runUntilIdle();
    expect(await answer('green')).toEqual({ count: USERS / 2, stale: false });
  });

  it('survives a crash mid-replacement: the old index answers after the restart and the replacement resumes', async () => {
    indexer.put(V2);
    indexer.runOnce();
    // The indexer's process dies without closing anything (its files stay as the crash left them).
    const copy = makeTempDir('rookery-side-by-side-crashed-');
    cleanups.push(copy.cleanup);
    const crashed = path.join(copy.dir, 'db');
    fs.cpSync(tmp.dir, crashed, { recursive: true });
    indexer.close();
    catalog.close();
    await db.close();
    db = Database.open(crashed);
    indexer = new DatabaseIndexer(crashed, { batchSize: 8 });
    catalog = new IndexCatalog(crashed);
    runner = new QueryRunner(db, catalog, {
      putIndex: async () => {},
      waitForNonStale: async () => false,
      retireWhenCaughtUp: () => {},
    });
    expect(indexer.replacing).toEqual([V1.Name]);
    expect(await answer('red')).toEqual({ count: USERS, stale: true });
    indexer.runUntilIdle();
    expect(await answer('blue')).toEqual({ count: USERS, stale: false });
  });

  it('after a crash between the old file going and the new one taking its place, the new one is promoted', async () => {
    indexer.put(V2);
    indexer.runOnce();
    indexer.close();
    // What `promote` leaves if the process dies right after removing the old file.
    fs.rmSync(path.join(tmp.dir, INDEXES_DIRECTORY, indexFileName(V1.Name)));
    indexer = new DatabaseIndexer(tmp.dir, { batchSize: 8 });
    expect(indexer.replacing).toEqual([]);
    expect(indexer.names).toEqual([V2.Name]);
    indexer.runUntilIdle();
    expect(await answer('blue')).toEqual({ count: USERS, stale: false });
  });

  it('is replaced in place when the sandbox budget cannot hold both JavaScript indexes at once', async () => {
    const budget = new SandboxBudget(16);
    const js = new DatabaseIndexer(tmp.dir, {
      batchSize: 8,
      sandboxBudget: budget,
      sandbox: { memoryMb: 16 },
    });
    const map = (field: string): IndexDefinition => ({
      Name: 'Users/Js',
      Maps: [`map('Users', u => ({ Color: u.${field} }))`],
    });
    try {
      js.put(map('Color'));
      js.runUntilIdle();
      expect(js.put(map('Shade'))).toEqual({ created: true });
      expect(js.replacing).toEqual([]);
      js.runUntilIdle();
    } finally {
      js.close();
    }
    const prepared = await runner.prepare({ query: "from index 'Users/Js' where Color = 'blue'" });
    expect(runner.run(prepared).result.TotalResults).toBe(USERS);
  });
});
