// The `where` clause: boolean expressions over comparisons and RavenDB's query methods.
//
//   expression := and ('or' and)*
//   and        := unary ('and' unary)*
//   unary      := 'not' unary | primary
//   primary    := '(' expression ')' | 'true' | method | operand comparison

import type {
  BetweenExpression,
  ComparisonExpression,
  ComparisonOperator,
  Expression,
  FacetRange,
  FieldPath,
  FunctionCall,
  InExpression,
  Operand,
  SpatialPoint,
  SpatialRelation,
  SpatialShape,
  SpatialTarget,
  Value,
} from './ast.js';
import {
  type PathHead,
  parseFieldPath,
  parseNumericValue,
  parsePathHead,
  parseTextValue,
  parseValue,
} from './parse-common.js';
import { describeToken, type TokenStream } from './token-stream.js';

const OPERATORS: Readonly<Record<string, ComparisonOperator>> = {
  '=': '=',
  '==': '=',
  '!=': '!=',
  '<>': '!=',
  '<': '<',
  '<=': '<=',
  '>': '>',
  '>=': '>=',
};
const OPERATOR_DESCRIPTIONS = ["'='", "'!='", "'<'", "'<='", "'>'", "'>='"];

const SPATIAL_RELATIONS: Readonly<Record<string, SpatialRelation>> = {
  'spatial.within': 'within',
  'spatial.contains': 'contains',
  'spatial.intersects': 'intersects',
  'spatial.disjoint': 'disjoint',
};

const METHOD_DESCRIPTIONS = [
  'startsWith(...)',
  'endsWith(...)',
  'regex(...)',
  'exists(...)',
  'search(...)',
  'boost(...)',
  'spatial.within(...)',
  'spatial.contains(...)',
  'spatial.intersects(...)',
  'spatial.disjoint(...)',
  'id()',
];

export function parseExpression(ts: TokenStream): Expression {
  ts.enter();
  const expression = parseOr(ts);
  ts.leave();
  return expression;
}

function parseOr(ts: TokenStream): Expression {
  const first = parseAnd(ts);
  const operands = [first];
  while (ts.acceptKeyword('or')) operands.push(parseAnd(ts));
  if (operands.length === 1) return first;
  return { kind: 'or', operands, position: ts.rangeFrom(first.position.start.offset) };
}

function parseAnd(ts: TokenStream): Expression {
  const first = parseUnary(ts);
  const operands = [first];
  while (ts.acceptKeyword('and')) operands.push(parseUnary(ts));
  if (operands.length === 1) return first;
  return { kind: 'and', operands, position: ts.rangeFrom(first.position.start.offset) };
}

function parseUnary(ts: TokenStream): Expression {
  const not = ts.acceptKeyword('not');
  if (!not) return parsePrimary(ts);
  ts.enter();
  const operand = parseUnary(ts);
  ts.leave();
  return { kind: 'not', operand, position: ts.rangeFrom(not.start) };
}

function parsePrimary(ts: TokenStream): Expression {
  if (ts.acceptPunctuation('(')) {
    const inner = parseExpression(ts);
    ts.expectPunctuation(')');
    return inner;
  }
  const trueToken = ts.acceptKeyword('true');
  if (trueToken) return { kind: 'true', position: ts.rangeFrom(trueToken.start) };
  ts.note('a field name');
  ts.note('a method call');
  const head = parsePathHead(ts);
  if (head.callName === undefined) return parseComparison(ts, head.path, true);
  return parseMethod(ts, head, head.callName);
}

