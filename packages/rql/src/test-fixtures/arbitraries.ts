// fast-check generators of query trees (without positions) in the canonical shape
// the parser produces, for round-trip properties.

import fc from 'fast-check';
import type {
  CallArgument,
  Expression,
  Facet,
  FacetAggregation,
  FacetRange,
  FieldPath,
  FromSource,
  FunctionCall,
  GroupByItem,
  IncludeItem,
  LoadItem,
  NumericValue,
  Operand,
  OrderItem,
  Parameter,
  PathSegment,
  Projection,
  RqlQuery,
  SelectClause,
  SpatialPoint,
  SpatialShape,
  SpatialTarget,
  Suggestion,
  TextValue,
  Unpositioned,
  Value,
} from '../ast.js';
import { isKeyword } from '../identifiers.js';

type U<T> = Unpositioned<T>;

const plainIdentifier = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_]{0,7}$/);

/** An identifier that prints bare: safe as the first segment of a field inside call arguments. */
const bareIdentifier = plainIdentifier.filter((name) => !isKeyword(name));

/** Any name at all: identifiers, keywords, `@`-names, names that need quotes, odd characters. */
export const anyName: fc.Arbitrary<string> = fc.oneof(
  { weight: 4, arbitrary: plainIdentifier },
  fc.constantFrom(
    'from',
    'Order',
    'WHERE',
    'index',
    'true',
    'not',
    'in',
    'as',
    'facet',
    'id',
    '@metadata',
    '@collection',
    '@all_docs',
    'First Name',
    "it's",
    'back\\slash',
    'Ünïcödé',
    'Order-Lines',
    'a-',
    '',
    'line\nbreak',
    '$x',
    '123',
    '"',
  ),
  fc.string({ maxLength: 6 }),
  fc.string({ unit: 'binary', maxLength: 4 }),
);

const segment = (name: fc.Arbitrary<string>): fc.Arbitrary<U<PathSegment>> =>
  fc.record({ name, array: fc.boolean() });

export const fieldPath: fc.Arbitrary<U<FieldPath>> = fc
  .array(segment(anyName), { minLength: 1, maxLength: 3 })
  .map((segments) => ({ kind: 'field', segments }));

/** A field usable inside call arguments, where a quoted first segment would read as a string. */
const argumentFieldPath: fc.Arbitrary<U<FieldPath>> = fc
  .tuple(segment(bareIdentifier), fc.array(segment(anyName), { maxLength: 2 }))
  .map(([first, rest]) => ({ kind: 'field', segments: [first, ...rest] }));

const numberRaw = fc.oneof(
  fc
    .tuple(
      fc.boolean(),
      fc.stringMatching(/^[0-9]{1,6}$/),
      fc.option(fc.stringMatching(/^[0-9]{1,4}$/), { nil: undefined }),
      fc.option(
        fc.tuple(fc.constantFrom('e', 'E'), fc.constantFrom('', '+', '-'), fc.stringMatching(/^[0-9]{1,3}$/)),
        {
          nil: undefined,
        },
      ),
    )
    .map(
      ([negative, whole, fraction, exponent]) =>
        `${negative ? '-' : ''}${whole}${fraction === undefined ? '' : `.${fraction}`}${exponent === undefined ? '' : exponent.join('')}`,
    ),
  fc.stringMatching(/^[0-9][0-9_]{0,6}$/),
);

const numberLiteral = numberRaw
  .filter((raw) => Number.isFinite(Number(raw.replaceAll('_', ''))))
  .map((raw) => ({ kind: 'number' as const, raw, value: Number(raw.replaceAll('_', '')) }));

const parameter: fc.Arbitrary<U<Parameter>> = fc
  .stringMatching(/^[A-Za-z0-9_]{1,6}$/)
  .map((name) => ({ kind: 'parameter', name }));

const stringLiteral = fc
  .oneof(fc.string({ maxLength: 8 }), fc.string({ unit: 'binary', maxLength: 6 }))
  .map((value) => ({ kind: 'string' as const, value }));

export const value: fc.Arbitrary<U<Value>> = fc.oneof(
  stringLiteral,
  numberLiteral,
  fc.boolean().map((flag) => ({ kind: 'boolean' as const, value: flag })),
  fc.constant({ kind: 'null' as const }),
  parameter,
);

const numericValue: fc.Arbitrary<U<NumericValue>> = fc.oneof(numberLiteral, parameter);
const textValue: fc.Arbitrary<U<TextValue>> = fc.oneof(stringLiteral, parameter);
const count: fc.Arbitrary<U<NumericValue>> = fc.oneof(
  fc.stringMatching(/^[0-9]{1,9}$/).map((raw) => ({ kind: 'number' as const, raw, value: Number(raw) })),
  parameter,
);

