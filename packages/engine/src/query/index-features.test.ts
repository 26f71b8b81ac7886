import path from 'node:path';
import { generatePackages } from '@rookery/datagen';
import type { IndexDefinition } from '@rookery/protocol';
import { makeTempDir } from '@rookery/testkit';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Database } from '../database.js';
import { DatabaseIndexer } from '../indexing/database-indexer.js';
import { INDEXES_DIRECTORY, indexFileName } from '../indexing/index-file.js';
import { IndexReader } from './index-reader.js';

let tmp: ReturnType<typeof makeTempDir>;
let db: Database;
let indexer: DatabaseIndexer;
const readers: IndexReader[] = [];

beforeEach(() => {
  tmp = makeTempDir();
  db = Database.create(tmp.dir, 'games');
  indexer = new DatabaseIndexer(tmp.dir, { batchSize: 50 });
});
afterEach(async () => {
  for (const r of readers.splice(0)) r.close();
  indexer.close();
  await db.close();
  tmp.cleanup();
});

function define(definition: IndexDefinition): IndexReader {
  indexer.put(definition);
  indexer.runUntilIdle();
  const r = new IndexReader(path.join(tmp.dir, INDEXES_DIRECTORY, indexFileName(definition.Name)));
  readers.push(r);
  return r;
}

const doc = (collection: string, body: Record<string, unknown>) => ({
  ...body,
  '@metadata': { '@collection': collection },
});

describe('map/reduce', () => {
  it('equals a straightforward in-memory computation after random inserts, updates and deletes (property)', async () => {
    const r = define({
      Name: 'Players/ByTeam',
      Maps: [{ Collection: 'Players', Fields: { Team: 'Team', Score: 'Score', Name: 'Name' } }],
      Reduce: {
        GroupBy: ['Team'],
        Aggregate: {
          Total: { Sum: 'Score' },
          Count: { Count: true },
          Best: { Max: 'Score' },
          Names: { Distinct: 'Name' },
        },
      },
    });
    const operation = fc.oneof(
      fc.record({
        kind: fc.constant('put' as const),
        id: fc.integer({ min: 0, max: 30 }),
        team: fc.constantFrom('red', 'blue', 'green', 'gold'),
        score: fc.integer({ min: 0, max: 100 }),
        name: fc.constantFrom('ann', 'bo', 'cy'),
      }),
      fc.record({ kind: fc.constant('delete' as const), id: fc.integer({ min: 0, max: 30 }) }),
    );
    const model = new Map<number, { team: string; score: number; name: string }>();
    await fc.assert(
      fc.asyncProperty(fc.array(operation, { minLength: 1, maxLength: 25 }), async (ops) => {
        for (const op of ops) {
          if (op.kind === 'put') {
            model.set(op.id, { team: op.team, score: op.score, name: op.name });
            await db.batch([
              {
                Type: 'PUT',
                Id: `players/${op.id}`,
                Document: doc('Players', { Team: op.team, Score: op.score, Name: op.name }),
              },
            ]);
          } else {
            model.delete(op.id);
            await db.batch([{ Type: 'DELETE', Id: `players/${op.id}` }]);
          }
        }
        indexer.runUntilIdle();
        const expected = new Map<
          string,
          { Total: number; Count: number; Best: number; Names: Set<string> }
        >();
        for (const p of model.values()) {
          const g = expected.get(p.team) ?? { Total: 0, Count: 0, Best: -1, Names: new Set<string>() };
          g.Total += p.score;
          g.Count += 1;
          g.Best = Math.max(g.Best, p.score);
          g.Names.add(p.name);
          expected.set(p.team, g);
        }
        const page = r.run({
          where: null,
          orderBy: [{ kind: 'field', field: 'Team', descending: false }],
          skip: 0,
          take: 100,
        });
        const got = page.entries.map((e) => JSON.parse(e.stored ?? '{}') as Record<string, unknown>);
        expect(got.map((g) => g.Team)).toEqual([...expected.keys()].sort());
        for (const g of got) {
          const want = expected.get(g.Team as string)!;
          expect(g).toMatchObject({ Total: want.Total, Count: want.Count, Best: want.Best });
          expect(new Set(g.Names as string[])).toEqual(want.Names);
        }
        expect(page.total).toBe(expected.size);
      }),
      { numRuns: 40 },
    );
  });

  it('answers the Players/Characters multi-map/reduce question', async () => {
    const r = define({
      Name: 'Players/WithCharacters',
      Maps: [
        { Collection: 'Players', Fields: { Player: 'id()', Age: 'Age', MaxLevel: 'None' } },
        { Collection: 'Characters', Fields: { Player: 'Player', Age: 'None', MaxLevel: 'Level' } },
      ],
      Reduce: { GroupBy: ['Player'], Aggregate: { Age: { Max: 'Age' }, MaxLevel: { Max: 'MaxLevel' } } },
    });
    await db.batch([
      { Type: 'PUT', Id: 'players/bella', Document: doc('Players', { Age: 15 }) },
      { Type: 'PUT', Id: 'players/carl', Document: doc('Players', { Age: 40 }) },
      { Type: 'PUT', Id: 'players/dina', Document: doc('Players', { Age: 12 }) },
      {
        Type: 'PUT',
        Id: 'characters/1',
        Document: doc('Characters', { Player: 'players/bella', Level: 45 }),
      },
      { Type: 'PUT', Id: 'characters/2', Document: doc('Characters', { Player: 'players/carl', Level: 60 }) },
      { Type: 'PUT', Id: 'characters/3', Document: doc('Characters', { Player: 'players/dina', Level: 12 }) },
    ]);
    indexer.runUntilIdle();
    const page = r.run({
      where: {
        kind: 'and',
        children: [
          { kind: 'compare', field: 'Age', op: '<', value: 18 },
          { kind: 'compare', field: 'MaxLevel', op: '>', value: 40 },
        ],
      },
      orderBy: [],
      skip: 0,
      take: 10,
    });
    expect(page.entries.map((e) => JSON.parse(e.stored!).Player)).toEqual(['players/bella']);
  });
});

