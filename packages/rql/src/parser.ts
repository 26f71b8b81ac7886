// The query and its clauses, in RavenDB's order:
//
//   query := 'from' source
//            ('group' 'by' groupItem (',' groupItem)*)?
//            ('where' expression)?
//            ('order' 'by' orderItem (',' orderItem)*)?
//            ('load' loadItem (',' loadItem)*)?
//            ('select' ...)?
//            ('include' includeItem (',' includeItem)*)?
//            ('limit' count (',' count)?)? ('offset' count)?

import type {
  FromSource,
  GroupByItem,
  IncludeItem,
  LoadItem,
  NumericValue,
  OrderItem,
  OrderingType,
  RqlQuery,
} from './ast.js';
import { RqlSyntaxError } from './errors.js';
import { MAX_QUERY_LENGTH } from './limits.js';
import {
  atBareAlias,
  parseCallArguments,
  parseName,
  parseNumericValue,
  parseOptionalAlias,
  parsePathHead,
  parsePathOrCall,
} from './parse-common.js';
import { parseSelect } from './parse-select.js';
import { parseExpression, parseSpatialPoint, parseSpatialTarget } from './parse-where.js';
import { SourceText } from './source-text.js';
import { TokenStream } from './token-stream.js';

/**
 * Parses one RQL query. Throws `RqlSyntaxError` (code `InvalidQuery`) for anything
 * that is not valid RQL, including queries longer than `MAX_QUERY_LENGTH` or nested
 * deeper than `MAX_NESTING_DEPTH`; never throws anything else for a string input.
 */
export function parseRql(text: string): RqlQuery {
  if (typeof text !== 'string') throw new TypeError('parseRql expects the query text as a string');
  if (text.length > MAX_QUERY_LENGTH) {
    const head = new SourceText(text.slice(0, MAX_QUERY_LENGTH + 1));
    throw new RqlSyntaxError({
      position: head.positionAt(MAX_QUERY_LENGTH),
      expected: [`a query of at most ${MAX_QUERY_LENGTH} characters`],
      found: `${text.length} characters`,
    });
  }
  return parseQuery(new TokenStream(new SourceText(text)));
}

function parseQuery(ts: TokenStream): RqlQuery {
  const start = ts.expectKeyword('from').start;
  const query: RqlQuery = { kind: 'query', from: parseFrom(ts, start), position: ts.rangeFrom(start) };

  if (ts.acceptKeyword('group')) {
    ts.expectKeyword('by');
    query.groupBy = commaList(ts, parseGroupByItem);
  }
  if (ts.acceptKeyword('where')) query.where = parseExpression(ts);
  if (ts.acceptKeyword('order')) {
    ts.expectKeyword('by');
    query.orderBy = commaList(ts, parseOrderItem);
  }
  if (ts.acceptKeyword('load')) query.load = commaList(ts, parseLoadItem);
  const select = ts.acceptKeyword('select');
  if (select) query.select = parseSelect(ts, select.start);
  if (ts.acceptKeyword('include')) query.include = commaList(ts, parsePathOrCall) satisfies IncludeItem[];

  if (ts.acceptKeyword('limit')) {
    const first = parseCount(ts);
    if (ts.acceptPunctuation(',')) {
      // RavenDB's `limit skip, take`.
      query.offset = first;
      query.limit = parseCount(ts);
    } else {
      query.limit = first;
    }
  }
  if (query.offset === undefined && ts.acceptKeyword('offset')) query.offset = parseCount(ts);

  if (ts.peek().kind !== 'end') ts.fail('end of input');
  query.position = ts.rangeFrom(start);
  return query;
}

function commaList<T>(ts: TokenStream, parseItem: (ts: TokenStream) => T): T[] {
  const items = [parseItem(ts)];
  while (ts.acceptPunctuation(',')) items.push(parseItem(ts));
  return items;
}

/** `Orders`, `@all_docs`, `'Orders'`, `index 'Orders/Totals'`, each with an optional alias. */
function parseFrom(ts: TokenStream, start: number): FromSource {
  const index = ts.acceptKeyword('index') !== undefined;
  const name = parseName(ts, index ? 'an index name' : 'a collection name');
  let alias = parseOptionalAlias(ts);
  if (alias === undefined && atBareAlias(ts)) alias = ts.advance().value;
  return {
    kind: index ? 'index' : 'collection',
    name,
    ...(alias === undefined ? {} : { alias }),
    position: ts.rangeFrom(start),
  };
}

function parseGroupByItem(ts: TokenStream): GroupByItem {
  const expression = parsePathOrCall(ts);
  const alias = parseOptionalAlias(ts);
  return {
    kind: 'groupByItem',
    expression,
    ...(alias === undefined ? {} : { alias }),
    position: ts.rangeFrom(expression.position.start.offset),
  };
}

const ORDERING_TYPES: readonly OrderingType[] = ['string', 'long', 'double', 'alphanumeric'];

/**
 * `Name`, `Freight as double desc`, `score()`, `random('seed')`, `spatial.distance(...)`.
 * RavenDB writes the `as` type before the direction; the other order is accepted too.
 */
function parseOrderItem(ts: TokenStream): OrderItem {
  const head = parsePathHead(ts);
  const start = head.path.position.start.offset;
  let expression: OrderItem['expression'] = head.path;
  if (head.callName?.toLowerCase() === 'spatial.distance') {
    ts.expectPunctuation('(');
    const target = parseSpatialTarget(ts);
    ts.expectPunctuation(',');
    const point = parseSpatialPoint(ts);
    const roundFactor = ts.acceptPunctuation(',') ? parseNumericValue(ts) : undefined;
    ts.expectPunctuation(')');
    expression = {
      kind: 'spatialDistance',
      target,
      point,
      ...(roundFactor === undefined ? {} : { roundFactor }),
      position: ts.rangeFrom(start),
    };
  } else if (head.callName !== undefined) {
    expression = parseCallArguments(ts, head.path, head.callName);
  }
  let ordering = parseOrderingType(ts);
  let direction: OrderItem['direction'] = 'asc';
  if (ts.acceptKeyword('asc') || ts.acceptKeyword('ascending')) direction = 'asc';
  else if (ts.acceptKeyword('desc') || ts.acceptKeyword('descending')) direction = 'desc';
  ordering ??= parseOrderingType(ts);
  return {
    kind: 'orderItem',
    expression,
    direction,
    ...(ordering === undefined ? {} : { ordering }),
    position: ts.rangeFrom(start),
  };
}

function parseOrderingType(ts: TokenStream): OrderingType | undefined {
  if (!ts.acceptKeyword('as')) return undefined;
  for (const type of ORDERING_TYPES) {
    if (ts.acceptKeyword(type)) return type;
  }
  return ts.fail();
}

/** `o.Company as c` (or RavenDB's bare `o.Company c`). */
function parseLoadItem(ts: TokenStream): LoadItem {
  const path = parsePathHead(ts).path;
  let alias = parseOptionalAlias(ts);
  if (alias === undefined) {
    if (!atBareAlias(ts)) ts.fail();
    alias = ts.advance().value;
  }
  return { kind: 'loadItem', path, alias, position: ts.rangeFrom(path.position.start.offset) };
}

/** A non-negative whole number or a parameter, for `limit` and `offset`. */
function parseCount(ts: TokenStream): NumericValue {
  const value = parseNumericValue(ts);
  if (value.kind === 'number' && !(/^[0-9][0-9_]*$/.test(value.raw) && Number.isSafeInteger(value.value))) {
    ts.failAtLast(['a whole number from 0 to 2^53 - 1', 'a $parameter']);
  }
  return value;
}
