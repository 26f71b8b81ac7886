// The typed syntax tree `parseRql` produces and `formatRql` prints.
//
// Every node is a plain object with a `kind` discriminant and a `position` (the
// source range it was parsed from). Nodes built by hand for `formatRql` may leave
// `position` out (see `Unpositioned`); the formatter never reads it.

/** A point in the query text: `offset` counts UTF-16 code units from 0, `line` and `column` start at 1. */
export interface SourcePosition {
  offset: number;
  line: number;
  column: number;
}

/** The half-open range `[start, end)` a node was parsed from. */
export interface SourceRange {
  start: SourcePosition;
  end: SourcePosition;
}

interface Node {
  position: SourceRange;
}

// ---------------------------------------------------------------------------
// Values

/** `'text'` or `"text"`, escapes already decoded. */
export interface StringLiteral extends Node {
  kind: 'string';
  value: string;
}

/** `42`, `-1.5`, `2e10`, `10_000`. `raw` is the spelling in the query (the formatter prints it back). */
export interface NumberLiteral extends Node {
  kind: 'number';
  value: number;
  raw: string;
}

/** `true` / `false` (any letter case). */
export interface BooleanLiteral extends Node {
  kind: 'boolean';
  value: boolean;
}

/** `null` (any letter case). */
export interface NullLiteral extends Node {
  kind: 'null';
}

/** `$name`: a value supplied with the query's parameters. `name` excludes the `$`. */
export interface Parameter extends Node {
  kind: 'parameter';
  name: string;
}

export type Literal = StringLiteral | NumberLiteral | BooleanLiteral | NullLiteral;
export type Value = Literal | Parameter;
/** Where only a number makes sense: limits, boosts, coordinates. */
export type NumericValue = NumberLiteral | Parameter;
/** Where only text makes sense: prefixes, search terms, patterns, WKT. */
export type TextValue = StringLiteral | Parameter;

// ---------------------------------------------------------------------------
// Field paths and function calls

/** One step of a field path. `array` is true for `Lines[]` (every element of the array). */
export interface PathSegment {
  name: string;
  array: boolean;
  position: SourceRange;
}

/**
 * `Name`, `Address.City`, `Lines[].Product`, `@metadata.'@collection'`, `o.Company`.
 * Segments may be bare identifiers or quoted strings; the tree does not record which.
 * Aliases (`o` in `from Orders as o`) are not resolved: they are the first segment.
 */
export interface FieldPath extends Node {
  kind: 'field';
  segments: PathSegment[];
}

/**
 * A call whose meaning the parser leaves to later stages: `id()`, `count()`, `sum(Total)`,
 * `key()`, `score()`, `random('seed')`, `timings()`, `counter('Likes')`, ...
 * `name` is spelled as written (may be dotted); match it case-insensitively.
 * Inside the parentheses a quoted string is a string literal, not a field.
 */
export interface FunctionCall extends Node {
  kind: 'call';
  name: string;
  args: CallArgument[];
}

export type CallArgument = Value | FieldPath | FunctionCall;

/** The left side of a comparison: a field, or the call `id()`. */
export type Operand = FieldPath | FunctionCall;

// ---------------------------------------------------------------------------
// from

/** `from Orders`, `from @all_docs`, `from 'Orders' as o`. */
export interface FromCollection extends Node {
  kind: 'collection';
  /** `@all_docs` queries every collection. */
  name: string;
  alias?: string;
}

/** `from index 'Orders/Totals' as o`. */
export interface FromIndex extends Node {
  kind: 'index';
  name: string;
  alias?: string;
}

export type FromSource = FromCollection | FromIndex;

// ---------------------------------------------------------------------------
// where

/** `==` is read as `=` and `<>` as `!=`. */
export type ComparisonOperator = '=' | '!=' | '<' | '<=' | '>' | '>=';

/** `Total > 10`, `id() = $id`. */
export interface ComparisonExpression extends Node {
  kind: 'comparison';
  operator: ComparisonOperator;
  left: Operand;
  right: Value;
}

/** `Total between 10 and 20` (both ends inclusive). */
export interface BetweenExpression extends Node {
  kind: 'between';
  left: Operand;
  low: Value;
  high: Value;
}

/** `Tag in ('a', 'b')`; with `all` set, `Tags all in ('a', 'b')`. */
export interface InExpression extends Node {
  kind: 'in';
  left: Operand;
  all: boolean;
  values: Value[];
}

