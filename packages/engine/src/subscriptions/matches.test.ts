import path from 'node:path';
import type { QueryParameters } from '@rookery/protocol';
import { makeTempDir } from '@rookery/testkit';
import fc from 'fast-check';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { Database } from '../database.js';
import { DatabaseIndexer } from '../indexing/database-indexer.js';
import { INDEXES_DIRECTORY, indexFileName } from '../indexing/index-file.js';
import { IndexReader } from '../query/index-reader.js';
import type { Predicate } from '../query/plan.js';
import { matches } from './matches.js';
import { compileSubscriptionQuery } from './query.js';

// The in-memory evaluator must agree with a query through an automatic index on every document: the same
// `where` gives the same documents whether a subscription or a query reads them.
let tmp: ReturnType<typeof makeTempDir>;
let db: Database;
let indexer: DatabaseIndexer;
let reader: IndexReader;
const docs = new Map<string, Record<string, unknown>>();

const word = fc.constantFrom('ada', 'Ada', 'ADA', 'alan', 'Bob', 'zoë', 'żółw', '🐢', '', '10', 'true');
const scalar = fc.oneof(
  word,
  fc.integer({ min: -3, max: 40 }),
  fc.constantFrom(0.5, -1.25, 1e6),
  fc.boolean(),
  fc.constant(null),
);
const value = fc.oneof({ weight: 4, arbitrary: scalar }, fc.array(scalar, { maxLength: 3 }));
const documentArb = fc.record(
  {
    Name: value,
    Age: value,
    Active: value,
    Tags: fc.array(word, { maxLength: 3 }),
    Address: fc.record({ City: value }, { requiredKeys: [] }),
    Lines: fc.array(fc.record({ Product: value }, { requiredKeys: [] }), { maxLength: 3 }),
  },
  { requiredKeys: [] },
);

const fields = ['Name', 'Age', 'Active', 'Tags', 'Address.City', 'Lines[].Product', 'id()'];
const literal = fc.oneof(
  word.map((w) => `'${w}'`),
  fc.integer({ min: -3, max: 40 }).map(String),
  fc.constantFrom('0.5', 'true', 'false', 'null', "'users/3'", "'USERS/1'"),
);
const leaf = fc.oneof(
  fc
    .tuple(fc.constantFrom(...fields), fc.constantFrom('=', '!=', '<', '<=', '>', '>='), literal)
    .map(([f, op, v]) => `${f} ${op} ${v}`),
  fc.tuple(fc.constantFrom(...fields), literal, literal).map(([f, a, b]) => `${f} between ${a} and ${b}`),
  fc
    .tuple(fc.constantFrom(...fields), fc.boolean(), fc.array(literal, { minLength: 1, maxLength: 3 }))
    .map(([f, all, vs]) => `${f} ${all ? 'all in' : 'in'} (${vs.join(', ')})`),
  fc
    .tuple(fc.constantFrom('startsWith', 'endsWith'), fc.constantFrom(...fields), word)
    .map(([fn, f, w]) => `${fn}(${f}, '${w.slice(0, 2)}')`),
  fc.constantFrom(...fields.filter((f) => f !== 'id()')).map((f) => `exists(${f})`),
);
const { condition } = fc.letrec<{ condition: string }>((tie) => ({
  condition: fc.oneof(
    { depthSize: 'small', withCrossShrink: true },
    leaf,
    fc
      .tuple(tie('condition'), fc.constantFrom('and', 'or'), tie('condition'))
      .map(([a, op, b]) => `(${a}) ${op} (${b})`),
    tie('condition').map((c) => `not (${c})`),
  ),
}));

beforeAll(async () => {
  tmp = makeTempDir();
  db = Database.create(tmp.dir, 'people');
  const generated = fc.sample(documentArb, { numRuns: 120, seed: 7 });
  await db.batch(
    generated.map((body, i) => ({
      Type: 'PUT' as const,
      Id: `users/${i}`,
      Document: { ...body, '@metadata': { '@collection': 'Users' } },
    })),
  );
  for (let i = 0; i < generated.length; i++) {
    docs.set(`users/${i}`, JSON.parse(db.get(`users/${i}`)!.json) as Record<string, unknown>);
  }
  const definition = {
    Name: 'Users/All',
    Maps: [
      {
        Collection: 'Users',
        Fields: Object.fromEntries(fields.map((f) => [f === 'id()' ? '@id' : f.replace('[]', ''), f])),
      },
    ],
  };
  indexer = new DatabaseIndexer(tmp.dir, { batchSize: 500 });
  indexer.put(definition);
  indexer.runUntilIdle();
  reader = new IndexReader(path.join(tmp.dir, INDEXES_DIRECTORY, indexFileName(definition.Name)));
});
afterAll(async () => {
  reader.close();
  indexer.close();
  await db.close();
  tmp.cleanup();
});

