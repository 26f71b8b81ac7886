import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { formatRql, parseRql, RqlSyntaxError } from './index.js';
import { query } from './test-fixtures/arbitraries.js';
import { stripPositions } from './test-fixtures/strip-positions.js';

/** Line and column of `offset`, computed the slow, obvious way (memoised per text). */
const lineBreaksCache = new Map<string, number[]>();
function naivePosition(text: string, offset: number): { line: number; column: number } {
  let breaks = lineBreaksCache.get(text);
  if (breaks === undefined) {
    breaks = [];
    for (let i = 0; i < text.length; i++) {
      if (text[i] === '\n' || (text[i] === '\r' && text[i + 1] !== '\n')) breaks.push(i + 1);
    }
    lineBreaksCache.clear();
    lineBreaksCache.set(text, breaks);
  }
  const lineStarts = [0, ...breaks.filter((start) => start <= offset)];
  return { line: lineStarts.length, column: offset - lineStarts[lineStarts.length - 1]! + 1 };
}

/** Parses `text`, asserting that a failure is a well-formed RqlSyntaxError. */
function parseOrSyntaxError(text: string): ReturnType<typeof parseRql> | undefined {
  try {
    return parseRql(text);
  } catch (error) {
    expect(error).toBeInstanceOf(RqlSyntaxError);
    const syntaxError = error as RqlSyntaxError;
    expect(syntaxError.code).toBe('InvalidQuery');
    expect(syntaxError.line).toBeGreaterThanOrEqual(1);
    expect(syntaxError.column).toBeGreaterThanOrEqual(1);
    expect(syntaxError.offset).toBeGreaterThanOrEqual(0);
    expect(syntaxError.offset).toBeLessThanOrEqual(text.length);
    expect({ line: syntaxError.line, column: syntaxError.column }).toEqual(
      naivePosition(text, syntaxError.offset),
    );
    expect(syntaxError.expected.length).toBeGreaterThan(0);
    expect(syntaxError.message).toMatch(/^line \d+, column \d+: expected .+ but found .+/s);
    return undefined;
  }
}

interface Range {
  start: { offset: number; line: number; column: number };
  end: { offset: number; line: number; column: number };
}

/**
 * Every positioned node lies inside its nearest positioned ancestor (the query lies
 * inside the text), starts before it ends, and has line/column matching its offsets.
 */
function expectConsistentPositions(text: string, root: unknown): void {
  const problems: string[] = [];
  const visit = (value: unknown, parent: { start: number; end: number }, path: string): void => {
    if (Array.isArray(value)) {
      for (const [i, item] of value.entries()) visit(item, parent, `${path}[${i}]`);
      return;
    }
    if (value === null || typeof value !== 'object') return;
    let inner = parent;
    if ('position' in value) {
      const { start, end } = value.position as Range;
      if (start.offset < parent.start || end.offset > parent.end || start.offset > end.offset) {
        problems.push(`${path}: [${start.offset}, ${end.offset}) outside [${parent.start}, ${parent.end})`);
      }
      for (const point of [start, end]) {
        const expected = naivePosition(text, point.offset);
        if (expected.line !== point.line || expected.column !== point.column) {
          problems.push(`${path}: offset ${point.offset} is not line ${point.line}, column ${point.column}`);
        }
      }
      inner = { start: start.offset, end: end.offset };
    }
    for (const [key, child] of Object.entries(value)) {
      if (key !== 'position') visit(child, inner, `${path}.${key}`);
    }
  };
  visit(root, { start: 0, end: text.length }, 'query');
  expect(problems).toEqual([]);
}

const RQL_TOKENS = [
  'from',
  'FROM',
  'index',
  'Orders',
  'o',
  '@all_docs',
  '@metadata',
  "'@collection'",
  'as',
  'group',
  'by',
  'where',
  'and',
  'or',
  'not',
  'true',
  'false',
  'null',
  'between',
  'in',
  'all',
  'order',
  'asc',
  'desc',
  'long',
  'load',
  'select',
  'distinct',
  'include',
  'limit',
  'offset',
  'Name',
  'Lines[].Product',
  'Total',
  '=',
  '==',
  '!=',
  '<>',
  '<',
  '<=',
  '>',
  '>=',
  '(',
  ')',
  ',',
  '.',
  '[',
  ']',
  '[]',
  "'text'",
  '"double"',
  "'it''s'",
  "'esc\\'aped'",
  "'unterminated",
  '10',
  '-2.5',
  '1e3',
  '10_000',
  '$p',
  '$',
  '@',
  'startsWith(',
  'search(',
  'boost(',
  'exists(',
  'spatial.within(',
  'spatial.circle(',
  'spatial.point(',
  'spatial.distance(',
  'id()',
  'count()',
  'facet(',
  'suggest(',
  'sum(',
  'score()',
  '// comment\n',
  '/* block */',
  '/*',
  '{',
  '*',
  '\n',
  ';',
];

