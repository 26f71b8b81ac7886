// The `select` clause: plain projections, facets or suggestions.
//
//   select      := 'select' ( 'distinct'? projection (',' projection)*
//                           | facet (',' facet)*
//                           | suggest (',' suggest)* )
//   projection  := (field | call) ('as' alias)?
//   facet       := 'facet' '(' (field | range (',' range)*) (',' aggregation)* (',' $options)? ')' ('as' alias)?
//   suggest     := 'suggest' '(' field ',' (string | $term) (',' $options)? ')' ('as' alias)?

import type {
  Facet,
  FacetAggregation,
  FacetRange,
  FieldPath,
  Parameter,
  Projection,
  SelectClause,
  Suggestion,
} from './ast.js';
import {
  parseCallArguments,
  parseFieldPath,
  parseOptionalAlias,
  parseParameter,
  parsePathHead,
  parseTextValue,
} from './parse-common.js';
import { atRangeComparison, parseFacetRange } from './parse-where.js';
import type { TokenStream } from './token-stream.js';

const AGGREGATIONS = ['sum', 'avg', 'min', 'max'] as const;
type AggregationName = (typeof AGGREGATIONS)[number];
const AGGREGATION_DESCRIPTIONS = AGGREGATIONS.map((name) => `${name}(...)`);

/** Everything after the `select` keyword, which started at `start`. */
export function parseSelect(ts: TokenStream, start: number): SelectClause {
  const distinct = ts.acceptKeyword('distinct') !== undefined;
  if (!distinct && ts.isKeyword('facet') && ts.isPunctuation('(', 1)) {
    const facets = [parseFacet(ts)];
    while (ts.acceptPunctuation(',')) facets.push(parseFacet(ts));
    return { kind: 'selectFacets', facets, position: ts.rangeFrom(start) };
  }
  if (!distinct && ts.isKeyword('suggest') && ts.isPunctuation('(', 1)) {
    const suggestions = [parseSuggestion(ts)];
    while (ts.acceptPunctuation(',')) suggestions.push(parseSuggestion(ts));
    return { kind: 'selectSuggest', suggestions, position: ts.rangeFrom(start) };
  }
  const projections = [parseProjection(ts)];
  while (ts.acceptPunctuation(',')) projections.push(parseProjection(ts));
  return { kind: 'selectFields', distinct, projections, position: ts.rangeFrom(start) };
}

function parseProjection(ts: TokenStream): Projection {
  const head = parsePathHead(ts);
  const start = head.path.position.start;
  let expression: Projection['expression'] = head.path;
  if (head.callName !== undefined) {
    const lower = head.callName.toLowerCase();
    if (lower === 'facet' || lower === 'suggest') {
      // RavenDB refuses to mix facets or suggestions with other projections.
      ts.failAt(start, ['a field name', 'a function call'], `'${head.callName}(' among other projections`);
    }
    expression = parseCallArguments(ts, head.path, head.callName);
  }
  const alias = parseOptionalAlias(ts);
  return {
    kind: 'projection',
    expression,
    ...(alias === undefined ? {} : { alias }),
    position: ts.rangeFrom(start.offset),
  };
}

function parseFacet(ts: TokenStream): Facet {
  const start = ts.expectKeyword('facet').start;
  ts.expectPunctuation('(');
  ts.enter();
  let field: FieldPath | undefined;
  const ranges: FacetRange[] = [];
  const aggregations: FacetAggregation[] = [];
  let options: Parameter | undefined;
  do {
    if (field === undefined && ranges.length === 0) {
      // The first argument decides: a plain field, or the first range.
      const path = parseFieldPath(ts);
      if (atRangeComparison(ts)) ranges.push(parseFacetRange(ts, path));
      else field = path;
      continue;
    }
    const token = ts.peek();
    if (token.kind === 'parameter') {
      options = parseParameter(ts);
      break;
    }
    const aggregation = AGGREGATIONS.find((name) => ts.isKeyword(name));
    if (aggregation !== undefined && ts.isPunctuation('(', 1)) {
      aggregations.push(parseAggregation(ts, aggregation));
      continue;
    }
    if (field !== undefined) ts.fail(...AGGREGATION_DESCRIPTIONS, 'a $parameter');
    for (const description of AGGREGATION_DESCRIPTIONS) ts.note(description);
    ts.note('a $parameter');
    ranges.push(parseFacetRange(ts, parseFieldPath(ts)));
  } while (ts.acceptPunctuation(','));
  ts.expectPunctuation(')');
  ts.leave();
  const alias = parseOptionalAlias(ts);
  const common = {
    aggregations,
    ...(options === undefined ? {} : { options }),
    ...(alias === undefined ? {} : { alias }),
  };
  if (field !== undefined) return { kind: 'fieldFacet', field, ...common, position: ts.rangeFrom(start) };
  return { kind: 'rangeFacet', ranges, ...common, position: ts.rangeFrom(start) };
}

function parseAggregation(ts: TokenStream, name: AggregationName): FacetAggregation {
  const start = ts.advance().start;
  ts.expectPunctuation('(');
  const field = parseFieldPath(ts);
  ts.expectPunctuation(')');
  return { kind: 'facetAggregation', function: name, field, position: ts.rangeFrom(start) };
}

function parseSuggestion(ts: TokenStream): Suggestion {
  const start = ts.expectKeyword('suggest').start;
  ts.expectPunctuation('(');
  const field = parseFieldPath(ts);
  ts.expectPunctuation(',');
  const term = parseTextValue(ts);
  let options: Parameter | undefined;
  if (ts.acceptPunctuation(',')) options = parseParameter(ts);
  ts.expectPunctuation(')');
  const alias = parseOptionalAlias(ts);
  return {
    kind: 'suggestion',
    field,
    term,
    ...(options === undefined ? {} : { options }),
    ...(alias === undefined ? {} : { alias }),
    position: ts.rangeFrom(start),
  };
}