describe('full text, facets, suggestions, spatial', () => {
  const packages = [
    { id: 'packages/jquery', Title: 'jQuery', Tags: ['jquery', 'javascript', 'dom'], Downloads: 900 },
    { id: 'packages/jquery-ui', Title: 'jQuery UI widgets', Tags: ['jquery', 'ui'], Downloads: 500 },
    { id: 'packages/yui', Title: 'YUI grid and widgets', Tags: ['yui', 'grid'], Downloads: 40 },
    { id: 'packages/ravendb', Title: 'RavenDB client', Tags: ['ravendb', 'database'], Downloads: 300 },
    { id: 'packages/debugger', Title: 'Debug helpers for grid', Tags: ['debug', 'grid'], Downloads: 7 },
  ];
  const searchIndex: IndexDefinition = {
    Name: 'Packages/Search',
    Maps: [
      { Collection: 'Packages', Fields: { Query: ['Title', 'Tags'], Tags: 'Tags', Downloads: 'Downloads' } },
    ],
    Fields: { Query: { Indexing: 'Search', Suggestions: true } },
  };

  beforeEach(async () => {
    await db.batch(
      packages.map(({ id, ...body }) => ({ Type: 'PUT' as const, Id: id, Document: doc('Packages', body) })),
    );
  });

  it('searches with and/or, prefixes, and ranks by score', () => {
    const r = define(searchIndex);
    const ids = (terms: string, operator: 'and' | 'or') =>
      r
        .run({ where: { kind: 'search', field: 'Query', terms, operator }, orderBy: [], skip: 0, take: 10 })
        .entries.map((e) => e.docId)
        .sort();
    expect(ids('grid', 'or')).toEqual(['packages/debugger', 'packages/yui']);
    expect(ids('grid widgets', 'and')).toEqual(['packages/yui']);
    expect(ids('grid widgets', 'or')).toEqual(['packages/debugger', 'packages/jquery-ui', 'packages/yui']);
    expect(ids('jq*', 'or')).toEqual(['packages/jquery', 'packages/jquery-ui']);
    expect(ids('"; DROP TABLE', 'or')).toEqual([]);
    const ordered = r.run({
      where: { kind: 'search', field: 'Query', terms: 'grid', operator: 'or' },
      orderBy: [{ kind: 'field', field: 'Downloads', descending: true }],
      skip: 0,
      take: 10,
    });
    expect(ordered.entries.map((e) => e.docId)).toEqual(['packages/yui', 'packages/debugger']);
    expect(ordered.total).toBe(2);
  });

  it('counts facets over the whole dataset and over a match set, and range facets', () => {
    const r = define(searchIndex);
    const [tags] = r.facets(null, [
      { kind: 'terms', field: 'Tags', name: 'Tags', top: 2, order: 'countDesc' },
    ]);
    expect(tags?.Values).toEqual([
      { Range: 'grid', Count: 2 },
      { Range: 'jquery', Count: 2 },
    ]);
    const [within, ranges] = r.facets({ kind: 'search', field: 'Query', terms: 'grid', operator: 'or' }, [
      { kind: 'terms', field: 'Tags', name: 'Tags', top: 10, order: 'termAsc' },
      {
        kind: 'ranges',
        name: 'Downloads',
        ranges: [
          { label: 'Downloads < 10', predicate: { kind: 'compare', field: 'Downloads', op: '<', value: 10 } },
          {
            label: 'Downloads >= 10',
            predicate: { kind: 'compare', field: 'Downloads', op: '>=', value: 10 },
          },
        ],
      },
    ]);
    expect(within?.Values).toEqual([
      { Range: 'debug', Count: 1 },
      { Range: 'grid', Count: 2 },
      { Range: 'yui', Count: 1 },
    ]);
    expect(ranges?.Values).toEqual([
      { Range: 'Downloads < 10', Count: 1 },
      { Range: 'Downloads >= 10', Count: 1 },
    ]);
  });

  it('suggests indexed terms for a misspelling', () => {
    const r = define(searchIndex);
    expect(r.suggest('Query', 'jquryt', 3)[0]).toBe('jquery');
    expect(r.suggest('Tags', 'ravndb', 3)).toEqual(['ravendb']);
    expect(r.suggest('Query', 'zzzzzz', 3)).toEqual([]);
  });

  it('finds points within a circle and orders by distance', async () => {
    await db.batch([
      { Type: 'PUT', Id: 'places/reims', Document: doc('Places', { Lat: 49.2583, Lng: 4.0317 }) },
      { Type: 'PUT', Id: 'places/epernay', Document: doc('Places', { Lat: 49.0404, Lng: 3.9597 }) },
      { Type: 'PUT', Id: 'places/paris', Document: doc('Places', { Lat: 48.8566, Lng: 2.3522 }) },
    ]);
    const r = define({
      Name: 'Places/ByLocation',
      Maps: [{ Collection: 'Places', Fields: { Location: { Lat: 'Lat', Lng: 'Lng' } } }],
    });
    const page = r.run({
      where: { kind: 'within', field: 'Location', lat: 49.255, lng: 4.154, radiusKm: 40 },
      orderBy: [{ kind: 'distance', field: 'Location', lat: 49.255, lng: 4.154, descending: false }],
      skip: 0,
      take: 10,
    });
    expect(page.entries.map((e) => e.docId)).toEqual(['places/reims', 'places/epernay']);
    expect(page.total).toBe(2);
  });
});