const tokenSoup = fc.array(fc.constantFrom(...RQL_TOKENS), { maxLength: 30 }).chain((tokens) =>
  fc
    .array(fc.constantFrom(' ', '', '\n', '\r\n', '\t'), {
      minLength: tokens.length,
      maxLength: tokens.length,
    })
    .map((gaps) => tokens.map((token, i) => token + gaps[i]).join('')),
);

/** Token soup that starts like a real query, so parsing gets further before failing. */
const plausibleSoup = tokenSoup.map((rest) => `from Orders ${rest}`);

describe('parseRql on hostile input (property)', () => {
  it('only ever throws RqlSyntaxError with a position inside the text, for arbitrary strings', () => {
    fc.assert(
      fc.property(
        fc.oneof(fc.string({ maxLength: 80 }), fc.string({ unit: 'binary', maxLength: 80 })),
        (text) => {
          parseOrSyntaxError(text);
        },
      ),
      { numRuns: 500 },
    );
  });

  it('only ever throws RqlSyntaxError for random sequences of RQL tokens', () => {
    fc.assert(
      fc.property(fc.oneof(tokenSoup, plausibleSoup), (text) => {
        const ast = parseOrSyntaxError(text);
        if (ast === undefined) return;
        // Whatever parses has consistent positions and formats to a fixed point.
        expectConsistentPositions(text, ast);
        const formatted = formatRql(ast);
        expect(formatRql(parseRql(formatted))).toBe(formatted);
        expect(stripPositions(parseRql(formatted))).toEqual(stripPositions(ast));
      }),
      { numRuns: 1000 },
    );
  });
});

const MUTATION_TOKENS = [
  'and',
  'or',
  'not',
  '(',
  ')',
  ',',
  'as',
  'x',
  "'s'",
  '1',
  '$p',
  '=',
  'between',
  'in',
  'all',
];
const MUTATION_TOKENS_MORE = ['desc', 'as long', 'select', 'facet(', 'id()', '.', '[]', 'true', '', '\n'];

/** A valid query with a few words deleted, inserted or replaced: mostly broken, sometimes still valid. */
const mutatedQuery = fc
  .tuple(
    query,
    fc.array(fc.tuple(fc.nat(), fc.nat(2), fc.constantFrom(...MUTATION_TOKENS, ...MUTATION_TOKENS_MORE)), {
      minLength: 1,
      maxLength: 3,
    }),
  )
  .map(([ast, edits]) => {
    const words = formatRql(ast).split(/( |\n)/);
    for (const [at, operation, token] of edits) {
      const i = at % (words.length + 1);
      if (operation === 0) words.splice(i, 1);
      else if (operation === 1) words.splice(i, 0, ' ', token);
      else words[i] = token;
    }
    return words.join('');
  });

describe('parseRql on mutated queries (property)', () => {
  it('throws only RqlSyntaxError, and whatever still parses formats to a fixed point', () => {
    fc.assert(
      fc.property(mutatedQuery, (text) => {
        const ast = parseOrSyntaxError(text);
        if (ast === undefined) return;
        expectConsistentPositions(text, ast);
        const formatted = formatRql(ast);
        const reparsed = parseRql(formatted);
        expect(stripPositions(reparsed)).toEqual(stripPositions(ast));
        expect(formatRql(reparsed)).toBe(formatted);
      }),
      { numRuns: 500 },
    );
  });
});

describe('formatRql round trip (property)', () => {
  it('parses what it prints back to the same tree, and printing again is a fixed point', () => {
    fc.assert(
      fc.property(query, (ast) => {
        const text = formatRql(ast);
        const reparsed = parseRql(text);
        expect(stripPositions(reparsed)).toEqual(ast);
        expect(formatRql(reparsed)).toBe(text);
        expectConsistentPositions(text, reparsed);
      }),
      { numRuns: 500 },
    );
  });
});
