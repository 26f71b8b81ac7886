import { describe, expect, it } from 'vitest';
import { compileSubscriptionQuery } from './query.js';

describe('subscription queries', () => {
  it('read a collection, or every document, with an optional where clause', () => {
    expect(compileSubscriptionQuery('from Users')).toEqual({ collection: 'Users', where: null });
    expect(compileSubscriptionQuery('from @all_docs where exists(Name)')).toMatchObject({
      collection: null,
      where: { kind: 'exists', field: 'Name' },
    });
    expect(compileSubscriptionQuery("from 'Not Yet' as n where n.Age between 1 and 2").where).toEqual({
      kind: 'between',
      field: 'Age',
      low: 1,
      high: 2,
    });
  });

  it('resolve $parameters as a query does, and refuse one that was not given, naming it', () => {
    expect(compileSubscriptionQuery('from Users where Age > $min', { min: 30 }).where).toEqual(
      compileSubscriptionQuery('from Users where Age > 30').where,
    );
    // A list spreads into in (…), beside written values.
    expect(
      compileSubscriptionQuery("from Users where Name in ($names, 'cy')", { names: ['ada', 'bo'] }),
    ).toEqual(compileSubscriptionQuery("from Users where Name in ('ada', 'bo', 'cy')"));
    expect(() =>
      compileSubscriptionQuery('from Users where Age > $min and Name = $name', { min: 3 }),
    ).toThrow(
      expect.objectContaining({
        code: 'InvalidQuery',
        message: expect.stringMatching(/\$name .*has no "name"/),
      }),
    );
    expect(() => compileSubscriptionQuery('from Users where Age > $min', { min: [1, 2] })).toThrow(
      expect.objectContaining({ code: 'InvalidQuery', message: expect.stringMatching(/\$min is a list/) }),
    );
  });

  it.each([
    ["from index 'Users/ByName'", /from index is not supported/],
    ['from Users order by Name', /order by/],
    ['from Users select Name', /select/],
    ['from Users limit 10', /limit/],
    ['from Users include Company', /include/],
    ["from Users where search(Name, 'ada')", /search\(\) is not supported/],
    ["from Users where boost(Name = 'ada', 2)", /boost\(\)/],
    ["from Users where regex(Name, '^a')", /regex\(\)/],
    ['from Users where spatial.within(Location, spatial.circle(1, 2, 3))', /spatial/],
    ['from Users where count() > 1', /count\(/],
    ['from Users where', /.+/],
  ])('refuse %s with a 400 that says what subscriptions support', (query, message) => {
    expect(() => compileSubscriptionQuery(query)).toThrow(
      expect.objectContaining({ code: 'InvalidQuery', status: 400, message: expect.stringMatching(message) }),
    );
  });
});
