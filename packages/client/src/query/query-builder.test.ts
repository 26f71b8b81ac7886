import { describe, expect, it } from 'vitest';
import { RookeryClientError } from '../errors.js';
import { facet, range, rangeFacet } from './facets.js';
import { QueryBuilder } from './query-builder.js';

// The builder is tested through the RQL it emits and the parameters it sends; the integration tests
// check that the server accepts the same text.
const users = () => new QueryBuilder({ collection: 'Users' });

describe('QueryBuilder', () => {
  it('sends every value as a parameter and joins conditions with and', () => {
    const q = users().whereEquals('Name', "O'Brien").whereGreaterThan('Age', 30);
    expect(q.toString()).toBe('from Users\nwhere Name = $p0 and Age > $p1');
    expect(q.toRequest().QueryParameters).toEqual({ p0: "O'Brien", p1: 30 });
  });

  it('emits or, not, subclauses and a leading negation the way RQL reads them', () => {
    const q = users()
      .whereEquals('City', 'London')
      .orElse()
      .openSubclause()
      .whereStartsWith('Name', 'A')
      .not.whereExists('Phone')
      .closeSubclause();
    expect(q.toString()).toBe(
      'from Users\nwhere City = $p0 or (startsWith(Name, $p1) and not exists(Phone))',
    );
    const leading = users()
      .not.whereEquals('Name', 'x')
      .andAlso()
      .not.openSubclause()
      .whereIn('Tags', ['a', 'b'])
      .closeSubclause();
    expect(leading.toString()).toBe('from Users\nwhere true and not Name = $p0 and not (Tags in ($p1))');
    expect(leading.toRequest().QueryParameters).toEqual({ p0: 'x', p1: ['a', 'b'] });
  });

  it('covers ranges, sets, text and dates', () => {
    const when = new Date('2026-01-02T03:04:05.000Z');
    const q = users()
      .whereBetween('Age', 20, 30)
      .whereNotEquals('Name', null)
      .whereLessThanOrEqual('Created', when)
      .whereGreaterThanOrEqual('Score', 1.5)
      .whereLessThan('Score', 9)
      .containsAll('Tags', ['x', 'y'])
      .whereEndsWith('Email', '@example.com')
      .search('Bio', 'red shoes', 'and');
    expect(q.toString()).toBe(
      'from Users\nwhere Age between $p0 and $p1 and Name != $p2 and Created <= $p3 and Score >= $p4 and ' +
        'Score < $p5 and Tags all in ($p6) and endsWith(Email, $p7) and search(Bio, $p8, and)',
    );
    expect(q.toRequest().QueryParameters).toMatchObject({ p3: '2026-01-02T03:04:05.000Z', p8: 'red shoes' });
  });

  it('quotes names that need it and keeps paths, arrays and metadata readable', () => {
    const q = new QueryBuilder({ collection: 'Order Lines' })
      .whereEquals('First Name', 'a')
      .whereEquals('Lines[].Product', 'p')
      .whereEquals('@metadata.@collection', 'c')
      .whereEquals('order', 1)
      .whereEquals("it's", 2);
    expect(q.toString()).toBe(
      "from 'Order Lines'\nwhere 'First Name' = $p0 and Lines[].Product = $p1 and @metadata.@collection = $p2 and " +
        "'order' = $p3 and 'it\\'s' = $p4",
    );
    expect(new QueryBuilder({ indexName: "Users/By'Name" }).toString()).toBe("from index 'Users/By\\'Name'");
  });

  it('orders, projects, includes and pages', () => {
    const q = users()
      .search('Text', 'london')
      .orderByScore()
      .orderByDescending('Age', 'long')
      .orderBy('Name')
      .selectFields('Name', { field: 'Address.City', as: 'City' })
      .include('Company')
      .skip(20)
      .take(10);
    expect(q.toString()).toBe(
      'from Users\nwhere search(Text, $p0)\norder by score(), Age as long desc, Name\n' +
        'select Name, Address.City as City\ninclude Company\nlimit $r0 offset $r1',
    );
    expect(q.toRequest().QueryParameters).toEqual({ p0: 'london', r0: 10, r1: 20 });
    // count() and first() override the page size without changing the builder.
    expect(q.toRequest(0).QueryParameters).toMatchObject({ r0: 0 });
    expect(q.toRequest().QueryParameters).toMatchObject({ r0: 10 });
  });

  it('asks for non-stale results with an optional timeout', () => {
    expect(users().waitForNonStaleResults().toRequest()).toMatchObject({ WaitForNonStaleResults: true });
    expect(users().waitForNonStaleResults(5000).toRequest()).toMatchObject({
      WaitForNonStaleResults: true,
      WaitForNonStaleResultsTimeoutMs: 5000,
    });
    expect(users().toRequest()).toEqual({ Query: 'from Users' });
  });

  it('renders facets and suggestions with parameters and stable names', () => {
    class Facets extends QueryBuilder {
      facets(...f: Parameters<QueryBuilder['setFacets']>[0]) {
        this.setFacets(f);
        return this;
      }
      suggest(field: string, term: string) {
        this.setSuggestions([{ field, term }]);
        return this;
      }
    }
    const q = new Facets({ indexName: 'Users/Search' })
      .whereGreaterThan('Age', 18)
      .facets(
        facet('City'),
        facet('Tags', { pageSize: 5, alias: 'TopTags' }),
        rangeFacet([range('Age').lessThan(45), range('Age').greaterThanOrEqual(45).lessThanOrEqual(60)]),
      );
    const text =
      "from index 'Users/Search'\nwhere Age > $p0\nselect facet(City), facet(Tags, $r0) as TopTags, " +
      'facet(Age < $r1, Age >= $r2 and Age <= $r3)';
    expect(q.toString()).toBe(text);
    expect(q.toString()).toBe(text);
    expect(q.toRequest().QueryParameters).toEqual({ p0: 18, r0: '{"PageSize":5}', r1: 45, r2: 45, r3: 60 });
    const s = new Facets({ indexName: 'Users/Search' }).suggest('Text', 'lndon');
    expect(s.toString()).toBe("from index 'Users/Search'\nselect suggest(Text, $r0)");
  });

  it('refuses what it cannot express, with InvalidArgument', () => {
    const refusals = [
      () => users().closeSubclause(),
      () => users().openSubclause().closeSubclause(),
      () => users().openSubclause().whereEquals('A', 1).toString(),
      () => users().take(-1),
      () => users().skip(1.5),
      () => users().whereEquals('A', Number.NaN),
      () => users().whereEquals('A..B', 1),
      () => users().whereEquals('A', new Date('nope')),
    ];
    for (const refuse of refusals) {
      expect(refuse).toThrow(RookeryClientError);
      try {
        refuse();
      } catch (error) {
        expect((error as RookeryClientError).code).toBe('InvalidArgument');
      }
    }
  });
});
