import { describe, expect, it } from 'vitest';
import {
  candidatePrefixes,
  defaultMaxDistance,
  rankSuggestions,
  type SuggestionCandidate,
} from './suggest.js';

const candidates = (...entries: [string, number][]): SuggestionCandidate[] =>
  entries.map(([term, docs]) => ({ term, docs }));

/** Textbook OSA distance over code points, a full matrix: the reference for the bounded one. */
function referenceOsa(a: string, b: string): number {
  const x = Array.from(a);
  const y = Array.from(b);
  const d = Array.from({ length: x.length + 1 }, (_, i) =>
    Array.from({ length: y.length + 1 }, (_, j) => (i === 0 ? j : j === 0 ? i : 0)),
  );
  for (let i = 1; i <= x.length; i++) {
    for (let j = 1; j <= y.length; j++) {
      const cost = x[i - 1] === y[j - 1] ? 0 : 1;
      let value = Math.min(d[i - 1]![j]! + 1, d[i]![j - 1]! + 1, d[i - 1]![j - 1]! + cost);
      if (i > 1 && j > 1 && x[i - 1] === y[j - 2] && x[i - 2] === y[j - 1]) {
        value = Math.min(value, d[i - 2]![j - 2]! + 1);
      }
      d[i]![j] = value;
    }
  }
  return d[x.length]![y.length]!;
}

describe('rankSuggestions', () => {
  it('suggests jquery first for jquryt', () => {
    const result = rankSuggestions(
      'jquryt',
      candidates(
        ['jqueryui', 900],
        ['query', 5_000],
        ['jquery-ui', 800],
        ['jsquery', 3],
        ['jquery', 10_000],
        ['jqgrid', 700],
        ['jquery.ui', 10],
      ),
    );
    expect(result[0]).toEqual({ term: 'jquery', distance: 2, docs: 10_000 });
    expect(result.map((s) => s.term)).toEqual(['jquery']);
    // With a larger allowed distance the others follow, nearest first.
    const wider = rankSuggestions(
      'jquryt',
      candidates(['jqueryui', 900], ['jquery', 10_000], ['query', 5_000]),
      {
        maxDistance: 3,
      },
    );
    expect(wider).toEqual([
      { term: 'jquery', distance: 2, docs: 10_000 },
      { term: 'query', distance: 3, docs: 5_000 },
      { term: 'jqueryui', distance: 3, docs: 900 },
    ]);
  });

  it('counts a transposition of adjacent characters as one edit', () => {
    expect(rankSuggestions('jqeury', candidates(['jquery', 1]))).toEqual([
      { term: 'jquery', distance: 1, docs: 1 },
    ]);
    expect(rankSuggestions('ab', candidates(['ba', 1]))).toEqual([{ term: 'ba', distance: 1, docs: 1 }]);
    // Optimal string alignment: "ca" → "abc" is 3 (no edit of an already transposed pair), not 2.
    expect(rankSuggestions('ca', candidates(['abc', 1]), { maxDistance: 3 })).toEqual([
      { term: 'abc', distance: 3, docs: 1 },
    ]);
  });

  it('excludes the term itself', () => {
    const result = rankSuggestions('logging', candidates(['logging', 100], ['loging', 5], ['logginq', 50]));
    expect(result.map((s) => s.term)).toEqual(['logginq', 'loging']);
  });

  it('returns at most max suggestions', () => {
    const many = candidates(['grids', 1], ['grid', 2], ['gird', 3], ['grin', 4], ['gris', 5], ['arid', 6]);
    expect(rankSuggestions('gri', many, { max: 2, maxDistance: 2 })).toHaveLength(2);
    expect(rankSuggestions('grid', many)).toHaveLength(5);
    expect(rankSuggestions('grid', many, { max: 1 })).toEqual([{ term: 'arid', distance: 1, docs: 6 }]);
  });

  it('breaks distance ties by documents, then by term', () => {
    const result = rankSuggestions(
      'mocks',
      candidates(['mock', 10], ['socks', 300], ['locks', 300], ['mockz', 20]),
    );
    expect(result).toEqual([
      { term: 'locks', distance: 1, docs: 300 },
      { term: 'socks', distance: 1, docs: 300 },
      { term: 'mockz', distance: 1, docs: 20 },
      { term: 'mock', distance: 1, docs: 10 },
    ]);
  });

  it('keeps to the default distance: 1 below 5 characters, 2 from 5', () => {
    expect(defaultMaxDistance('yui')).toBe(1);
    expect(defaultMaxDistance('debug')).toBe(2);
    expect(rankSuggestions('yui', candidates(['yuix', 1], ['yxix', 1])).map((s) => s.term)).toEqual(['yuix']);
    expect(
      rankSuggestions('debug', candidates(['debag', 1], ['dbag', 1], ['xdbag', 1])).map((s) => s.term),
    ).toEqual(['debag', 'dbag']);
  });

  it('agrees with a full-matrix OSA distance, cut-off or not', () => {
    const words = [
      'jquery',
      'jqueryui',
      'query',
      'jquery-ui',
      'jsquery',
      'qjuery',
      'jqeury',
      'ravendb',
      'raven',
    ];
    const extra = [
      '',
      'a',
      'ab',
      'ba',
      'abc',
      'acb',
      'bca',
      'cab',
      'aabb',
      'abab',
      'baba',
      'ca',
      'café',
      'cafe',
    ];
    const all = [...words, ...extra, 'naïve', 'naive', '😀ab', 'a😀b'];
    for (const a of all) {
      for (const b of all) {
        const expected = referenceOsa(a, b);
        for (const limit of [1, 2, 3]) {
          const result = rankSuggestions(a, [{ term: b, docs: 1 }], { maxDistance: limit });
          if (a === '' || a === b || expected > limit) expect(result, `${a} / ${b} / ${limit}`).toEqual([]);
          else expect(result, `${a} / ${b} / ${limit}`).toEqual([{ term: b, distance: expected, docs: 1 }]);
        }
      }
    }
  });

  it('treats astral characters as one character', () => {
    expect(rankSuggestions('😀json', candidates(['json', 1], ['😃json', 2]))).toEqual([
      { term: '😃json', distance: 1, docs: 2 },
      { term: 'json', distance: 1, docs: 1 },
    ]);
  });

  it('accepts any iterable and handles empty input', () => {
    function* generate() {
      yield { term: 'loggin', docs: 1 };
    }
    expect(rankSuggestions('logging', generate())).toEqual([{ term: 'loggin', distance: 1, docs: 1 }]);
    expect(rankSuggestions('logging', [])).toEqual([]);
    expect(rankSuggestions('', candidates(['a', 1]))).toEqual([]);
  });
});