/** `startsWith(...)`, `search(...)`, `id() = ...`: a call in the where clause. */
function parseMethod(ts: TokenStream, head: PathHead, name: string): Expression {
  const start = head.path.position.start.offset;
  const lower = name.toLowerCase();
  const relation = SPATIAL_RELATIONS[lower];
  if (relation !== undefined) {
    const target = inParentheses(ts, () => {
      const target = parseSpatialTarget(ts);
      ts.expectPunctuation(',');
      const shape = parseSpatialShape(ts);
      return { target, shape };
    });
    return { kind: 'spatial', relation, ...target, position: ts.rangeFrom(start) };
  }
  switch (lower) {
    case 'startswith':
    case 'endswith':
    case 'regex': {
      const { field, text } = inParentheses(ts, () => {
        const field = parseFieldOperand(ts);
        ts.expectPunctuation(',');
        return { field, text: parseTextValue(ts) };
      });
      const position = ts.rangeFrom(start);
      if (lower === 'regex') return { kind: 'regex', field, pattern: text, position };
      return { kind: lower === 'startswith' ? 'startsWith' : 'endsWith', field, value: text, position };
    }
    case 'exists': {
      const field = inParentheses(ts, () => parseFieldPath(ts));
      return { kind: 'exists', field, position: ts.rangeFrom(start) };
    }
    case 'search': {
      const parts = inParentheses(ts, () => {
        const field = parseFieldPath(ts);
        ts.expectPunctuation(',');
        const terms = parseTextValue(ts);
        let operator: 'and' | 'or' | undefined;
        if (ts.acceptPunctuation(',')) {
          if (ts.acceptKeyword('and')) operator = 'and';
          else if (ts.acceptKeyword('or')) operator = 'or';
          else ts.fail();
        }
        return { field, terms, ...(operator === undefined ? {} : { operator }) };
      });
      return { kind: 'search', ...parts, position: ts.rangeFrom(start) };
    }
    case 'boost': {
      const parts = inParentheses(ts, () => {
        const expression = parseExpression(ts);
        ts.expectPunctuation(',');
        return { expression, factor: parseNumericValue(ts) };
      });
      return { kind: 'boost', ...parts, position: ts.rangeFrom(start) };
    }
    case 'id':
      return parseComparison(ts, parseIdCall(ts, head.path, name), true);
  }
  return ts.failAt(head.path.position.start, METHOD_DESCRIPTIONS, `'${name}('`);
}

/** `( ... )` around `body`. */
function inParentheses<T>(ts: TokenStream, body: () => T): T {
  ts.expectPunctuation('(');
  const result = body();
  ts.expectPunctuation(')');
  return result;
}

/** `()` after `id`. */
function parseIdCall(ts: TokenStream, name: FieldPath, spelled: string): FunctionCall {
  ts.expectPunctuation('(');
  ts.expectPunctuation(')');
  return { kind: 'call', name: spelled, args: [], position: ts.rangeFrom(name.position.start.offset) };
}

/** A field path or `id()`. */
export function parseFieldOperand(ts: TokenStream): Operand {
  const head = parsePathHead(ts);
  if (head.callName === undefined) return head.path;
  if (head.callName.toLowerCase() === 'id') return parseIdCall(ts, head.path, head.callName);
  return ts.failAt(head.path.position.start, ['a field name', 'id()'], `'${head.callName}('`);
}

/**
 * What follows the left operand: `= value`, `between a and b`, `in (...)`, `all in (...)`.
 * `in` is not allowed in facet ranges.
 */
export function parseComparison(
  ts: TokenStream,
  left: Operand,
  allowIn: boolean,
): ComparisonExpression | BetweenExpression | InExpression {
  const start = left.position.start.offset;
  const token = ts.peek();
  if (token.kind === 'operator') {
    ts.advance();
    const operator = OPERATORS[token.value]!;
    const right = parseValue(ts);
    return { kind: 'comparison', operator, left, right, position: ts.rangeFrom(start) };
  }
  for (const description of OPERATOR_DESCRIPTIONS) ts.note(description);
  if (ts.acceptKeyword('between')) {
    const low = parseValue(ts);
    ts.expectKeyword('and');
    const high = parseValue(ts);
    return { kind: 'between', left, low, high, position: ts.rangeFrom(start) };
  }
  if (allowIn) {
    let all = false;
    if (ts.isKeyword('all')) {
      ts.advance();
      ts.expectKeyword('in');
      all = true;
    } else if (!ts.acceptKeyword('in')) {
      ts.fail("'all in'");
    }
    const values: Value[] = [];
    ts.expectPunctuation('(');
    if (!ts.acceptPunctuation(')')) {
      do {
        values.push(parseValue(ts));
      } while (ts.acceptPunctuation(','));
      ts.expectPunctuation(')');
    }
    return { kind: 'in', left, all, values, position: ts.rangeFrom(start) };
  }
  return ts.fail();
}

