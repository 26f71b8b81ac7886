import type { Command, IndexDefinition } from '@rookery/protocol';
import { makeTempDir } from '@rookery/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Database } from '../database.js';
import { DatabaseIndexer } from '../indexing/database-indexer.js';
import { IndexCatalog } from './index-catalog.js';
import { QueryRunner } from './query-runner.js';

// RavenDB's clients page every query with `limit $p0, $p1` (offset, then limit) and send null for the offset
// when only take() was called, and for the limit when only skip() was.
let tmp: ReturnType<typeof makeTempDir>;
let db: Database;
let indexer: DatabaseIndexer;
let catalog: IndexCatalog;
let runner: QueryRunner;

beforeEach(async () => {
  tmp = makeTempDir();
  db = Database.create(tmp.dir, 'shop');
  indexer = new DatabaseIndexer(tmp.dir, { batchSize: 16 });
  catalog = new IndexCatalog(tmp.dir);
  runner = new QueryRunner(db, catalog, {
    putIndex: async (definition: IndexDefinition) => {
      indexer.put(definition);
      indexer.runUntilIdle();
    },
    waitForNonStale: async () => {
      indexer.runUntilIdle();
      return true;
    },
    retireWhenCaughtUp: () => {},
  });
  const commands: Command[] = Array.from({ length: 5 }, (_, i) => ({
    Type: 'PUT',
    Id: `users/${i + 1}`,
    Document: { Age: i + 1, '@metadata': { '@collection': 'Users' } },
  }));
  await db.batch(commands);
});
afterEach(async () => {
  catalog.close();
  indexer.close();
  await db.close();
  tmp.cleanup();
});

async function ages(query: string, parameters: Record<string, number | null>): Promise<unknown[]> {
  const prepared = await runner.prepare({ query, parameters, waitForNonStaleResults: true });
  return runner.run(prepared).result.Results.map((r) => (r as { Age: number }).Age);
}

describe('paging parameters', () => {
  it('a null offset is no offset, a null limit no limit', async () => {
    const query = 'from Users where Age > 0 order by Age limit $p0, $p1';
    expect(await ages(query, { p0: null, p1: 2 })).toEqual([1, 2]);
    expect(await ages(query, { p0: 3, p1: null })).toEqual([4, 5]);
    expect(await ages(query, { p0: 1, p1: 2 })).toEqual([2, 3]);
  });

  it('a negative or fractional one is still refused', async () => {
    await expect(ages('from Users where Age > 0 limit $p0, $p1', { p0: -1, p1: 2 })).rejects.toMatchObject({
      code: 'InvalidQuery',
    });
  });
});
