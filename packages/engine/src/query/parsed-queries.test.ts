import { RookeryError } from '@rookery/protocol';
import { describe, expect, it } from 'vitest';
import { parsedQuery } from './parsed-queries.js';

describe('parsedQuery', () => {
  it('parses a text once and hands every caller the same frozen tree', () => {
    const text = "from index 'Packages/Search' where search(Query, $q) order by DownloadCount desc";
    const first = parsedQuery(text);
    expect(parsedQuery(text)).toBe(first);
    expect(Object.isFrozen(first)).toBe(true);
    expect(Object.isFrozen(first.from)).toBe(true);
    // A compiler writing into the shared tree throws instead of changing the next query's.
    expect(() => {
      (first as { limit?: unknown }).limit = 5;
    }).toThrow(TypeError);
  });

  it('never keeps a syntax error: the same bad text fails again, saying where', () => {
    for (let i = 0; i < 2; i++) {
      expect(() => parsedQuery('from Users where')).toThrow(RookeryError);
    }
  });

  it('keeps the recent texts only: one pushed out by a thousand others is parsed again', () => {
    const text = 'from Users where Name = $name';
    const first = parsedQuery(text);
    for (let i = 0; i < 1_100; i++) parsedQuery(`from Users where Age = ${i}`);
    const again = parsedQuery(text);
    expect(again).not.toBe(first);
    expect(again).toEqual(first);
  });
});
