// Builds RQL from fluent calls, RavenDB-style. Every value becomes a $parameter (p0, p1, …): nothing a
// caller passes is spliced into the query text, and equal queries with different values share one text
// (and one automatic index). Conditions join with `and` unless orElse() says `or`; not, openSubclause()
// and closeSubclause() nest them.
import type { QueryParameters, QueryRequest } from '@rookery/protocol';
import { clientError } from '../errors.js';
import type { Facet, FacetRange, SuggestionRequest } from './facets.js';
import { formatField, formatName, quoteString } from './rql-text.js';

export type QueryValue = string | number | boolean | null | Date;
export type OrderingType = 'string' | 'long' | 'double' | 'alphanumeric';
export type QuerySource = { collection: string } | { indexName: string };

type ParameterValue = QueryParameters[string];
type Scalar = Exclude<ParameterValue, unknown[]>;
type SelectClause =
  | { kind: 'fields'; fields: { field: string; alias?: string }[] }
  | { kind: 'facets'; facets: Facet[] }
  | { kind: 'suggest'; suggestions: SuggestionRequest[] };

function scalar(value: QueryValue): Scalar {
  if (value instanceof Date) {
    if (Number.isNaN(value.getTime()))
      throw clientError('InvalidArgument', 'a query value is an invalid Date');
    return value.toISOString();
  }
  if (typeof value === 'number' && !Number.isFinite(value)) {
    throw clientError('InvalidArgument', `a query value must be a finite number, got ${value}`);
  }
  return value;
}

function nonNegativeInteger(value: number, what: string): number {
  if (!Number.isSafeInteger(value) || value < 0) {
    throw clientError('InvalidArgument', `${what} must be a whole number ≥ 0, got ${value}`);
  }
  return value;
}

export class QueryBuilder {
  private readonly whereTokens: string[] = [];
  private readonly parameters: Record<string, ParameterValue> = {};
  private readonly orderings: string[] = [];
  private readonly includes: string[] = [];
  private select: SelectClause | null = null;
  private skipCount: number | null = null;
  private takeCount: number | null = null;
  private nextParameter = 0;
  private negateNext = false;
  private nextOperator: 'and' | 'or' = 'and';
  protected waitForNonStale: { timeoutMs: number | undefined } | null = null;

  constructor(readonly source: QuerySource) {}

  // -- where --------------------------------------------------------------------------------------------

  whereEquals(field: string, value: QueryValue): this {
    return this.condition(`${formatField(field)} = ${this.parameter(scalar(value))}`);
  }
  whereNotEquals(field: string, value: QueryValue): this {
    return this.condition(`${formatField(field)} != ${this.parameter(scalar(value))}`);
  }
  whereGreaterThan(field: string, value: QueryValue): this {
    return this.condition(`${formatField(field)} > ${this.parameter(scalar(value))}`);
  }
  whereGreaterThanOrEqual(field: string, value: QueryValue): this {
    return this.condition(`${formatField(field)} >= ${this.parameter(scalar(value))}`);
  }
  whereLessThan(field: string, value: QueryValue): this {
    return this.condition(`${formatField(field)} < ${this.parameter(scalar(value))}`);
  }
  whereLessThanOrEqual(field: string, value: QueryValue): this {
    return this.condition(`${formatField(field)} <= ${this.parameter(scalar(value))}`);
  }
  /** Both ends inclusive. */
  whereBetween(field: string, low: QueryValue, high: QueryValue): this {
    const lowParameter = this.parameter(scalar(low));
    return this.condition(
      `${formatField(field)} between ${lowParameter} and ${this.parameter(scalar(high))}`,
    );
  }
  /** The field equals one of the values (an array field: contains any of them). */
  whereIn(field: string, values: readonly QueryValue[]): this {
    return this.condition(`${formatField(field)} in (${this.parameter(values.map(scalar))})`);
  }
  /** An array field contains every one of the values. */
  containsAll(field: string, values: readonly QueryValue[]): this {
    return this.condition(`${formatField(field)} all in (${this.parameter(values.map(scalar))})`);
  }
  whereStartsWith(field: string, prefix: string): this {
    return this.condition(`startsWith(${formatField(field)}, ${this.parameter(prefix)})`);
  }
  whereEndsWith(field: string, suffix: string): this {
    return this.condition(`endsWith(${formatField(field)}, ${this.parameter(suffix)})`);
  }
  whereExists(field: string): this {
    return this.condition(`exists(${formatField(field)})`);
  }
  /** Full-text search of a field analysed for search; `operator` joins the terms (default: any of them). */
  search(field: string, terms: string, operator: 'or' | 'and' = 'or'): this {
    const joined = operator === 'and' ? ', and' : '';
    return this.condition(`search(${formatField(field)}, ${this.parameter(terms)}${joined})`);
  }