describe('JavaScript indexes', () => {
  it('maps through the sandbox, and a failing document is reported, not dropped silently', async () => {
    await db.batch([
      { Type: 'PUT', Id: 'users/1', Document: doc('Users', { Name: 'Ada', Langs: ['en', 'fr'] }) },
      { Type: 'PUT', Id: 'users/2', Document: doc('Users', { Name: 'Bob' }) },
    ]);
    const r = define({
      Name: 'Users/ByLang',
      Maps: ["map('Users', u => u.Langs.map(l => ({ Lang: l, Name: u.Name })))"],
    });
    const page = r.run({
      where: { kind: 'compare', field: 'Lang', op: '=', value: 'fr' },
      orderBy: [],
      skip: 0,
      take: 10,
    });
    expect(page.entries.map((e) => e.docId)).toEqual(['users/1']);
    const stats = indexer.stats('Users/ByLang');
    expect(stats?.ErrorsCount).toBe(1);
    expect(stats?.Errors[0]).toMatchObject({ Document: 'users/2' });
    expect(stats?.Errors[0]?.Error).toMatch(/map/i);
  });

  it('survives a definition that loops forever: the document is reported and the index moves on', async () => {
    await db.batch([
      { Type: 'PUT', Id: 'users/1', Document: doc('Users', { Name: 'Ada' }) },
      { Type: 'PUT', Id: 'users/2', Document: doc('Users', { Name: 'loop' }) },
    ]);
    const r = define({
      Name: 'Users/Loopy',
      Maps: ["map('Users', u => { while (u.Name === 'loop') {} return { Name: u.Name }; })"],
    });
    expect(r.run({ where: null, orderBy: [], skip: 0, take: 10 }).entries.map((e) => e.docId)).toEqual([
      'users/1',
    ]);
    expect(indexer.stats('Users/Loopy')?.Errors[0]?.Error).toMatch(/time limit/i);
    expect(indexer.stats('Users/Loopy')?.IsStale).toBe(false);
  });

  it('recovers from a reduce that hit the memory limit once the group that caused it is gone', async () => {
    // Time limits far above what reaching 32 MB takes, so a starved machine still names memory, not time.
    const limited = new DatabaseIndexer(tmp.dir, {
      sandbox: { memoryMb: 32, timeoutMs: 10_000, documentTimeoutMs: 10_000, batchTimeMs: 10_000 },
    });
    try {
      await db.batch([
        { Type: 'PUT', Id: 'users/1', Document: doc('Users', { Team: 'red' }) },
        { Type: 'PUT', Id: 'users/2', Document: doc('Users', { Team: 'boom' }) },
      ]);
      limited.put({
        Name: 'Users/Teams',
        Maps: ["map('Users', u => ({ Team: u.Team, Count: 1 }))"],
        Reduce:
          'groupBy(x => x.Team).aggregate(g => { if (g.key === "boom") { const a = []; ' +
          'while (true) a.push(new Array(1e6).fill(1)); } return { Team: g.key, Count: g.values.length }; })',
      });
      // Until idle, not one turn: a reduce that takes long to die may cut the batch (ReduceBudgetExceeded).
      limited.runUntilIdle();
      expect(limited.stats('Users/Teams')?.Errors[0]?.Error).toMatch(/memory limit/i);
      await db.batch([{ Type: 'DELETE', Id: 'users/2' }]);
      limited.runUntilIdle();
      const stats = limited.stats('Users/Teams')!;
      expect(stats).toMatchObject({ IsStale: false, EntriesCount: 1 });
    } finally {
      limited.close();
    }
  });

  it('refuses a definition that does not compile and keeps the old one', () => {
    define({ Name: 'Users/Js', Maps: ["map('Users', u => ({ Name: u.Name }))"] });
    expect(() => indexer.put({ Name: 'Users/Js', Maps: ["map('Users', u => ({ Name: u.Name )"] })).toThrow(
      /does not compile/,
    );
    expect(indexer.names).toEqual(['Users/Js']);
  });
});

