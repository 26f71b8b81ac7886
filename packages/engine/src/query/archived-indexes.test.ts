import path from 'node:path';
import type { Command, IndexDefinition } from '@rookery/protocol';
import { makeTempDir } from '@rookery/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Database } from '../database.js';
import { DatabaseIndexer } from '../indexing/database-indexer.js';
import { INDEXES_DIRECTORY, indexFileName } from '../indexing/index-file.js';
import { IndexReader } from './index-reader.js';

// Indexes and the data lifecycle: archiving is a delete to an index that does not include archived
// documents, and an update to one that does; expiring is a delete to every index. The indexer is
// run by hand, so "before it caught up" and "after" are both observable.
let tmp: ReturnType<typeof makeTempDir>;
let db: Database;
let indexer: DatabaseIndexer;
let now = Date.parse('2026-11-01T10:00:00Z');
const readers: IndexReader[] = [];

beforeEach(async () => {
  tmp = makeTempDir();
  now = Date.parse('2026-11-01T10:00:00Z');
  db = Database.create(tmp.dir, 'shop', { clock: () => now });
  indexer = new DatabaseIndexer(tmp.dir, { batchSize: 2 });
  await db.batch([
    order(1, 'red', { '@archive-at': '2026-11-02T00:00:00Z' }),
    order(2, 'red', { '@expires': '2026-11-03T00:00:00Z' }),
    order(3, 'blue', { '@archive-at': '2026-11-02T00:00:00Z', '@expires': '2026-11-04T00:00:00Z' }),
    order(4, 'blue'),
  ]);
});
afterEach(async () => {
  for (const r of readers.splice(0)) r.close();
  indexer.close();
  await db.close();
  tmp.cleanup();
});

function order(n: number, color: string, metadata: Record<string, unknown> = {}): Command {
  return {
    Type: 'PUT',
    Id: `orders/${n}`,
    Document: { Number: n, Color: color, '@metadata': { '@collection': 'Orders', ...metadata } },
  };
}

function define(definition: IndexDefinition): IndexReader {
  indexer.put(definition);
  indexer.runUntilIdle();
  const r = new IndexReader(path.join(tmp.dir, INDEXES_DIRECTORY, indexFileName(definition.Name)));
  readers.push(r);
  return r;
}

const all = (r: IndexReader) => r.run({ where: null, orderBy: [], skip: 0, take: 100 }).entries;
const ids = (r: IndexReader) =>
  all(r)
    .map((e) => e.docId)
    .sort();
const stored = (r: IndexReader) =>
  all(r)
    .map((e) => JSON.parse(e.stored!) as Record<string, unknown>)
    .sort((a, b) => String(a.Color).localeCompare(String(b.Color)));

async function sweepAt(iso: string) {
  now = Date.parse(iso);
  return db.sweepDue(now);
}

const plain: IndexDefinition = {
  Name: 'Orders/ByColor',
  Maps: [{ Collection: 'Orders', Fields: { Color: 'Color', Number: 'Number' } }],
};
const withArchived: IndexDefinition = {
  Name: 'Orders/All',
  Maps: ["map('Orders', o => ({ Number: o.Number, Archived: o['@metadata']['@archived'] === true }))"],
  IncludeArchived: true,
};

