import { RookeryError } from '@rookery/protocol';
import { describe, expect, it } from 'vitest';
import { MAX_SUGGESTIONS, parseQueryText, RqlCompiler } from './compile-rql.js';

const suggestions = (parameters: Record<string, unknown>) =>
  new RqlCompiler(
    parseQueryText("from index 'Packages/Search' select suggest(Query, 'jquryt', $o)"),
    parameters as never,
  ).suggestions();

describe('suggest() options', () => {
  it('asks for 5 suggestions when no options are given', () => {
    const compiled = new RqlCompiler(
      parseQueryText("from index 'Packages/Search' select suggest(Query, 'jquryt')"),
      {},
    ).suggestions();
    expect(compiled).toEqual([{ field: 'Query', term: 'jquryt', name: 'Query', max: 5 }]);
  });

  it("honours the options' PageSize, as an object or as JSON text", () => {
    expect(suggestions({ o: { PageSize: 12 } })[0]?.max).toBe(12);
    expect(suggestions({ o: '{"PageSize": 40}' })[0]?.max).toBe(40);
    expect(suggestions({ o: { PageSize: MAX_SUGGESTIONS } })[0]?.max).toBe(400);
    // Options of RavenDB's that do not change how many are asked for leave the default.
    expect(suggestions({ o: { Accuracy: 0.5, Distance: 'Levenshtein' } })[0]?.max).toBe(5);
  });

  it('refuses a PageSize above the limit, or one that is not a positive whole number, naming the limit', () => {
    for (const bad of [
      { PageSize: 401 },
      { PageSize: 0 },
      { PageSize: -3 },
      { PageSize: 2.5 },
      { PageSize: '9' },
      '{"PageSize"',
      7,
    ]) {
      let error: unknown;
      try {
        suggestions({ o: bad });
      } catch (caught) {
        error = caught;
      }
      expect(error, JSON.stringify(bad)).toBeInstanceOf(RookeryError);
      expect((error as RookeryError).code).toBe('InvalidQuery');
      expect((error as RookeryError).message).toContain('400');
    }
  });
});
