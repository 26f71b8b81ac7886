import path from 'node:path';
import type { IndexDefinition } from '@rookery/protocol';
import { makeTempDir } from '@rookery/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Database } from '../database.js';
import { DatabaseIndexer } from '../indexing/database-indexer.js';
import { INDEXES_DIRECTORY, indexFileName } from '../indexing/index-file.js';
import { EntrySet } from './entry-set.js';
import { IndexReader, type IndexReaderOptions } from './index-reader.js';
import { MatchSets } from './match-sets.js';
import type { IndexQuery, Predicate } from './plan.js';

describe('EntrySet', () => {
  it('reads a group_concat list and combines like sets of numbers', () => {
    const a = EntrySet.fromList('3,0,31,32,64,99', 100);
    const b = EntrySet.fromList('31,64,100', 100);
    expect([...a.entries()]).toEqual([0, 3, 31, 32, 64, 99]);
    expect(a.size).toBe(6);
    expect([...a.and(b).entries()]).toEqual([31, 64]);
    expect([...a.or(b).entries()]).toEqual([0, 3, 31, 32, 64, 99, 100]);
    expect([...a.andNot(b).entries()]).toEqual([0, 3, 32, 99]);
    expect(a.has(31) && !a.has(30) && !a.has(-1) && !a.has(10_000)).toBe(true);
  });

  it('reads an empty list and ignores entries beyond the state it was sized for', () => {
    expect(EntrySet.fromList(null, 10).size).toBe(0);
    expect(EntrySet.fromList('', 10).size).toBe(0);
    expect([...EntrySet.fromList('5,11,4000', 10).entries()]).toEqual([5]);
  });

  it('refuses to combine sets sized for different states', () => {
    expect(() => EntrySet.empty(10).and(EntrySet.empty(1000))).toThrow(/different states/);
  });
});