describe('on NuGet-like data', () => {
  it('suggests jquery for jquryt, and facets and searches agree with the documents', async () => {
    const docs = [...generatePackages({ seed: 7, packageVersions: 3_000 })];
    for (let i = 0; i < docs.length; i += 500) {
      await db.insertMany(
        docs.slice(i, i + 500).map(({ id, ...body }) => ({ Id: id, Document: body as never })),
      );
    }
    const r = define({
      Name: 'Packages/Query',
      Maps: [{ Collection: 'Packages', Fields: { Query: ['Tags', 'Title', 'PackageId'], Tags: 'Tags' } }],
      Fields: { Query: { Indexing: 'Search', Suggestions: true } },
    });
    expect(r.suggest('Query', 'jquryt', 5)[0]).toBe('jquery');
    const [tags] = r.facets(null, [
      { kind: 'terms', field: 'Tags', name: 'Tags', top: 3, order: 'countDesc' },
    ]);
    for (const value of tags?.Values ?? []) {
      const expected = docs.filter((d) => d.Tags.some((t) => t.toLowerCase() === value.Range)).length;
      expect(value.Count).toBe(expected);
    }
    const page = r.run({
      where: { kind: 'search', field: 'Query', terms: 'jquery', operator: 'or' },
      orderBy: [],
      skip: 0,
      take: 10_000,
    });
    const tokens = (d: (typeof docs)[number]) =>
      [...d.Tags, d.Title, d.PackageId]
        .join(' ')
        .toLowerCase()
        .split(/[^\p{L}\p{N}]+/u);
    expect(page.total).toBe(docs.filter((d) => tokens(d).includes('jquery')).length);
  });
});
