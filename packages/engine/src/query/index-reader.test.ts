import path from 'node:path';
import type { IndexDefinition } from '@rookery/protocol';
import { makeTempDir } from '@rookery/testkit';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Database } from '../database.js';
import { DatabaseIndexer } from '../indexing/database-indexer.js';
import { INDEXES_DIRECTORY, indexFileName } from '../indexing/index-file.js';
import { IndexReader, type IndexReaderOptions } from './index-reader.js';
import type { IndexQuery, Predicate, Scalar } from './plan.js';

let tmp: ReturnType<typeof makeTempDir>;
let db: Database;
let indexer: DatabaseIndexer;
const readers: IndexReader[] = [];

beforeEach(() => {
  tmp = makeTempDir();
  db = Database.create(tmp.dir, 'shop');
  indexer = new DatabaseIndexer(tmp.dir, { batchSize: 64 });
});
afterEach(async () => {
  for (const r of readers.splice(0)) r.close();
  indexer.close();
  await db.close();
  tmp.cleanup();
});

function reader(name: string, options: IndexReaderOptions = {}): IndexReader {
  const r = new IndexReader(path.join(tmp.dir, INDEXES_DIRECTORY, indexFileName(name)), options);
  readers.push(r);
  return r;
}

async function put(id: string, collection: string, body: Record<string, unknown>) {
  await db.batch([
    { Type: 'PUT', Id: id, Document: { ...body, '@metadata': { '@collection': collection } } },
  ]);
}

const query = (where: Predicate | null, extra: Partial<IndexQuery> = {}): IndexQuery => ({
  where,
  orderBy: [],
  skip: 0,
  take: 1000,
  ...extra,
});

const ids = (r: IndexReader, q: IndexQuery) =>
  r
    .run(q)
    .entries.map((e) => e.docId)
    .sort();

const usersByNameAndAge: IndexDefinition = {
  Name: 'Users/ByNameAndAge',
  Maps: [{ Collection: 'Users', Fields: { Name: 'Name', Age: 'Age', Tags: 'Tags', City: 'Address.City' } }],
};