describe('match bitmaps in queries', () => {
  let tmp: ReturnType<typeof makeTempDir>;
  let db: Database;
  let indexer: DatabaseIndexer;
  const readers: IndexReader[] = [];

  const packages: IndexDefinition = {
    Name: 'Packages/Query',
    Maps: [
      {
        Collection: 'Packages',
        Fields: { Title: 'Title', Downloads: 'Downloads', Pre: 'Pre', Query: ['Title', 'Tags'] },
      },
    ],
    Fields: { Query: { Indexing: 'Search' } },
  };
  const tags = ['json', 'http', 'grid', 'log', 'mvc'];

  beforeEach(async () => {
    tmp = makeTempDir();
    db = Database.create(tmp.dir, 'nuget');
    indexer = new DatabaseIndexer(tmp.dir, { batchSize: 100 });
    await db.batch(
      Array.from({ length: 300 }, (_, i) => ({
        Type: 'PUT' as const,
        Id: `packages/${i}`,
        Document: {
          Title: `Package ${i}`,
          Downloads: (i * 7919) % 1000,
          Pre: i % 4 === 0,
          Tags: tags.filter((_, t) => i % (t + 2) === 0),
          '@metadata': { '@collection': 'Packages' },
        },
      })),
    );
    indexer.put(packages);
    indexer.runUntilIdle();
  });
  afterEach(async () => {
    for (const r of readers.splice(0)) r.close();
    indexer.close();
    await db.close();
    tmp.cleanup();
  });

  const open = (options: IndexReaderOptions) => {
    const r = new IndexReader(path.join(tmp.dir, INDEXES_DIRECTORY, indexFileName(packages.Name)), options);
    readers.push(r);
    return r;
  };
  const listing = (where: Predicate, take = 10): IndexQuery => ({
    where,
    orderBy: [
      { kind: 'field', field: 'Downloads', descending: true },
      { kind: 'field', field: 'Title', descending: false },
    ],
    skip: 0,
    take,
  });
  const notPre: Predicate = { kind: 'compare', field: 'Pre', op: '=', value: false };
  const search = (terms: string, operator: 'and' | 'or' = 'or'): Predicate => ({
    kind: 'search',
    field: 'Query',
    terms,
    operator,
  });
  const answer = (r: IndexReader, q: IndexQuery) => {
    const page = r.run(q);
    return { total: page.total, ids: page.entries.map((e) => e.docId) };
  };

  it('gives the same pages and totals as SQL probes for searches, filters and their negations', () => {
    const bitmaps = open({ matchSets: 'always' });
    const probes = open({ matchSets: 'never' });
    const wheres: Predicate[] = [
      { kind: 'and', children: [notPre, search('json')] },
      { kind: 'and', children: [notPre, search('json http', 'and')] },
      {
        kind: 'or',
        children: [search('grid'), { kind: 'compare', field: 'Downloads', op: '>', value: 900 }],
      },
      { kind: 'not', child: search('json log') },
      { kind: 'and', children: [search('mvc'), { kind: 'compare', field: 'Pre', op: '!=', value: true }] },
      { kind: 'compare', field: 'Query', op: '=', value: 'package 12' },
      search('nothingmatches'),
      search('***'),
    ];
    for (const where of wheres) {
      for (const take of [1, 10, 200]) {
        const q = listing(where, take);
        expect(answer(bitmaps, q), JSON.stringify(where)).toEqual(answer(probes, q));
      }
      const unordered: IndexQuery = { where, orderBy: [], skip: 0, take: 1000 };
      const sorted = (r: IndexReader) => ({ ...answer(r, unordered), ids: answer(r, unordered).ids.sort() });
      expect(sorted(bitmaps)).toEqual(sorted(probes));
    }
    expect(bitmaps.run(listing(notPre)).plan.Children?.[0]?.Details).toMatch(/^bitmaps/);
    expect(probes.run(listing(notPre)).plan.Children?.[0]?.Details).not.toMatch(/^bitmaps/);
  });

  it('drops its bitmaps when the indexer commits, so answers follow the documents', async () => {
    const r = open({ matchSets: 'always' });
    const where: Predicate = { kind: 'and', children: [notPre, search('json')] };
    const before = r.run(listing(where)).total;
    expect(before).toBeGreaterThan(0);
    expect(r.run(listing(where)).total).toBe(before);

    // A quarter of the json packages that are not prerelease lose the tag, and a new one arrives.
    const patched = Array.from({ length: 300 }, (_, i) => i).filter((i) => i % 8 === 2);
    await db.batch([
      ...patched.map((i) => ({
        Type: 'PATCH' as const,
        Id: `packages/${i}`,
        Patch: { Merge: { Tags: ['log'] } },
      })),
      {
        Type: 'PUT',
        Id: 'packages/new',
        Document: {
          Title: 'New',
          Downloads: 5000,
          Pre: false,
          Tags: ['json'],
          '@metadata': { '@collection': 'Packages' },
        },
      },
    ]);
    indexer.runUntilIdle();

    const fresh = open({ matchSets: 'never' });
    const after = answer(r, listing(where));
    expect(after).toEqual(answer(fresh, listing(where)));
    expect(after.total).toBe(before - patched.length + 1);
    expect(after.ids[0]).toBe('packages/new');
  });

  it("keeps a field's order once walks of it read a tenth of the entries, for one state of the index", async () => {
    const r = open({ matchSets: 'never' });
    const sets = new MatchSets(r.connection, r, 1 << 20);
    const downloads = r.fieldId('Downloads')!;
    sets.refresh();
    expect(sets.order(downloads, false)).toBeNull();
    sets.noteWalked(downloads, 29);
    expect(sets.order(downloads, false)).toBeNull();
    sets.noteWalked(downloads, 1);
    const order = sets.order(downloads, false);
    expect(order?.length).toBe(300);
    // Entries by (Downloads, entry): each run holds one value's entries, in entry order.
    const byValue = r.connection
      .prepare('SELECT value, entry FROM terms WHERE field = ? ORDER BY value, entry')
      .all(downloads) as { value: number; entry: number }[];
    expect([...order!.entries]).toEqual(byValue.map((t) => t.entry));
    expect(order!.runStarts.length - 1).toBe(new Set(byValue.map((t) => t.value)).size);
    expect(sets.order(downloads, false)).toBe(order);

    // The indexer commits: the order and the walks counted towards it belong to the old state.
    await db.batch([{ Type: 'DELETE', Id: 'packages/1' }]);
    indexer.runUntilIdle();
    sets.refresh();
    expect(sets.order(downloads, false)).toBeNull();
    expect(sets.order(downloads, true)?.length).toBe(299);
  });

  it("tells a kept leaf's size (the planner's estimate) for the state it was read in only", async () => {
    const r = open({ matchSets: 'never' });
    const sets = new MatchSets(r.connection, r, 1 << 20);
    const json = search('json');
    expect(sets.keptSize(json)).toBeNull();
    const size = sets.evaluate(json).size;
    expect(size).toBeGreaterThan(0);
    expect(sets.keptSize(json)).toBe(size);
    await db.batch([{ Type: 'DELETE', Id: 'packages/0' }]);
    indexer.runUntilIdle();
    expect(sets.keptSize(json)).toBeNull();
  });

  it('reads an order too big to keep at most once per state, and none surely too big', () => {
    const r = open({ matchSets: 'never' });
    const downloads = r.fieldId('Downloads')!;
    const small = new MatchSets(r.connection, r, 5_000);
    small.refresh();
    expect(small.order(downloads, true)?.length).toBe(300); // read and used, but over half the bound
    expect(small.order(downloads, true)).toBeNull();
    expect(small.cachedBytes).toBe(0);
    const tiny = new MatchSets(r.connection, r, 1_000);
    tiny.refresh();
    expect(tiny.order(downloads, true)).toBeNull();
  });

  it('keeps leaf bitmaps within its byte bound', () => {
    const r = open({ matchSets: 'always', matchSetBytes: 100 });
    for (const tag of tags) r.run(listing({ kind: 'and', children: [notPre, search(tag)] }));
    expect(r.matchSetBytes).toBeLessThanOrEqual(100);
    const unbounded = open({ matchSets: 'always' });
    for (const tag of tags) unbounded.run(listing({ kind: 'and', children: [notPre, search(tag)] }));
    expect(unbounded.matchSetBytes).toBeGreaterThan(100);
  });
});

