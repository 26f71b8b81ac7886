import { type IndexDefinition, RookeryError } from '@rookery/protocol';
import { makeTempDir } from '@rookery/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Database } from '../database.js';
import { DatabaseIndexer } from '../indexing/database-indexer.js';
import { IndexCatalog } from './index-catalog.js';
import { MAX_ORDER_BY_KEYS, QueryRunner } from './query-runner.js';

// Automatic indexes as the query runner asks for them, on a real database and a real indexer in this
// process (the tenant puts the indexer in another process; the requests are the same).
let tmp: ReturnType<typeof makeTempDir>;
let db: Database;
let indexer: DatabaseIndexer;
let catalog: IndexCatalog;
let runner: QueryRunner;
let requested: string[];

beforeEach(async () => {
  tmp = makeTempDir();
  db = Database.create(tmp.dir, 'shop');
  indexer = new DatabaseIndexer(tmp.dir, { batchSize: 16 });
  catalog = new IndexCatalog(tmp.dir);
  requested = [];
  runner = new QueryRunner(db, catalog, {
    putIndex: async (definition: IndexDefinition) => {
      requested.push(definition.Name);
      // A request to another process answers on a later turn: the other queries arrive meanwhile.
      await new Promise((resolve) => setImmediate(resolve));
      indexer.put(definition);
      indexer.runUntilIdle();
    },
    waitForNonStale: async () => {
      indexer.runUntilIdle();
      return true;
    },
    retireWhenCaughtUp: () => {},
  });
  await db.batch([
    {
      Type: 'PUT',
      Id: 'users/1',
      Document: { Name: 'Ada', Age: 36, '@metadata': { '@collection': 'Users' } },
    },
  ]);
});
afterEach(async () => {
  catalog.close();
  indexer.close();
  await db.close();
  tmp.cleanup();
});

describe('automatic index creation', () => {
  it('asks the indexer once for an index that many queries arriving together need', async () => {
    const answers = await Promise.all(
      Array.from({ length: 20 }, () =>
        runner.prepare({ query: "from Users where Name = 'Ada'", waitForNonStaleResults: true }),
      ),
    );
    expect(requested).toEqual(['Auto/Users/ByName']);
    for (const prepared of answers) expect(runner.run(prepared).result.TotalResults).toBe(1);
  });

  it(`refuses more than ${MAX_ORDER_BY_KEYS} sort keys before any index is asked for`, async () => {
    const keys = (n: number) => Array.from({ length: n }, (_, i) => `K${i}`).join(', ');
    const error = await runner.prepare({ query: `from Users order by ${keys(MAX_ORDER_BY_KEYS + 1)}` }).then(
      () => null,
      (e: unknown) => e,
    );
    expect(error).toBeInstanceOf(RookeryError);
    expect((error as RookeryError).code).toBe('InvalidQuery');
    expect((error as RookeryError).message).toContain(`at most ${MAX_ORDER_BY_KEYS}`);
    expect(requested).toEqual([]);
    await runner.prepare({ query: `from Users order by ${keys(MAX_ORDER_BY_KEYS)}` });
    expect(requested).toHaveLength(1);
  });
});