const idCall: fc.Arbitrary<U<FunctionCall>> = fc
  .constantFrom('id', 'ID', 'Id')
  .map((name) => ({ kind: 'call', name, args: [] }));

const operand: fc.Arbitrary<U<Operand>> = fc.oneof({ weight: 4, arbitrary: fieldPath }, idCall);

const functionNames = fc.constantFrom(
  'count',
  'sum',
  'key',
  'id',
  'score',
  'random',
  'counter',
  'cmpxchg',
  'timings',
  'explanations',
  'array',
  'highlight',
  'custom.fn',
);

const { call } = fc.letrec<{ call: U<FunctionCall>; argument: U<CallArgument> }>((tie) => ({
  call: fc.record({
    kind: fc.constant('call' as const),
    name: functionNames,
    args: fc.array(tie('argument'), { maxLength: 3 }),
  }),
  argument: fc.oneof({ maxDepth: 2, depthSize: 'small' }, value, argumentFieldPath, tie('call')),
}));

export const functionCall: fc.Arbitrary<U<FunctionCall>> = call;
const pathOrCall = fc.oneof({ weight: 3, arbitrary: fieldPath }, functionCall);

const comparisonOperator = fc.constantFrom('=', '!=', '<', '<=', '>', '>=' as const);

const comparison = (left: fc.Arbitrary<U<Operand>>) =>
  fc.record({ kind: fc.constant('comparison' as const), operator: comparisonOperator, left, right: value });

const between = (left: fc.Arbitrary<U<Operand>>) =>
  fc.record({ kind: fc.constant('between' as const), left, low: value, high: value });

const spatialTarget: fc.Arbitrary<U<SpatialTarget>> = fc.oneof(
  fieldPath,
  fc.record({ kind: fc.constant('spatialFieldPoint' as const), latitude: fieldPath, longitude: fieldPath }),
);

const spatialShape: fc.Arbitrary<U<SpatialShape>> = fc.oneof(
  fc.record(
    {
      kind: fc.constant('circle' as const),
      radius: numericValue,
      latitude: numericValue,
      longitude: numericValue,
      units: fc.constantFrom('miles' as const, 'kilometers' as const),
    },
    { requiredKeys: ['kind', 'radius', 'latitude', 'longitude'] },
  ),
  fc.record({ kind: fc.constant('wkt' as const), wkt: textValue }),
);

const spatialPoint: fc.Arbitrary<U<SpatialPoint>> = fc.record({
  kind: fc.constant('point' as const),
  latitude: numericValue,
  longitude: numericValue,
});

const leafExpression: fc.Arbitrary<U<Expression>> = fc.oneof(
  comparison(operand),
  between(operand),
  fc.record({
    kind: fc.constant('in' as const),
    left: operand,
    all: fc.boolean(),
    values: fc.array(value, { maxLength: 3 }),
  }),
  fc.constant({ kind: 'true' as const }),
  fc.record({
    kind: fc.constantFrom('startsWith' as const, 'endsWith' as const),
    field: operand,
    value: textValue,
  }),
  fc.record({ kind: fc.constant('regex' as const), field: operand, pattern: textValue }),
  fc.record({ kind: fc.constant('exists' as const), field: fieldPath }),
  fc.record(
    {
      kind: fc.constant('search' as const),
      field: fieldPath,
      terms: textValue,
      operator: fc.constantFrom('and' as const, 'or' as const),
    },
    { requiredKeys: ['kind', 'field', 'terms'] },
  ),
  fc.record({
    kind: fc.constant('spatial' as const),
    relation: fc.constantFrom(
      'within' as const,
      'contains' as const,
      'intersects' as const,
      'disjoint' as const,
    ),
    target: spatialTarget,
    shape: spatialShape,
  }),
);

const { expression } = fc.letrec<{ expression: U<Expression> }>((tie) => ({
  expression: fc.oneof(
    { maxDepth: 4, depthSize: 'small' },
    { weight: 3, arbitrary: leafExpression },
    fc.record({
      kind: fc.constant('and' as const),
      operands: fc.array(tie('expression'), { minLength: 2, maxLength: 3 }),
    }),
    fc.record({
      kind: fc.constant('or' as const),
      operands: fc.array(tie('expression'), { minLength: 2, maxLength: 3 }),
    }),
    fc.record({ kind: fc.constant('not' as const), operand: tie('expression') }),
    fc.record({ kind: fc.constant('boost' as const), expression: tie('expression'), factor: numericValue }),
  ),
}));

export const whereExpression: fc.Arbitrary<U<Expression>> = expression;