/** One range of a range facet: a comparison or `between`, optionally joined with `and`. */
export function parseFacetRange(ts: TokenStream, left: FieldPath): FacetRange {
  const first = parseComparison(ts, left, false) as FacetRange;
  if (!ts.isKeyword('and')) return first;
  const operands: FacetRange[] = [first];
  while (ts.acceptKeyword('and')) {
    operands.push(parseComparison(ts, parseFieldPath(ts), false) as FacetRange);
  }
  return { kind: 'and', operands, position: ts.rangeFrom(left.position.start.offset) };
}

/** True when the current token starts a comparison (an operator or `between`). */
export function atRangeComparison(ts: TokenStream): boolean {
  return ts.peek().kind === 'operator' || ts.isKeyword('between');
}

/** A field path or `spatial.point(LatitudeField, LongitudeField)`. */
export function parseSpatialTarget(ts: TokenStream): SpatialTarget {
  const head = parsePathHead(ts);
  if (head.callName === undefined) return head.path;
  if (head.callName.toLowerCase() !== 'spatial.point') {
    return ts.failAt(head.path.position.start, ['a field name', 'spatial.point(...)'], `'${head.callName}('`);
  }
  const { latitude, longitude } = inParentheses(ts, () => {
    const latitude = parseFieldPath(ts);
    ts.expectPunctuation(',');
    return { latitude, longitude: parseFieldPath(ts) };
  });
  return {
    kind: 'spatialFieldPoint',
    latitude,
    longitude,
    position: ts.rangeFrom(head.path.position.start.offset),
  };
}

/** The name of a spatial function at the current token (`spatial.circle`), consumed up to its `(`. */
function parseSpatialFunctionName(ts: TokenStream, accepted: string[]): { name: string; start: number } {
  const token = ts.peek();
  const descriptions = accepted.map((name) => `${name}(...)`);
  if (token.kind !== 'identifier') return ts.fail(...descriptions);
  const head = parsePathHead(ts);
  const name = head.callName?.toLowerCase();
  if (name === undefined || !accepted.includes(name)) {
    const found = head.callName === undefined ? describeToken(token, ts.source) : `'${head.callName}('`;
    return ts.failAt(ts.source.positionAt(token.start), descriptions, found);
  }
  return { name, start: token.start };
}

/** `spatial.circle(radius, latitude, longitude[, units])` or `spatial.wkt(text)`. */
export function parseSpatialShape(ts: TokenStream): SpatialShape {
  const { name, start } = parseSpatialFunctionName(ts, ['spatial.circle', 'spatial.wkt']);
  if (name === 'spatial.wkt') {
    const wkt = inParentheses(ts, () => parseTextValue(ts));
    return { kind: 'wkt', wkt, position: ts.rangeFrom(start) };
  }
  const circle = inParentheses(ts, () => {
    const radius = parseNumericValue(ts);
    ts.expectPunctuation(',');
    const latitude = parseNumericValue(ts);
    ts.expectPunctuation(',');
    const longitude = parseNumericValue(ts);
    let units: 'miles' | 'kilometers' | undefined;
    if (ts.acceptPunctuation(',')) {
      const token = ts.peek();
      const spelled = token.kind === 'string' ? token.value.toLowerCase() : undefined;
      if (spelled === 'miles') units = 'miles';
      else if (spelled === 'kilometers' || spelled === 'km') units = 'kilometers';
      else ts.fail("'miles'", "'kilometers'");
      ts.advance();
    }
    return { radius, latitude, longitude, ...(units === undefined ? {} : { units }) };
  });
  return { kind: 'circle', ...circle, position: ts.rangeFrom(start) };
}

/** `spatial.point(latitude, longitude)` with numbers or parameters. */
export function parseSpatialPoint(ts: TokenStream): SpatialPoint {
  const { start } = parseSpatialFunctionName(ts, ['spatial.point']);
  const point = inParentheses(ts, () => {
    const latitude = parseNumericValue(ts);
    ts.expectPunctuation(',');
    return { latitude, longitude: parseNumericValue(ts) };
  });
  return { kind: 'point', ...point, position: ts.rangeFrom(start) };
}