describe('candidatePrefixes', () => {
  it('uses the first character for short terms', () => {
    expect(candidatePrefixes('yui')).toEqual(['y']);
    expect(candidatePrefixes('grid')).toEqual(['g']);
    expect(candidatePrefixes('')).toEqual([]);
  });

  it('also uses the first two characters swapped for longer terms', () => {
    expect(candidatePrefixes('jquryt')).toEqual(['j', 'qj']);
    expect(candidatePrefixes('qjuery')).toContain('jq');
    expect(candidatePrefixes('aaaaa')).toEqual(['a']);
    expect(candidatePrefixes('😀😃abc')).toEqual(['😀', '😃😀']);
  });

  it('finds the intended word for typos after the first character', () => {
    const vocabulary = ['jquery', 'jqueryui', 'json', 'query', 'logging', 'logger', 'london'];
    for (const [typo, intended] of [
      ['jquryt', 'jquery'],
      ['jsquery', 'jquery'],
      ['qjuery', 'jquery'],
      ['loggign', 'logging'],
      ['lndon', 'london'],
    ] as const) {
      const prefixes = candidatePrefixes(typo);
      const fetched = vocabulary.filter((word) => prefixes.some((prefix) => word.startsWith(prefix)));
      const [best] = rankSuggestions(typo, candidates(...fetched.map((word): [string, number] => [word, 1])));
      expect(best?.term, typo).toBe(intended);
    }
  });
});