const fromSource: fc.Arbitrary<U<FromSource>> = fc.record(
  { kind: fc.constantFrom('collection' as const, 'index' as const), name: anyName, alias: anyName },
  { requiredKeys: ['kind', 'name'] },
);

const groupByItem: fc.Arbitrary<U<GroupByItem>> = fc.record(
  { kind: fc.constant('groupByItem' as const), expression: pathOrCall, alias: anyName },
  { requiredKeys: ['kind', 'expression'] },
);

const orderItem: fc.Arbitrary<U<OrderItem>> = fc.record(
  {
    kind: fc.constant('orderItem' as const),
    expression: fc.oneof(
      { weight: 3, arbitrary: fieldPath },
      functionCall,
      fc.record(
        {
          kind: fc.constant('spatialDistance' as const),
          target: spatialTarget,
          point: spatialPoint,
          roundFactor: numericValue,
        },
        { requiredKeys: ['kind', 'target', 'point'] },
      ),
    ),
    direction: fc.constantFrom('asc' as const, 'desc' as const),
    ordering: fc.constantFrom('string' as const, 'long' as const, 'double' as const, 'alphanumeric' as const),
  },
  { requiredKeys: ['kind', 'expression', 'direction'] },
);

const loadItem: fc.Arbitrary<U<LoadItem>> = fc.record({
  kind: fc.constant('loadItem' as const),
  path: fieldPath,
  alias: anyName,
});

const projection: fc.Arbitrary<U<Projection>> = fc.record(
  { kind: fc.constant('projection' as const), expression: pathOrCall, alias: anyName },
  { requiredKeys: ['kind', 'expression'] },
);

const aggregation: fc.Arbitrary<U<FacetAggregation>> = fc.record({
  kind: fc.constant('facetAggregation' as const),
  function: fc.constantFrom('sum' as const, 'avg' as const, 'min' as const, 'max' as const),
  field: fieldPath,
});

const rangeComparison = fc.oneof(comparison(fieldPath), between(fieldPath));
const facetRange: fc.Arbitrary<U<FacetRange>> = fc.oneof(
  { weight: 3, arbitrary: rangeComparison },
  fc.record({
    kind: fc.constant('and' as const),
    operands: fc.array(rangeComparison, { minLength: 2, maxLength: 3 }),
  }),
);

const facet: fc.Arbitrary<U<Facet>> = fc.oneof(
  fc.record(
    {
      kind: fc.constant('fieldFacet' as const),
      field: fieldPath,
      aggregations: fc.array(aggregation, { maxLength: 2 }),
      options: parameter,
      alias: anyName,
    },
    { requiredKeys: ['kind', 'field', 'aggregations'] },
  ),
  fc.record(
    {
      kind: fc.constant('rangeFacet' as const),
      ranges: fc.array(facetRange, { minLength: 1, maxLength: 3 }),
      aggregations: fc.array(aggregation, { maxLength: 2 }),
      options: parameter,
      alias: anyName,
    },
    { requiredKeys: ['kind', 'ranges', 'aggregations'] },
  ),
);

const suggestion: fc.Arbitrary<U<Suggestion>> = fc.record(
  {
    kind: fc.constant('suggestion' as const),
    field: fieldPath,
    term: textValue,
    options: parameter,
    alias: anyName,
  },
  { requiredKeys: ['kind', 'field', 'term'] },
);

const selectClause: fc.Arbitrary<U<SelectClause>> = fc.oneof(
  {
    weight: 3,
    arbitrary: fc.record({
      kind: fc.constant('selectFields' as const),
      distinct: fc.boolean(),
      projections: fc.array(projection, { minLength: 1, maxLength: 3 }),
    }),
  },
  fc.record({
    kind: fc.constant('selectFacets' as const),
    facets: fc.array(facet, { minLength: 1, maxLength: 3 }),
  }),
  fc.record({
    kind: fc.constant('selectSuggest' as const),
    suggestions: fc.array(suggestion, { minLength: 1, maxLength: 2 }),
  }),
);

const includeItem: fc.Arbitrary<U<IncludeItem>> = pathOrCall;

export const query: fc.Arbitrary<U<RqlQuery>> = fc.record(
  {
    kind: fc.constant('query' as const),
    from: fromSource,
    groupBy: fc.array(groupByItem, { minLength: 1, maxLength: 2 }),
    where: whereExpression,
    orderBy: fc.array(orderItem, { minLength: 1, maxLength: 3 }),
    load: fc.array(loadItem, { minLength: 1, maxLength: 2 }),
    select: selectClause,
    include: fc.array(includeItem, { minLength: 1, maxLength: 3 }),
    limit: count,
    offset: count,
  },
  { requiredKeys: ['kind', 'from'] },
);