describe('a narrow query asked again', () => {
  it('is answered from its kept bitmaps, not SQL probes, with the same page (a warm two-word search)', async () => {
    const tmp = makeTempDir();
    const db = Database.create(tmp.dir, 'nuget');
    const indexer = new DatabaseIndexer(tmp.dir, { batchSize: 1000 });
    const definition: IndexDefinition = {
      Name: 'Packages/Query',
      Maps: [{ Collection: 'Packages', Fields: { Downloads: 'Downloads', Pre: 'Pre', Query: 'Tags' } }],
      Fields: { Query: { Indexing: 'Search' } },
    };
    const readers: IndexReader[] = [];
    try {
      // json in every 2nd package, http in every 3rd: each word broad (1,500 and 1,000 of 3,000), the pair
      // narrow (500, of which 250 are not prerelease).
      await db.batch(
        Array.from({ length: 3000 }, (_, i) => ({
          Type: 'PUT' as const,
          Id: `packages/${i}`,
          Document: {
            Downloads: (i * 7919) % 1000,
            Pre: i % 4 === 0,
            Tags: [...(i % 2 === 0 ? ['json'] : []), ...(i % 3 === 0 ? ['http'] : [])],
            '@metadata': { '@collection': 'Packages' },
          },
        })),
      );
      indexer.put(definition);
      indexer.runUntilIdle();
      const open = (options: IndexReaderOptions) => {
        const r = new IndexReader(
          path.join(tmp.dir, INDEXES_DIRECTORY, indexFileName(definition.Name)),
          options,
        );
        readers.push(r);
        return r;
      };
      const auto = open({});
      const probes = open({ matchSets: 'never' });
      const query: IndexQuery = {
        where: {
          kind: 'and',
          children: [
            { kind: 'compare', field: 'Pre', op: '=', value: false },
            { kind: 'search', field: 'Query', terms: 'json http', operator: 'and' },
          ],
        },
        orderBy: [{ kind: 'field', field: 'Downloads', descending: true }],
        skip: 0,
        take: 20,
      };
      const expected = probes.run(query);
      for (const ask of ['first', 'again']) {
        const page = auto.run(query);
        expect(page.plan.Children?.[0]?.Details, ask).toMatch(/^bitmaps/);
        expect(page.total).toBe(250);
        expect(page.entries.map((e) => e.docId)).toEqual(expected.entries.map((e) => e.docId));
      }
    } finally {
      for (const r of readers) r.close();
      indexer.close();
      await db.close();
      tmp.cleanup();
    }
  });
});

describe('an index in its first (bulk) build', () => {
  it('answers nothing, stale, rather than seeking entries without their index (terms_by_entry is made at the end)', async () => {
    const tmp = makeTempDir();
    const db = Database.create(tmp.dir, 'nuget');
    const indexer = new DatabaseIndexer(tmp.dir, { batchSize: 50 });
    const definition: IndexDefinition = {
      Name: 'Packages/Listing',
      Maps: [{ Collection: 'Packages', Fields: { Downloads: 'Downloads', Pre: 'Pre', Tag: 'Tag' } }],
    };
    let reader: IndexReader | null = null;
    try {
      await db.batch(
        Array.from({ length: 500 }, (_, i) => ({
          Type: 'PUT' as const,
          Id: `packages/${i}`,
          Document: {
            Downloads: i,
            Pre: i % 3 === 0,
            Tag: `t${i % 7}`,
            '@metadata': { '@collection': 'Packages' },
          },
        })),
      );
      indexer.put(definition);
      indexer.runOnce(); // one batch of 50: the build goes on
      reader = new IndexReader(path.join(tmp.dir, INDEXES_DIRECTORY, indexFileName(definition.Name)));
      const query: IndexQuery = {
        where: {
          kind: 'and',
          children: [
            { kind: 'compare', field: 'Pre', op: '=', value: false },
            { kind: 'compare', field: 'Tag', op: '=', value: 't3' },
          ],
        },
        orderBy: [{ kind: 'field', field: 'Downloads', descending: true }],
        skip: 0,
        take: 10,
      };
      const during = reader.run(query);
      expect({ total: during.total, entries: during.entries }).toEqual({ total: 0, entries: [] });
      expect(during.plan.Details).toMatch(/first build/);
      expect(
        reader.facets(null, [{ kind: 'terms', name: 'Tag', field: 'Tag', top: 10, order: 'countDesc' }]),
      ).toEqual([{ Name: 'Tag', Values: [] }]);
      indexer.runUntilIdle();
      const after = reader.run(query);
      expect(after.total).toBe(
        Array.from({ length: 500 }, (_, i) => i).filter((i) => i % 3 !== 0 && i % 7 === 3).length,
      );
      expect(after.entries[0]?.docId).toBe('packages/493');
    } finally {
      reader?.close();
      indexer.close();
      await db.close();
      tmp.cleanup();
    }
  });
});