describe('map indexes', () => {
  it('indexes documents and answers equality, ranges, in, prefixes and exists', async () => {
    await put('users/1', 'Users', {
      Name: 'Ada',
      Age: 36,
      Tags: ['math', 'poet'],
      Address: { City: 'London' },
    });
    await put('users/2', 'Users', { Name: 'Alan', Age: 41, Tags: ['math'], Address: { City: 'Wilmslow' } });
    await put('users/3', 'Users', { Name: 'grace', Age: 85, Tags: [] });
    await put('orders/1', 'Orders', { Name: 'Ada' });
    indexer.put(usersByNameAndAge);
    indexer.runUntilIdle();
    const r = reader('users/bynameandage');

    expect(ids(r, query({ kind: 'compare', field: 'Name', op: '=', value: 'ADA' }))).toEqual(['users/1']);
    expect(ids(r, query({ kind: 'compare', field: 'Age', op: '>', value: 40 }))).toEqual([
      'users/2',
      'users/3',
    ]);
    expect(ids(r, query({ kind: 'between', field: 'Age', low: 36, high: 41 }))).toEqual([
      'users/1',
      'users/2',
    ]);
    expect(ids(r, query({ kind: 'in', field: 'Tags', values: ['poet', 'nothing'], all: false }))).toEqual([
      'users/1',
    ]);
    expect(ids(r, query({ kind: 'in', field: 'Tags', values: ['math', 'poet'], all: true }))).toEqual([
      'users/1',
    ]);
    expect(ids(r, query({ kind: 'startsWith', field: 'Name', value: 'a' }))).toEqual(['users/1', 'users/2']);
    expect(ids(r, query({ kind: 'endsWith', field: 'Name', value: 'CE' }))).toEqual(['users/3']);
    expect(ids(r, query({ kind: 'exists', field: 'City' }))).toEqual(['users/1', 'users/2']);
    expect(ids(r, query({ kind: 'not', child: { kind: 'exists', field: 'City' } }))).toEqual(['users/3']);
    expect(ids(r, query({ kind: 'compare', field: 'City', op: '=', value: null }))).toEqual(['users/3']);
    expect(ids(r, query({ kind: 'compare', field: 'Nope', op: '=', value: 1 }))).toEqual([]);
    // A range on numbers never matches text, and the other way round.
    expect(ids(r, query({ kind: 'compare', field: 'Name', op: '>', value: 0 }))).toEqual([]);
    expect(r.run(query({ kind: 'compare', field: 'Tags', op: '=', value: 'math' })).total).toBe(2);
  });

  it('follows updates and deletes, and reports where it is', async () => {
    indexer.put(usersByNameAndAge);
    await put('users/1', 'Users', { Name: 'Ada', Age: 36 });
    indexer.runUntilIdle();
    const r = reader('Users/ByNameAndAge');
    expect(r.lastEtag()).toBe(db.lastEtag);
    await put('users/1', 'Users', { Name: 'Ada', Age: 37 });
    await put('users/2', 'Users', { Name: 'Bob', Age: 1 });
    expect(indexer.stats('users/bynameandage')?.IsStale).toBe(true);
    indexer.runUntilIdle();
    expect(ids(r, query({ kind: 'compare', field: 'Age', op: '=', value: 36 }))).toEqual([]);
    expect(ids(r, query({ kind: 'compare', field: 'Age', op: '=', value: 37 }))).toEqual(['users/1']);
    await db.batch([{ Type: 'DELETE', Id: 'USERS/1' }]);
    indexer.runUntilIdle();
    expect(ids(r, query(null))).toEqual(['users/2']);
    const stats = indexer.stats('Users/ByNameAndAge');
    expect(stats).toMatchObject({ IsStale: false, EntriesCount: 1, ErrorsCount: 0, Type: 'Map' });
  });

  it('orders and pages, ties broken by the next key, with the total count', async () => {
    for (let i = 0; i < 50; i++) await put(`users/${i}`, 'Users', { Name: `n${i % 7}`, Age: i % 5 });
    indexer.put(usersByNameAndAge);
    indexer.runUntilIdle();
    const r = reader('Users/ByNameAndAge');
    const expected = Array.from({ length: 50 }, (_, i) => ({
      id: `users/${i}`,
      age: i % 5,
      name: `n${i % 7}`,
    }))
      .filter((u) => u.age !== 2)
      .sort((a, b) => b.age - a.age || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const [skip, take] of [
      [0, 10],
      [10, 10],
      [35, 10],
    ] as const) {
      const page = r.run({
        where: { kind: 'compare', field: 'Age', op: '!=', value: 2 },
        orderBy: [
          { kind: 'field', field: 'Age', descending: true },
          { kind: 'field', field: 'Name', descending: false },
        ],
        skip,
        take,
      });
      expect(page.total).toBe(40);
      const got = page.entries.map((e) => e.docId);
      const want = expected.slice(skip, skip + take);
      expect(got.length).toBe(want.length);
      // Entries with the same (Age, Name) may come in any order.
      expect(got.map((id) => expected.find((u) => u.id === id)).map((u) => `${u?.age}${u?.name}`)).toEqual(
        want.map((u) => `${u.age}${u.name}`),
      );
    }
  });

  it('walks the order field deep into its ties, a multi-valued field, either direction, either plan', async () => {
    // 600 entries, 7 order values (long runs of ties), a multi-valued order field (an entry met twice in
    // the walk), a filter dropping every third: pages deep in the order, through ties ordered by the next key.
    const docs = Array.from({ length: 600 }, (_, i) => ({
      id: `users/${String(i).padStart(3, '0')}`,
      Rank: [i % 7, (i * 3) % 7],
      Name: `n${i % 11}`,
      Keep: i % 3 !== 0,
    }));
    await db.insertMany(
      docs.map((d) => ({
        Id: d.id,
        Document: { Rank: d.Rank, Name: d.Name, Keep: d.Keep, '@metadata': { '@collection': 'Users' } },
      })),
    );
    indexer.put({
      Name: 'Users/ByRank',
      Maps: [{ Collection: 'Users', Fields: { Rank: 'Rank', Name: 'Name', Keep: 'Keep' } }],
    });
    indexer.runUntilIdle();
    for (const descending of [true, false]) {
      // An entry sorts by the first of its ranks the walk meets: its highest descending, its lowest ascending.
      const kept = docs
        .filter((d) => d.Keep)
        .map((d) => ({ ...d, first: descending ? Math.max(...d.Rank) : Math.min(...d.Rank) }));
      const sign = descending ? -1 : 1;
      kept.sort((a, b) => sign * (a.first - b.first) || (a.Name < b.Name ? -1 : a.Name > b.Name ? 1 : 0));
      const key = (d: { first: number; Name: string } | undefined) => `${d?.first}:${d?.Name}`;
      for (const matchSets of ['always', 'never'] as const) {
        const r = reader('Users/ByRank', { matchSets });
        for (const [skip, take] of [
          [0, 5],
          [60, 30],
          [170, 30],
        ] as const) {
          const page = r.run({
            where: { kind: 'compare', field: 'Keep', op: '=', value: true },
            orderBy: [
              { kind: 'field', field: 'Rank', descending },
              { kind: 'field', field: 'Name', descending: false },
            ],
            skip,
            take,
          });
          expect(page.total).toBe(400);
          expect(page.plan.Children?.[1]?.Operation).toBe('OrderedTermWalk');
          const got = page.entries.map((e) => key(kept.find((d) => d.id === e.docId)));
          expect(got).toEqual(kept.slice(skip, skip + take).map(key));
          expect(new Set(page.entries.map((e) => e.docId)).size).toBe(page.entries.length);
        }
      }
    }
  });

  it('sorts few matches over a kept order as SQL sorts them: null terms, ties, both directions', async () => {
    // 6 matches per tag: a page of 20 is a sort, over the kept order of Rank (bitmaps always; bitmaps once
    // enough sorting was seen, from the third run of a query) or in SQL (never). A page of 3 is a walk.
    // The next key is unique: entries tied on every key may come in either order (walk or sort). Its first
    // character orders differently by UTF-16 unit and by UTF-8 byte (SQLite's) for U+FF21 against U+1F600.
    const docs = Array.from({ length: 600 }, (_, i) => ({
      Id: `users/${String(i).padStart(3, '0')}`,
      Document: {
        ...(i % 10 === 0 ? {} : { Rank: [i % 7, (i * 3) % 7] }),
        Name: `${['n', '\uFF21', '\u{1F600}'][i % 3]}${String((i * 7919) % 600).padStart(3, '0')}`,
        Tag: `g${i % 100}`,
        '@metadata': { '@collection': 'Users' },
      },
    }));
    await db.insertMany(docs);
    indexer.put({
      Name: 'Users/ByTag',
      Maps: [{ Collection: 'Users', Fields: { Rank: 'Rank', Name: 'Name', Tag: 'Tag' } }],
    });
    indexer.runUntilIdle();
    const [always, auto, never] = (['always', 'auto', 'never'] as const).map((matchSets) =>
      reader('Users/ByTag', { matchSets }),
    );
    const query = (tag: number, descending: boolean, skip: number, take: number): IndexQuery => ({
      where: { kind: 'compare', field: 'Tag', op: '=', value: `g${tag}` },
      orderBy: [
        { kind: 'field', field: 'Rank', descending },
        { kind: 'field', field: 'Name', descending: !descending },
      ],
      skip,
      take,
    });
    const ids = (r: IndexReader | undefined, q: IndexQuery) => r!.run(q).entries.map((e) => e.docId);
    for (let tag = 0; tag < 100; tag += 7) {
      for (const descending of [true, false]) {
        for (const [skip, take] of [
          [0, 3],
          [2, 20],
          [0, 20],
        ] as const) {
          const q = query(tag, descending, skip, take);
          const expected = ids(never, q);
          expect(ids(always, q)).toEqual(expected);
          for (let run = 0; run < 3; run++) expect(ids(auto, q)).toEqual(expected);
        }
      }
    }
    const plan = (r: IndexReader | undefined) => r!.run(query(1, true, 0, 20)).plan.Children?.[1]?.Details;
    expect(plan(always)).toMatch(/kept order of the first key/);
    expect(plan(auto)).toMatch(/kept order of the first key/);
    expect(plan(never)).toMatch(/sorted by SQLite/);
  });

  it('answers like a reference evaluation on generated data (property)', async () => {
    const names = ['ann', 'bob', 'cy', 'dee', 'Ed'];
    const docs = Array.from({ length: 120 }, (_, i) => ({
      id: `users/${i}`,
      Name: names[i % names.length]!,
      Age: (i * 37) % 90,
      Tags: [`t${i % 4}`, `t${i % 6}`],
      Score: i % 9 === 0 ? null : (i * 13) % 50,
    }));
    for (const d of docs)
      await put(d.id, 'Users', { Name: d.Name, Age: d.Age, Tags: d.Tags, Score: d.Score });
    indexer.put({
      Name: 'Users/All',
      Maps: [{ Collection: 'Users', Fields: { Name: 'Name', Age: 'Age', Tags: 'Tags', Score: 'Score' } }],
    });
    indexer.runUntilIdle();
    // Each plan on its own (bitmaps of every leaf, SQL probes only) and the choice between them.
    const plans = (['auto', 'always', 'never'] as const).map((matchSets) =>
      reader('Users/All', { matchSets }),
    );

    const value = (field: string): fc.Arbitrary<Scalar> =>
      field === 'Name'
        ? fc.constantFrom(...names, 'ANN', 'zed')
        : field === 'Tags'
          ? fc.constantFrom('t0', 't1', 't3', 't5', 'T2')
          : fc.integer({ min: -5, max: 95 });
    const field = fc.constantFrom('Name', 'Age', 'Tags', 'Score');
    const leaf: fc.Arbitrary<Predicate> = field.chain((f) =>
      fc.oneof(
        value(f).chain((v) =>
          fc.constantFrom('=', '!=', '<', '<=', '>', '>=').map((op) => ({
            kind: 'compare' as const,
            field: f,
            op: op as '=',
            value: v,
          })),
        ),
        fc
          .tuple(value(f), value(f))
          .map(([low, high]) => ({ kind: 'between' as const, field: f, low, high })),
        fc
          .tuple(fc.array(value(f), { minLength: 1, maxLength: 3 }), fc.boolean())
          .map(([values, all]) => ({ kind: 'in' as const, field: f, values, all })),
        fc.constant({ kind: 'exists' as const, field: f }),
        ...(f === 'Name'
          ? [
              fc
                .constantFrom('a', 'B', 'e', '')
                .map((value) => ({ kind: 'startsWith' as const, field: f, value })),
              fc.constantFrom('n', 'E', 'y').map((value) => ({ kind: 'endsWith' as const, field: f, value })),
            ]
          : []),
      ),
    );
    const predicate = fc.letrec<{ p: Predicate }>((tie) => ({
      p: fc.oneof(
        { depthSize: 'small', withCrossShrink: true },
        leaf,
        fc
          .array(tie('p'), { minLength: 1, maxLength: 3 })
          .map((children) => ({ kind: 'and' as const, children })),
        fc
          .array(tie('p'), { minLength: 1, maxLength: 3 })
          .map((children) => ({ kind: 'or' as const, children })),
        tie('p').map((child) => ({ kind: 'not' as const, child })),
      ),
    })).p;

    fc.assert(
      fc.property(predicate, fc.constantFrom(...plans), (p, r) => {
        const expected = docs
          .filter((d) => evaluate(p, d as unknown as Record<string, unknown>))
          .map((d) => d.id)
          .sort();
        const page = r.run(query(p));
        expect(page.entries.map((e) => e.docId).sort()).toEqual(expected);
        expect(page.total).toBe(expected.length);
        // A small ordered page takes other plans (an ordered walk of the order field, or a top-N sort):
        // it must hold the oldest matches, and only matches.
        const top = r.run(
          query(p, { orderBy: [{ kind: 'field', field: 'Age', descending: true }], take: 3 }),
        );
        const ageOf = (id: string | null) => docs.find((d) => d.id === id)?.Age;
        const wantedAges = expected
          .map(ageOf)
          .sort((a, b) => (b ?? 0) - (a ?? 0))
          .slice(0, 3);
        expect(top.entries.every((e) => expected.includes(e.docId ?? ''))).toBe(true);
        expect(top.entries.map((e) => ageOf(e.docId))).toEqual(wantedAges);
      }),
      { numRuns: 450 },
    );
  });
});

