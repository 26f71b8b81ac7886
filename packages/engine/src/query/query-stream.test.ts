import type { Command, IndexDefinition } from '@rookery/protocol';
import { makeTempDir } from '@rookery/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Database } from '../database.js';
import { DatabaseIndexer } from '../indexing/database-indexer.js';
import { IndexCatalog } from './index-catalog.js';
import { QueryRunner } from './query-runner.js';
import type { QueryStream } from './query-stream.js';

// Streamed queries page by page: the same results as a paged query, read a few at a time.
let tmp: ReturnType<typeof makeTempDir>;
let db: Database;
let indexer: DatabaseIndexer;
let catalog: IndexCatalog;
let runner: QueryRunner;

const USERS = 50;

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
  const commands: Command[] = Array.from({ length: USERS }, (_, i) => ({
    Type: 'PUT',
    Id: `users/${i + 1}`,
    Document: { Age: i + 1, Team: `t${i % 4}`, '@metadata': { '@collection': 'Users' } },
  }));
  await db.batch(commands);
});
afterEach(async () => {
  catalog.close();
  indexer.close();
  await db.close();
  tmp.cleanup();
});

async function open(query: string): Promise<QueryStream> {
  return runner.stream(await runner.prepare({ query, waitForNonStaleResults: true }));
}

/** Every result, read `pageSize` at a time. */
function drain(stream: QueryStream, pageSize: number): Record<string, unknown>[] {
  const results: Record<string, unknown>[] = [];
  for (let page = stream.next(pageSize); page !== null; page = stream.next(pageSize))
    results.push(...page.map((text) => JSON.parse(text) as Record<string, unknown>));
  return results;
}

describe('query streams', () => {
  it('reads an index query in its order, whatever the page size, with no page limit', async () => {
    for (const pageSize of [1, 7, 1000]) {
      const stream = await open('from Users where Age > 10 order by Age desc');
      expect(stream.indexName).toBe('Auto/Users/ByAge');
      expect(stream.totalResults).toBe(USERS - 10);
      expect(drain(stream, pageSize).map((r) => r.Age)).toEqual(
        Array.from({ length: USERS - 10 }, (_, i) => USERS - i),
      );
    }
  });

  it('applies limit, offset, projections and distinct across pages', async () => {
    expect(
      drain(await open('from Users where Age > 0 order by Age limit 5 offset 3'), 2).map((r) => r.Age),
    ).toEqual([4, 5, 6, 7, 8]);
    expect(drain(await open('from Users where Age <= 2 order by Age select Age as A'), 1)).toEqual([
      { A: 1 },
      { A: 2 },
    ]);
    expect(drain(await open('from Users select distinct Team'), 3)).toEqual([
      { Team: 't0' },
      { Team: 't1' },
      { Team: 't2' },
      { Team: 't3' },
    ]);
  });

  it('reads a collection without an index in etag order, with offset and limit', async () => {
    const stream = await open('from Users limit 4 offset 45');
    expect(stream.indexName).toBeNull();
    expect(stream.totalResults).toBe(USERS);
    expect(drain(stream, 3).map((r) => r.Age)).toEqual([46, 47, 48, 49]);
  });

  it('skips documents deleted after the matches were read', async () => {
    const stream = await open('from Users where Age <= 4 order by Age');
    await db.batch([{ Type: 'DELETE', Id: 'users/2' }]);
    expect(drain(stream, 2).map((r) => r.Age)).toEqual([1, 3, 4]);
  });

  it('fails with DatabaseUnavailable when its index is replaced during the stream', async () => {
    const stream = await open('from Users where Age <= 4 order by Age');
    expect(stream.next(1)).toHaveLength(1);
    indexer.reset('Auto/Users/ByAge');
    indexer.runUntilIdle();
    expect(() => stream.next(1)).toThrow(expect.objectContaining({ code: 'DatabaseUnavailable' }));
  });

  it('refuses facets and includes', async () => {
    await expect(open('from Users select facet(Team)')).rejects.toMatchObject({ code: 'InvalidQuery' });
    await expect(open('from Users include Team')).rejects.toMatchObject({ code: 'InvalidQuery' });
  });
});

describe('documents in id order', () => {
  it('pages a prefix after an id, case-insensitively, and says when it is done', async () => {
    const first = db.documentsInIdOrder('USERS/1', null, 5);
    expect(first.documents.map((d) => d.id)).toEqual([
      'users/1',
      'users/10',
      'users/11',
      'users/12',
      'users/13',
    ]);
    expect(first.done).toBe(false);
    const rest = db.documentsInIdOrder('users/1', 'users/13', 100);
    expect(rest.documents.map((d) => d.id)).toEqual([
      'users/14',
      'users/15',
      'users/16',
      'users/17',
      'users/18',
      'users/19',
    ]);
    expect(rest.done).toBe(true);
    expect(db.documentsInIdOrder('users/4', 'a', 100).documents.map((d) => d.id)).toEqual([
      'users/4',
      'users/40',
      ...Array.from({ length: 9 }, (_, i) => `users/4${i + 1}`),
    ]);
    expect(db.documentsInIdOrder('nobody/', null, 10)).toEqual({ documents: [], done: true });
  });
});