  /** The next condition joins with `and` (the default). */
  andAlso(): this {
    this.nextOperator = 'and';
    return this;
  }
  /** The next condition joins with `or`. */
  orElse(): this {
    this.nextOperator = 'or';
    return this;
  }
  /** Negates the next condition or subclause: `query.not.whereEquals(…)`. */
  get not(): this {
    this.negateNext = !this.negateNext;
    return this;
  }
  openSubclause(): this {
    this.whereTokens.push(`${this.joinPrefix()}(`);
    return this;
  }
  closeSubclause(): this {
    const last = this.whereTokens.at(-1);
    if (last === undefined || openSubclauses(this.whereTokens) === 0) {
      throw clientError('InvalidArgument', 'closeSubclause() without an open subclause');
    }
    if (last.endsWith('(')) throw clientError('InvalidArgument', 'a subclause needs at least one condition');
    this.whereTokens.push(')');
    return this;
  }

  // -- order, paging, projection, includes ----------------------------------------------------------------

  orderBy(field: string, ordering?: OrderingType): this {
    this.orderings.push(formatField(field) + (ordering === undefined ? '' : ` as ${ordering}`));
    return this;
  }
  orderByDescending(field: string, ordering?: OrderingType): this {
    this.orderings.push(`${formatField(field)}${ordering === undefined ? '' : ` as ${ordering}`} desc`);
    return this;
  }
  /** Best full-text matches first. */
  orderByScore(): this {
    this.orderings.push('score()');
    return this;
  }
  skip(count: number): this {
    this.skipCount = nonNegativeInteger(count, 'skip');
    return this;
  }
  take(count: number): this {
    this.takeCount = nonNegativeInteger(count, 'take');
    return this;
  }
  /** Returns these fields instead of whole documents (`'Address.City'` or `{ field, as }`). */
  selectFields(...fields: (string | { field: string; as: string })[]): this {
    this.select = {
      kind: 'fields',
      fields: fields.map((f) => (typeof f === 'string' ? { field: f } : { field: f.field, alias: f.as })),
    };
    return this;
  }
  /** Loads the documents whose ids are in this path along with the results (`Company`, `Lines[].Product`). */
  include(path: string): this {
    this.includes.push(formatField(path));
    return this;
  }
  waitForNonStaleResults(timeoutMs?: number): this {
    this.waitForNonStale = { timeoutMs };
    return this;
  }

  protected setFacets(facets: Facet[]): void {
    if (facets.length === 0) throw clientError('InvalidArgument', 'aggregateBy() needs at least one facet');
    this.select = { kind: 'facets', facets };
  }
  protected setSuggestions(suggestions: SuggestionRequest[]): void {
    if (suggestions.length === 0) throw clientError('InvalidArgument', 'suggestUsing() needs a suggestion');
    this.select = { kind: 'suggest', suggestions };
  }
  protected get isProjection(): boolean {
    return this.select !== null;
  }

  // -- output ---------------------------------------------------------------------------------------------

  /** The RQL text (values appear as $p0, $p1, …: see `toRequest()` for the parameters). */
  toString(): string {
    return this.render(this.takeCount).text;
  }

  /** The body of `POST /databases/{db}/queries`; `take` overrides the page size (count(), first()…). */
  toRequest(take: number | null = this.takeCount): QueryRequest {
    const { text, parameters } = this.render(take);
    const request: QueryRequest = { Query: text };
    if (Object.keys(parameters).length > 0) request.QueryParameters = parameters;
    if (this.waitForNonStale !== null) {
      request.WaitForNonStaleResults = true;
      if (this.waitForNonStale.timeoutMs !== undefined) {
        request.WaitForNonStaleResultsTimeoutMs = this.waitForNonStale.timeoutMs;
      }
    }
    return request;
  }

