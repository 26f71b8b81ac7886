// Attacks on suggestions ("did you mean"), end to end through the real gateway over mutual TLS, a real
// host and real tenant and indexer processes (README.md beside this file). Suggesting ranks terms by an
// edit distance whose table is as wide as the searched term: a term of megabytes cost the tenant's
// event loop hundreds of milliseconds each, for an answer that could only be empty. Now a term longer
// than the engine's limit is refused up front with a 400 that names it, and odd text (lone
// surrogates, astral characters) is answered, never a 500.
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Client, type Reply, type Stack, startStack } from '../test-fixtures/stack.js';

/** The engine's limit (MAX_SUGGEST_TERM_LENGTH in packages/engine/src/query/suggestions.ts). */
const MAX_TERM = 1_024;
/** Sent at once: each would have held the tenant's event loop. */
const CROWD = 20;

let stack: Stack;
let admin: Client;

beforeAll(async () => {
  stack = await startStack();
  admin = await stack.tenantAdmin({ id: 'acme', name: 'Acme' }, 'acme-admin');
  expect((await admin.call('PUT', '/admin/databases', { Name: 'shop' })).status).toBe(201);
  const index = await admin.call('PUT', '/databases/shop/indexes', {
    Name: 'Packages/Search',
    Maps: [{ Collection: 'Packages', Fields: { Query: ['Title', 'Tags'], Tags: 'Tags' } }],
    Fields: { Query: { Indexing: 'Search', Suggestions: true }, Tags: { Suggestions: true } },
  });
  expect(index.status).toBe(201);
  for (const [id, Title, Tags] of [
    ['packages/1', 'jQuery', ['jquery', 'javascript']],
    ['packages/2', 'Json.NET', ['json', 'serialization']],
  ] as const) {
    const put = await admin.call('PUT', `/databases/shop/docs?id=${id}`, {
      Title,
      Tags,
      '@metadata': { '@collection': 'Packages' },
    });
    expect(put.status).toBe(201);
  }
}, 120_000);
afterAll(async () => {
  await stack?.close();
});

const suggest = (field: string, term: string): Promise<Reply> =>
  admin.call('POST', '/databases/shop/queries', {
    Query: `from index 'Packages/Search' select suggest(${field}, $term)`,
    QueryParameters: { term },
    WaitForNonStaleResults: true,
  });

describe('suggestions under attack', () => {
  it('refuses a 1 MB term with a 400 naming the limit, on a field with the structure and one without', async () => {
    for (const field of ['Query', 'Title']) {
      const reply = await suggest(field, 'jquery'.repeat(175_000));
      expect({ status: reply.status, code: reply.json.code }).toEqual({ status: 400, code: 'InvalidQuery' });
      expect(reply.json.detail).toMatch(`1,050,000 characters; at most ${MAX_TERM.toLocaleString('en')}`);
    }
  });

  it('refuses a crowd of them at once, then answers an ordinary suggestion', async () => {
    const replies = await Promise.all(
      Array.from({ length: CROWD }, () => suggest('Query', 'x'.repeat(MAX_TERM + 1))),
    );
    expect(replies.map((r) => `${r.status} ${String(r.json.code)}`)).toEqual(
      Array.from({ length: CROWD }, () => '400 InvalidQuery'),
    );
    const ordinary = await suggest('Query', 'jquryt');
    expect(ordinary.status).toBe(200);
    expect(ordinary.json.Results).toEqual([{ Name: 'Query', Suggestions: ['jquery'] }]);
  });

  it('refuses a PageSize over 400 or options that are not an object, and honours one within it', async () => {
    // Parameters are JSON scalars on the wire (QueryParametersSchema): options come as JSON text.
    const withOptions = (options: unknown) =>
      admin.call('POST', '/databases/shop/queries', {
        Query: `from index 'Packages/Search' select suggest(Query, 'jsom', $o)`,
        QueryParameters: { o: options },
        WaitForNonStaleResults: true,
      });
    for (const options of [
      '{"PageSize": 1000000000}',
      '{"PageSize": 401}',
      '{"PageSize": -1}',
      '{"PageSize": "all"}',
      '[1]',
      '{',
    ]) {
      const reply = await withOptions(options);
      expect({ status: reply.status, code: reply.json.code }, options).toEqual({
        status: 400,
        code: 'InvalidQuery',
      });
      expect(reply.json.detail).toMatch('PageSize a whole number from 1 to 400');
    }
    // An object where the wire takes scalars is refused at the boundary, before the engine.
    expect((await withOptions({ PageSize: 1_000_000_000 })).status).toBe(400);
    const one = await withOptions('{"PageSize": 1}');
    expect(one.status).toBe(200);
    expect((one.json.Results as { Suggestions: string[] }[])[0]?.Suggestions).toHaveLength(1);
  });

  it('answers lone surrogates, astral characters and a term at the limit without a 500', async () => {
    for (const term of ['\uD800', 'jqu\uDFFFery', '😀'.repeat(100), 'x'.repeat(MAX_TERM), '\u0000jquery']) {
      for (const field of ['Query', 'Tags']) {
        const reply = await suggest(field, term);
        expect(reply.status, `${field} ${JSON.stringify(term.slice(0, 12))}`).toBe(200);
        expect(Array.isArray((reply.json.Results as { Suggestions: unknown }[])[0]?.Suggestions)).toBe(true);
      }
    }
  });
});
