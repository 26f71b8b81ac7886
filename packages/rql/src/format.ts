// Prints a query tree as canonical RQL: one clause per line, lower-case keywords,
// single-quoted strings, names quoted only when they must be, parentheses only
// where precedence needs them. Parsing the output gives back the same tree
// (positions aside), and formatting that tree gives the same text.

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
  LoadItem,
  OrderItem,
  Projection,
  RqlQuery,
  SelectClause,
  SpatialPoint,
  SpatialShape,
  SpatialTarget,
  Suggestion,
  Unpositioned,
  Value,
} from './ast.js';
import { canPrintBare, canPrintBareArgumentField, isParameterName } from './identifiers.js';

type U<T> = Unpositioned<T>;

/**
 * Canonical RQL text for `query`. Accepts trees from `parseRql` and trees built by
 * hand (positions are never read).
 *
 * One thing cannot be printed faithfully: inside a function call's parentheses a
 * quoted string is a string literal, so a field argument whose first segment needs
 * quotes (`sum('Unit Price')`) comes back as a string.
 */
export function formatRql(query: U<RqlQuery>): string {
  const lines = [`from ${formatFrom(query.from)}`];
  if (query.groupBy) lines.push(`group by ${query.groupBy.map(formatGroupByItem).join(', ')}`);
  if (query.where) lines.push(`where ${formatExpression(query.where)}`);
  if (query.orderBy) lines.push(`order by ${query.orderBy.map(formatOrderItem).join(', ')}`);
  if (query.load) lines.push(`load ${query.load.map(formatLoadItem).join(', ')}`);
  if (query.select) lines.push(`select ${formatSelect(query.select)}`);
  if (query.include) lines.push(`include ${query.include.map(formatPathOrCall).join(', ')}`);
  const paging: string[] = [];
  if (query.limit) paging.push(`limit ${formatValue(query.limit)}`);
  if (query.offset) paging.push(`offset ${formatValue(query.offset)}`);
  if (paging.length > 0) lines.push(paging.join(' '));
  return lines.join('\n');
}

/** A string literal: single quotes, with `\`, `'` and line breaks escaped. */
export function quoteString(text: string): string {
  const escaped = text.replace(/[\\'\n\r\t]/g, (char) => {
    switch (char) {
      case '\n':
        return '\\n';
      case '\r':
        return '\\r';
      case '\t':
        return '\\t';
      default:
        return `\\${char}`;
    }
  });
  return `'${escaped}'`;
}

/** A name bare when that reads back the same, otherwise quoted (also what @rookery/client emits names with). */
export function formatName(name: string, allowAt = false): string {
  return canPrintBare(name, allowAt) ? name : quoteString(name);
}

function formatFrom(from: U<FromSource>): string {
  const source = from.kind === 'index' ? `index ${quoteString(from.name)}` : formatName(from.name, true);
  return from.alias === undefined ? source : `${source} as ${formatName(from.alias)}`;
}

function withAlias(text: string, alias: string | undefined): string {
  return alias === undefined ? text : `${text} as ${formatName(alias)}`;
}

function formatGroupByItem(item: U<GroupByItem>): string {
  return withAlias(formatPathOrCall(item.expression), item.alias);
}

function formatOrderItem(item: U<OrderItem>): string {
  const expression = item.expression;
  let text: string;
  if (expression.kind === 'spatialDistance') {
    const round = expression.roundFactor === undefined ? '' : `, ${formatValue(expression.roundFactor)}`;
    text = `spatial.distance(${formatSpatialTarget(expression.target)}, ${formatPoint(expression.point)}${round})`;
  } else {
    text = formatPathOrCall(expression);
  }
  if (item.ordering !== undefined) text += ` as ${item.ordering}`;
  if (item.direction === 'desc') text += ' desc';
  return text;
}

function formatLoadItem(item: U<LoadItem>): string {
  return `${formatField(item.path)} as ${formatName(item.alias)}`;
}

function formatSelect(select: U<SelectClause>): string {
  switch (select.kind) {
    case 'selectFields':
      return (select.distinct ? 'distinct ' : '') + select.projections.map(formatProjection).join(', ');
    case 'selectFacets':
      return select.facets.map(formatFacet).join(', ');
    case 'selectSuggest':
      return select.suggestions.map(formatSuggestion).join(', ');
  }
}

function formatProjection(projection: U<Projection>): string {
  return withAlias(formatPathOrCall(projection.expression), projection.alias);
}

function formatFacet(facet: U<Facet>): string {
  const args =
    facet.kind === 'fieldFacet'
      ? [formatField(facet.field)]
      : facet.ranges.map((range) => formatRange(range));
  args.push(...facet.aggregations.map(formatAggregation));
  if (facet.options) args.push(formatValue(facet.options));
  return withAlias(`facet(${args.join(', ')})`, facet.alias);
}

function formatRange(range: U<FacetRange>): string {
  if (range.kind === 'and') return range.operands.map((operand) => formatExpression(operand)).join(' and ');
  return formatExpression(range);
}

function formatAggregation(aggregation: U<FacetAggregation>): string {
  return `${aggregation.function}(${formatField(aggregation.field)})`;
}