/** The reference: the predicate evaluated on the documents themselves, with the index's rules. */
function evaluate(p: Predicate, doc: Record<string, unknown>): boolean {
  const values = (field: string): unknown[] => {
    const v = doc[field];
    if (Array.isArray(v)) return v.length === 0 ? [null] : v;
    return [v === undefined ? null : v];
  };
  const norm = (v: unknown) => (typeof v === 'string' ? v.toLowerCase() : v);
  const kind = (v: unknown) => (typeof v === 'number' ? 0 : typeof v === 'string' ? 1 : 2);
  const cmp = (a: unknown, b: unknown): number => {
    const d = kind(a) - kind(b);
    if (d !== 0) return d;
    if (typeof a === 'number' && typeof b === 'number') return a - b;
    if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
    return 0;
  };
  switch (p.kind) {
    case 'true':
      return true;
    case 'and':
      return p.children.every((c) => evaluate(c, doc));
    case 'or':
      return p.children.some((c) => evaluate(c, doc));
    case 'not':
      return !evaluate(p.child, doc);
    case 'compare': {
      const target = norm(p.value);
      const test = (v: unknown) => {
        const c = cmp(norm(v), target);
        switch (p.op) {
          case '=':
          case '!=':
            return c === 0 && kind(norm(v)) === kind(target);
          case '<':
            return c < 0 && kind(norm(v)) === kind(target);
          case '<=':
            return c <= 0 && kind(norm(v)) === kind(target);
          case '>':
            return c > 0 && kind(norm(v)) === kind(target);
          case '>=':
            return c >= 0 && kind(norm(v)) === kind(target);
        }
      };
      const any = values(p.field).some(test);
      return p.op === '!=' ? !any : any;
    }
    case 'between':
      return values(p.field).some((v) => cmp(norm(v), norm(p.low)) >= 0 && cmp(norm(v), norm(p.high)) <= 0);
    case 'in':
      return p.all
        ? p.values.every((t) =>
            values(p.field).some((v) => cmp(norm(v), norm(t)) === 0 && kind(norm(v)) === kind(norm(t))),
          )
        : p.values.some((t) =>
            values(p.field).some((v) => cmp(norm(v), norm(t)) === 0 && kind(norm(v)) === kind(norm(t))),
          );
    case 'exists':
      return values(p.field).some((v) => v !== null);
    case 'startsWith':
      return values(p.field).some(
        (v) => typeof v === 'string' && v.toLowerCase().startsWith(p.value.toLowerCase()),
      );
    case 'endsWith':
      return values(p.field).some(
        (v) => typeof v === 'string' && v.toLowerCase().endsWith(p.value.toLowerCase()),
      );
    default:
      throw new Error(`reference has no ${p.kind}`);
  }
}