  private render(take: number | null): { text: string; parameters: QueryParameters } {
    const open = openSubclauses(this.whereTokens);
    if (open > 0) throw clientError('InvalidArgument', `${open} subclause(s) left open`);
    // Values met while rendering (facets, suggestions, paging) get their names here, in rendering order,
    // so the same builder renders the same text every time.
    const parameters: Record<string, ParameterValue> = { ...this.parameters };
    let rendered = 0;
    const parameter = (value: ParameterValue) => {
      const name = `r${rendered++}`;
      parameters[name] = value;
      return `$${name}`;
    };
    const lines = [
      'collection' in this.source
        ? `from ${formatName(this.source.collection)}`
        : `from index ${quoteString(this.source.indexName)}`,
    ];
    if (this.whereTokens.length > 0) lines.push(`where ${joinTokens(this.whereTokens)}`);
    if (this.orderings.length > 0) lines.push(`order by ${this.orderings.join(', ')}`);
    if (this.select !== null) lines.push(`select ${renderSelect(this.select, parameter)}`);
    if (this.includes.length > 0) lines.push(`include ${this.includes.join(', ')}`);
    const limits: string[] = [];
    if (take !== null) limits.push(`limit ${parameter(take)}`);
    if (this.skipCount !== null) limits.push(`offset ${parameter(this.skipCount)}`);
    if (limits.length > 0) lines.push(limits.join(' '));
    return { text: lines.join('\n'), parameters };
  }

  private parameter(value: ParameterValue): string {
    const name = `p${this.nextParameter++}`;
    this.parameters[name] = value;
    return `$${name}`;
  }

  /** Adds a condition, joined to the previous one and negated as asked. */
  private condition(text: string): this {
    this.whereTokens.push(this.joinPrefix() + text);
    return this;
  }

  /** The operator joining the next condition or subclause to the previous one, and its `not`. */
  private joinPrefix(): string {
    const previous = this.whereTokens.at(-1);
    const startsGroup = previous === undefined || previous.endsWith('(');
    let prefix = startsGroup ? '' : `${this.nextOperator} `;
    this.nextOperator = 'and';
    if (this.negateNext) {
      this.negateNext = false;
      // RavenDB's RQL negates within a conjunction: a group that starts negated reads `true and not …`.
      prefix += startsGroup ? 'true and not ' : 'not ';
    }
    return prefix;
  }
}

type Parameterise = (value: ParameterValue) => string;

/** Subclauses opened and not closed yet (a token ending in `(` opens one; conditions end otherwise). */
function openSubclauses(tokens: readonly string[]): number {
  let open = 0;
  for (const token of tokens) {
    if (token.endsWith('(')) open += 1;
    else if (token === ')') open -= 1;
  }
  return open;
}

/** Tokens joined by spaces, none just inside the parentheses of a subclause. */
function joinTokens(tokens: readonly string[]): string {
  let text = '';
  for (const token of tokens) {
    const tight = text === '' || text.endsWith('(') || token === ')';
    text += tight ? token : ` ${token}`;
  }
  return text;
}

const aliasOf = (alias: string | undefined) => (alias === undefined ? '' : ` as ${formatName(alias)}`);

function renderSelect(select: SelectClause, parameter: Parameterise): string {
  switch (select.kind) {
    case 'fields':
      return select.fields.map((f) => formatField(f.field) + aliasOf(f.alias)).join(', ');
    case 'facets':
      return select.facets.map((f) => renderFacet(f, parameter)).join(', ');
    case 'suggest':
      return select.suggestions
        .map((s) => `suggest(${formatField(s.field)}, ${parameter(s.term)})${aliasOf(s.alias)}`)
        .join(', ');
  }
}

function renderFacet(facet: Facet, parameter: Parameterise): string {
  if (facet.kind === 'ranges') {
    if (facet.ranges.length === 0) throw clientError('InvalidArgument', 'a range facet needs ranges');
    return `facet(${facet.ranges.map((r) => renderRange(r, parameter)).join(', ')})${aliasOf(facet.alias)}`;
  }
  const { pageSize, termSortMode, alias } = facet.options;
  const options: Record<string, unknown> = {};
  if (pageSize !== undefined) options.PageSize = nonNegativeInteger(pageSize, 'pageSize');
  if (termSortMode !== undefined) options.TermSortMode = termSortMode;
  // The server takes a facet's options as one parameter holding JSON text.
  const optionsArgument = Object.keys(options).length > 0 ? `, ${parameter(JSON.stringify(options))}` : '';
  return `facet(${formatField(facet.field)}${optionsArgument})${aliasOf(alias)}`;
}

function renderRange(range: FacetRange, parameter: Parameterise): string {
  const field = formatField(range.field);
  const parts: string[] = [];
  if (range.low !== null) {
    parts.push(`${field} ${range.low.inclusive ? '>=' : '>'} ${parameter(scalar(range.low.value))}`);
  }
  if (range.high !== null) {
    parts.push(`${field} ${range.high.inclusive ? '<=' : '<'} ${parameter(scalar(range.high.value))}`);
  }
  if (parts.length === 0) throw clientError('InvalidArgument', `the range on ${range.field} has no bounds`);
  return parts.join(' and ');
}