describe('archived documents in indexes', () => {
  it('leave an index that does not include them once the indexer has caught up', async () => {
    const r = define(plain);
    expect(ids(r)).toEqual(['orders/1', 'orders/2', 'orders/3', 'orders/4']);
    expect(await sweepAt('2026-11-02T00:00:00Z')).toMatchObject({ Archived: 2 });
    // The index is stale until the indexer reads the archived documents' new etags.
    expect(db.hasChangesAfter(['Orders'], r.lastEtag())).toBe(true);
    expect(ids(r)).toEqual(['orders/1', 'orders/2', 'orders/3', 'orders/4']);
    indexer.runUntilIdle();
    expect(db.hasChangesAfter(['Orders'], r.lastEtag())).toBe(false);
    expect(ids(r)).toEqual(['orders/2', 'orders/4']);
    expect(
      r.run({
        where: { kind: 'compare', field: 'Color', op: '=', value: 'blue' },
        orderBy: [],
        skip: 0,
        take: 10,
      }).total,
    ).toBe(1);
    expect(r.entriesCount()).toBe(2);
  });

  it('stay in an index that includes them (JavaScript), which sees @archived in the metadata', async () => {
    const r = define(withArchived);
    await sweepAt('2026-11-02T00:00:00Z');
    indexer.runUntilIdle();
    expect(ids(r)).toEqual(['orders/1', 'orders/2', 'orders/3', 'orders/4']);
    const archived = r.run({
      where: { kind: 'compare', field: 'Archived', op: '=', value: true },
      orderBy: [],
      skip: 0,
      take: 10,
    });
    expect(archived.entries.map((e) => e.docId).sort()).toEqual(['orders/1', 'orders/3']);
  });

  it('follow the same rule in JavaScript indexes that do not opt in, and in declarative ones that do', async () => {
    const js = define({ ...withArchived, Name: 'Orders/JsLive', IncludeArchived: undefined });
    const declarative = define({ ...plain, Name: 'Orders/DeclarativeAll', IncludeArchived: true });
    await sweepAt('2026-11-02T00:00:00Z');
    indexer.runUntilIdle();
    expect(ids(js)).toEqual(['orders/2', 'orders/4']);
    expect(ids(declarative)).toEqual(['orders/1', 'orders/2', 'orders/3', 'orders/4']);
  });

  it('are taken out of map/reduce results unless the index includes them', async () => {
    const reduce = (name: string, includeArchived: boolean): IndexDefinition => ({
      Name: name,
      Maps: [{ Collection: 'Orders', Fields: { Color: 'Color', Number: 'Number' } }],
      Reduce: { GroupBy: ['Color'], Aggregate: { Count: { Count: true }, Total: { Sum: 'Number' } } },
      ...(includeArchived ? { IncludeArchived: true } : {}),
    });
    const live = define(reduce('Orders/TotalsLive', false));
    const everything = define(reduce('Orders/TotalsAll', true));
    await sweepAt('2026-11-02T00:00:00Z');
    indexer.runUntilIdle();
    expect(stored(live)).toEqual([
      { Color: 'blue', Count: 1, Total: 4 },
      { Color: 'red', Count: 1, Total: 2 },
    ]);
    expect(stored(everything)).toEqual([
      { Color: 'blue', Count: 2, Total: 7 },
      { Color: 'red', Count: 2, Total: 3 },
    ]);
  });

  it('come back when un-archived by a write', async () => {
    const r = define(plain);
    await sweepAt('2026-11-02T00:00:00Z');
    indexer.runUntilIdle();
    await db.batch([order(1, 'green')]);
    indexer.runUntilIdle();
    expect(ids(r)).toEqual(['orders/1', 'orders/2', 'orders/4']);
  });

  it('are indexed from the start by an index created after they were archived, only if it includes them', async () => {
    await sweepAt('2026-11-02T00:00:00Z');
    expect(ids(define(plain))).toEqual(['orders/2', 'orders/4']);
    expect(ids(define(withArchived))).toEqual(['orders/1', 'orders/2', 'orders/3', 'orders/4']);
  });
});

describe('expired documents in indexes', () => {
  it('leave every index, including those that include archived documents', async () => {
    const live = define(plain);
    const everything = define(withArchived);
    await sweepAt('2026-11-02T00:00:00Z');
    expect(await sweepAt('2026-11-04T00:00:00Z')).toEqual({ Archived: 0, Expired: 2, More: false });
    indexer.runUntilIdle();
    expect(ids(live)).toEqual(['orders/4']);
    expect(ids(everything)).toEqual(['orders/1', 'orders/4']);
    expect(
      db
        .changesAfter(0, 100)
        .filter((c) => c.deleted)
        .map((c) => c.id)
        .sort(),
    ).toEqual(['orders/2', 'orders/3']);
  });
});