/** `a and b and c`: at least two operands. A parenthesised `and` inside stays nested. */
export interface AndExpression extends Node {
  kind: 'and';
  operands: Expression[];
}

/** `a or b or c`: at least two operands. */
export interface OrExpression extends Node {
  kind: 'or';
  operands: Expression[];
}

/** `not a`. Binds tighter than `and`, which binds tighter than `or`. */
export interface NotExpression extends Node {
  kind: 'not';
  operand: Expression;
}

/** `true`: matches every document (`where true and not ...`). */
export interface TrueExpression extends Node {
  kind: 'true';
}

/** `startsWith(Name, 'Al')`. */
export interface StartsWithExpression extends Node {
  kind: 'startsWith';
  field: Operand;
  value: TextValue;
}

/** `endsWith(Name, 'son')`. */
export interface EndsWithExpression extends Node {
  kind: 'endsWith';
  field: Operand;
  value: TextValue;
}

/** `regex(Name, '^A.*e$')`. */
export interface RegexExpression extends Node {
  kind: 'regex';
  field: Operand;
  pattern: TextValue;
}

/** `exists(Phone)`. */
export interface ExistsExpression extends Node {
  kind: 'exists';
  field: FieldPath;
}

/** `search(Description, 'red shoes'[, and])`: full-text search; `operator` joins the terms (default `or`). */
export interface SearchExpression extends Node {
  kind: 'search';
  field: FieldPath;
  terms: TextValue;
  operator?: 'and' | 'or';
}

/** `boost(Name = 'x', 10)`: scales the score of matches of `expression`. */
export interface BoostExpression extends Node {
  kind: 'boost';
  expression: Expression;
  factor: NumericValue;
}

export type SpatialRelation = 'within' | 'contains' | 'intersects' | 'disjoint';

/** `spatial.within(Location, spatial.circle(10, 32.1, 34.8, 'miles'))`. */
export interface SpatialExpression extends Node {
  kind: 'spatial';
  relation: SpatialRelation;
  target: SpatialTarget;
  shape: SpatialShape;
}

/** `spatial.point(Latitude, Longitude)` as the thing being searched: two fields of the document. */
export interface SpatialFieldPoint extends Node {
  kind: 'spatialFieldPoint';
  latitude: FieldPath;
  longitude: FieldPath;
}

/** A spatial field of an index, or a point built from two document fields. */
export type SpatialTarget = FieldPath | SpatialFieldPoint;

/** `spatial.circle(radius, latitude, longitude[, 'miles' | 'kilometers'])` (`'km'` is read as `'kilometers'`). */
export interface SpatialCircle extends Node {
  kind: 'circle';
  radius: NumericValue;
  latitude: NumericValue;
  longitude: NumericValue;
  units?: 'miles' | 'kilometers';
}

/** `spatial.wkt('POLYGON((...))')`. */
export interface SpatialWkt extends Node {
  kind: 'wkt';
  wkt: TextValue;
}

export type SpatialShape = SpatialCircle | SpatialWkt;

/** `spatial.point(47.6, -122.3)`: a fixed point (the origin of `spatial.distance`). */
export interface SpatialPoint extends Node {
  kind: 'point';
  latitude: NumericValue;
  longitude: NumericValue;
}

export type Expression =
  | ComparisonExpression
  | BetweenExpression
  | InExpression
  | AndExpression
  | OrExpression
  | NotExpression
  | TrueExpression
  | StartsWithExpression
  | EndsWithExpression
  | RegexExpression
  | ExistsExpression
  | SearchExpression
  | BoostExpression
  | SpatialExpression;

// ---------------------------------------------------------------------------
// group by, order by, load

/** `group by Company`, `group by array(Lines[].Product) as Product`. */
export interface GroupByItem extends Node {
  kind: 'groupByItem';
  expression: FieldPath | FunctionCall;
  alias?: string;
}

export type OrderingType = 'string' | 'long' | 'double' | 'alphanumeric';

/** `spatial.distance(Location, spatial.point(47.6, -122.3)[, roundFactor])` in `order by`. */
export interface SpatialDistance extends Node {
  kind: 'spatialDistance';
  target: SpatialTarget;
  point: SpatialPoint;
  roundFactor?: NumericValue;
}