/** The index's field names for a query's paths: `Lines[].Product` is indexed as `Lines.Product`. */
const asIndexed = (where: string) => where.replaceAll('Lines[].Product', 'Lines.Product');

/** The same condition with every written value (text, number, boolean, null) passed as a `$parameter`. */
function parametrized(where: string): { text: string; parameters: QueryParameters } {
  const parameters: QueryParameters = {};
  const text = where.replace(/'[^']*'|-?\d+(?:\.\d+)?|\b(?:true|false|null)\b/g, (literal) => {
    const name = `p${Object.keys(parameters).length}`;
    parameters[name] = literal.startsWith("'") ? literal.slice(1, -1) : JSON.parse(literal);
    return `$${name}`;
  });
  return { text, parameters };
}

const matching = (where: Predicate) =>
  [...docs]
    .filter(([, doc]) => matches(where, doc))
    .map(([id]) => id)
    .sort();

describe('subscription where clauses', () => {
  it('match exactly the documents a query through an index matches (property)', () => {
    fc.assert(
      fc.property(condition, (where) => {
        const compiled = compileSubscriptionQuery(`from Users where ${asIndexed(where)}`).where!;
        const expected = reader
          .run({ where: compiled, orderBy: [], skip: 0, take: 10_000 })
          .entries.map((e) => e.docId)
          .sort();
        expect(matching(compiled), where).toEqual(expected);
      }),
      { numRuns: 300 },
    );
  });

  it('read $parameters as the values a query reads them as: as if written into the query (property)', () => {
    fc.assert(
      fc.property(condition, (where) => {
        const written = compileSubscriptionQuery(`from Users where ${asIndexed(where)}`).where!;
        const { text, parameters } = parametrized(asIndexed(where));
        expect(text).not.toMatch(/'/);
        const passed = compileSubscriptionQuery(`from Users where ${text}`, parameters).where!;
        expect(passed, text).toEqual(written);
        const expected = reader
          .run({ where: written, orderBy: [], skip: 0, take: 10_000 })
          .entries.map((e) => e.docId)
          .sort();
        expect(matching(passed), text).toEqual(expected);
      }),
      { numRuns: 150 },
    );
  });

  it('read nested paths, arrays, ids and case-insensitive text', () => {
    const doc = {
      Name: 'Ada',
      Tags: ['Math', 'Engines'],
      Address: { City: 'London' },
      Lines: [{ Product: 'p/1' }, { Product: 'p/2' }],
      '@metadata': { '@id': 'users/1', '@collection': 'Users' },
    };
    const check = (where: string) =>
      matches(compileSubscriptionQuery(`from Users as u where ${where}`).where!, doc);
    expect(check("u.Name = 'ADA'")).toBe(true);
    expect(check("Address.City in ('paris', 'london')")).toBe(true);
    expect(check("Tags all in ('math', 'engines')")).toBe(true);
    expect(check("Tags all in ('math', 'poetry')")).toBe(false);
    expect(check("Lines[].Product = 'P/2'")).toBe(true);
    expect(check("id() = 'Users/1'")).toBe(true);
    expect(check("startsWith(Name, 'a') and endsWith(Address.City, 'DON')")).toBe(true);
    expect(check('exists(Phone)')).toBe(false);
    expect(check("not (Name = 'ada' or Name = 'bob')")).toBe(false);
    expect(check("Phone = null and Name != 'bob'")).toBe(true);
    const withParameters = (where: string, parameters: QueryParameters) =>
      matches(compileSubscriptionQuery(`from Users where ${where}`, parameters).where!, doc);
    expect(withParameters('Tags all in ($tags)', { tags: ['MATH', 'engines'] })).toBe(true);
    expect(withParameters('Tags all in ($tags)', { tags: ['math', 'poetry'] })).toBe(false);
    expect(withParameters('Phone = $none and startsWith(Name, $prefix)', { none: null, prefix: 'A' })).toBe(
      true,
    );
  });
});