function formatSuggestion(suggestion: U<Suggestion>): string {
  const options = suggestion.options ? `, ${formatValue(suggestion.options)}` : '';
  return withAlias(
    `suggest(${formatField(suggestion.field)}, ${formatValue(suggestion.term)}${options})`,
    suggestion.alias,
  );
}

/** Parenthesises `child` where the parser would otherwise group it differently. */
function operand(child: U<Expression>, parenthesise: boolean): string {
  const text = formatExpression(child);
  return parenthesise ? `(${text})` : text;
}

/** A `where` expression. */
export function formatExpression(expression: U<Expression>): string {
  switch (expression.kind) {
    case 'or':
      return expression.operands.map((child) => operand(child, child.kind === 'or')).join(' or ');
    case 'and':
      return expression.operands
        .map((child) => operand(child, child.kind === 'or' || child.kind === 'and'))
        .join(' and ');
    case 'not': {
      const child = expression.operand;
      return `not ${operand(child, child.kind === 'or' || child.kind === 'and')}`;
    }
    case 'true':
      return 'true';
    case 'comparison':
      return `${formatPathOrCall(expression.left)} ${expression.operator} ${formatValue(expression.right)}`;
    case 'between':
      return `${formatPathOrCall(expression.left)} between ${formatValue(expression.low)} and ${formatValue(expression.high)}`;
    case 'in':
      return `${formatPathOrCall(expression.left)} ${expression.all ? 'all in' : 'in'} (${expression.values.map(formatValue).join(', ')})`;
    case 'startsWith':
    case 'endsWith':
      return `${expression.kind}(${formatPathOrCall(expression.field)}, ${formatValue(expression.value)})`;
    case 'regex':
      return `regex(${formatPathOrCall(expression.field)}, ${formatValue(expression.pattern)})`;
    case 'exists':
      return `exists(${formatField(expression.field)})`;
    case 'search': {
      const operator = expression.operator === undefined ? '' : `, ${expression.operator}`;
      return `search(${formatField(expression.field)}, ${formatValue(expression.terms)}${operator})`;
    }
    case 'boost':
      return `boost(${formatExpression(expression.expression)}, ${formatValue(expression.factor)})`;
    case 'spatial':
      return `spatial.${expression.relation}(${formatSpatialTarget(expression.target)}, ${formatShape(expression.shape)})`;
  }
}

function formatSpatialTarget(target: U<SpatialTarget>): string {
  if (target.kind === 'field') return formatField(target);
  return `spatial.point(${formatField(target.latitude)}, ${formatField(target.longitude)})`;
}

function formatShape(shape: U<SpatialShape>): string {
  if (shape.kind === 'wkt') return `spatial.wkt(${formatValue(shape.wkt)})`;
  const units = shape.units === undefined ? '' : `, ${quoteString(shape.units)}`;
  return `spatial.circle(${formatValue(shape.radius)}, ${formatValue(shape.latitude)}, ${formatValue(shape.longitude)}${units})`;
}

function formatPoint(point: U<SpatialPoint>): string {
  return `spatial.point(${formatValue(point.latitude)}, ${formatValue(point.longitude)})`;
}

/** `Lines[].Product`, `@metadata.'@collection'`. */
export function formatField(path: U<FieldPath>): string {
  return formatSegments(path, (first) => formatName(first, true));
}

/** The path's names joined by `.`; the first printed by `formatFirst`, the rest bare or quoted. */
function formatSegments(path: U<FieldPath>, formatFirst: (name: string) => string): string {
  return path.segments
    .map(
      (segment, index) =>
        (index === 0 ? formatFirst(segment.name) : formatName(segment.name)) + (segment.array ? '[]' : ''),
    )
    .join('.');
}

/**
 * A field inside call arguments. Its first name must print bare even when it is a
 * keyword (`count(and)`): quoted, it would read back as a string argument.
 */
function formatArgumentField(path: U<FieldPath>): string {
  return formatSegments(path, (first) => {
    if (canPrintBareArgumentField(first)) return first;
    throw new RangeError(`cannot print field ${JSON.stringify(first)} inside call arguments`);
  });
}

function formatPathOrCall(item: U<FieldPath> | U<FunctionCall>): string {
  return item.kind === 'field' ? formatField(item) : formatCall(item);
}

function formatCall(call: U<FunctionCall>): string {
  return `${call.name}(${call.args.map(formatArgument).join(', ')})`;
}

function formatArgument(argument: U<CallArgument>): string {
  if (argument.kind === 'field') return formatArgumentField(argument);
  if (argument.kind === 'call') return formatCall(argument);
  return formatValue(argument);
}

export function formatValue(value: U<Value>): string {
  switch (value.kind) {
    case 'string':
      return quoteString(value.value);
    case 'number':
      return value.raw;
    case 'boolean':
      return value.value ? 'true' : 'false';
    case 'null':
      return 'null';
    case 'parameter':
      if (!isParameterName(value.name))
        throw new RangeError(`cannot print parameter name ${JSON.stringify(value.name)}`);
      return `$${value.name}`;
  }
}