/** `Name`, `Freight as double desc`, `score()`, `random()`, `spatial.distance(...) asc`. */
export interface OrderItem extends Node {
  kind: 'orderItem';
  expression: FieldPath | FunctionCall | SpatialDistance;
  direction: 'asc' | 'desc';
  /** How to compare values (`as long`); absent means the server decides. */
  ordering?: OrderingType;
}

/** `load o.Company as c`: loads the document whose id is in `path`, visible in `select` as `alias`. */
export interface LoadItem extends Node {
  kind: 'loadItem';
  path: FieldPath;
  alias: string;
}

// ---------------------------------------------------------------------------
// select

/** `Name`, `o.Total as Total`, `count()`, `sum(Lines[].Quantity) as Qty`. */
export interface Projection extends Node {
  kind: 'projection';
  expression: FieldPath | FunctionCall;
  alias?: string;
}

/** `select [distinct] a, b as c, count()`. */
export interface SelectFields extends Node {
  kind: 'selectFields';
  distinct: boolean;
  projections: Projection[];
}

/** `sum(Price)`, `avg(...)`, `min(...)`, `max(...)` inside a facet. */
export interface FacetAggregation extends Node {
  kind: 'facetAggregation';
  function: 'sum' | 'avg' | 'min' | 'max';
  field: FieldPath;
}

/** `facet(Brand[, sum(Price)...][, $options])`: one bucket per distinct value of the field. */
export interface FieldFacet extends Node {
  kind: 'fieldFacet';
  field: FieldPath;
  aggregations: FacetAggregation[];
  options?: Parameter;
  alias?: string;
}

/** One range of a range facet: `Price < 10`, `Price between 10 and 20`, `Price >= 10 and Price < 20`. */
export type FacetRange = ComparisonExpression | BetweenExpression | AndExpression;

/** `facet(Price < 10, Price between 10 and 20, Price >= 20[, aggregations][, $options])`. */
export interface RangeFacet extends Node {
  kind: 'rangeFacet';
  ranges: FacetRange[];
  aggregations: FacetAggregation[];
  options?: Parameter;
  alias?: string;
}

export type Facet = FieldFacet | RangeFacet;

/** `select facet(Brand), facet(Price < 10, Price >= 10)`. */
export interface SelectFacets extends Node {
  kind: 'selectFacets';
  facets: Facet[];
}

/** `suggest(Name, 'jhon'[, $options])`. */
export interface Suggestion extends Node {
  kind: 'suggestion';
  field: FieldPath;
  term: TextValue;
  options?: Parameter;
  alias?: string;
}

/** `select suggest(Name, 'jhon')`. */
export interface SelectSuggest extends Node {
  kind: 'selectSuggest';
  suggestions: Suggestion[];
}

export type SelectClause = SelectFields | SelectFacets | SelectSuggest;

// ---------------------------------------------------------------------------
// include and the query

/** `include Company, Lines[].Product, timings(), explanations()`. */
export type IncludeItem = FieldPath | FunctionCall;

/**
 * One RQL query. Clauses appear in the text in this order:
 * `from`, `group by`, `where`, `order by`, `load`, `select`, `include`, `limit`, `offset`.
 * `limit 5, 10` (RavenDB's skip, take form) is read as `limit 10 offset 5`.
 */
export interface RqlQuery extends Node {
  kind: 'query';
  from: FromSource;
  groupBy?: GroupByItem[];
  where?: Expression;
  orderBy?: OrderItem[];
  load?: LoadItem[];
  select?: SelectClause;
  include?: IncludeItem[];
  limit?: NumericValue;
  offset?: NumericValue;
}

/** Every kind of node in the tree. */
export type RqlNode =
  | RqlQuery
  | FromSource
  | Expression
  | Value
  | FieldPath
  | FunctionCall
  | SpatialFieldPoint
  | SpatialShape
  | SpatialPoint
  | SpatialDistance
  | GroupByItem
  | OrderItem
  | LoadItem
  | SelectClause
  | Projection
  | Facet
  | FacetAggregation
  | Suggestion;

/**
 * `T` with `position` removed everywhere, for trees built by hand:
 * `formatRql` accepts them since it never reads positions.
 */
export type Unpositioned<T> = T extends readonly (infer E)[]
  ? Unpositioned<E>[]
  : T extends object
    ? { [K in keyof T as K extends 'position' ? never : K]: Unpositioned<T[K]> }
    : T;
