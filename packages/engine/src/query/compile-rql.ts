import { type QueryParameters, RookeryError } from '@rookery/protocol';
import type {
  Expression,
  FieldPath,
  FunctionCall,
  NumericValue,
  Operand,
  OrderItem,
  RqlQuery,
  SourceRange,
  SpatialTarget,
  TextValue,
  Value,
} from '@rookery/rql';
import { MAX_IN_VALUES, parseRql, RqlSyntaxError } from '@rookery/rql';
import { z } from 'zod';
import type { FacetSpec, OrderKey, Predicate, Scalar } from './plan.js';

const MILES_IN_KM = 1.609344;
/** The index field RQL's `id()` reads (auto indexes add it when a query needs it). */
export const ID_FIELD = '@id';

/** Parses RQL text; a syntax error becomes a 400 `InvalidQuery` saying where. */
export function parseQueryText(text: string): RqlQuery {
  try {
    return parseRql(text);
  } catch (error) {
    if (error instanceof RqlSyntaxError) {
      throw new RookeryError('InvalidQuery', error.message, { line: error.line, column: error.column });
    }
    throw error;
  }
}

function unsupported(what: string, position: SourceRange | undefined, hint: string): RookeryError {
  const at = position ? ` (line ${position.start.line}, column ${position.start.column})` : '';
  return new RookeryError('InvalidQuery', `${what} is not supported${at}: ${hint}`);
}

/**
 * Turns RQL nodes into the engine's plan, resolving `$parameters` and the
 * `from … as alias` prefix. Knows nothing about indexes: field names stay
 * as written (`Address.City`, `Lines[].Product`).
 */
export class RqlCompiler {
  /** Fields a `search()` uses: an automatic index must analyse them as full text. */
  readonly searchedFields = new Set<string>();
  /** Every field the query filters, sorts or facets on. */
  readonly usedFields = new Set<string>();
  /** Spatial fields built from two document fields: index field name → source paths. */
  readonly spatialSources = new Map<string, { Lat: string; Lng: string }>();

  constructor(
    private readonly query: RqlQuery,
    private readonly parameters: QueryParameters,
  ) {}

  get alias(): string | undefined {
    return this.query.from.alias;
  }

  fieldName(path: FieldPath): string {
    const segments = path.segments.map((s) => (s.array ? `${s.name}[]` : s.name));
    if (this.alias !== undefined && segments.length > 1 && segments[0] === this.alias) segments.shift();
    return segments.join('.');
  }

  where(): Predicate | null {
    return this.query.where ? this.expression(this.query.where) : null;
  }

  orderBy(): OrderKey[] {
    return (this.query.orderBy ?? []).map((item) => this.orderItem(item));
  }

  value(value: Value): Scalar {
    switch (value.kind) {
      case 'string':
      case 'number':
      case 'boolean':
        return value.value;
      case 'null':
        return null;
      case 'parameter': {
        const resolved = this.parameter(value.name, value.position);
        if (Array.isArray(resolved)) {
          throw new RookeryError(
            'InvalidQuery',
            `$${value.name} is a list but is used where one value is expected; use it with "in ($${value.name})"`,
          );
        }
        return resolved;
      }
    }
  }

  number(value: NumericValue, what: string): number {
    const resolved = this.value(value);
    if (typeof resolved !== 'number' || !Number.isFinite(resolved)) {
      throw new RookeryError('InvalidQuery', `${what} must be a number, got ${JSON.stringify(resolved)}`);
    }
    return resolved;
  }

  text(value: TextValue, what: string): string {
    const resolved = this.value(value);
    if (typeof resolved !== 'string') {
      throw new RookeryError('InvalidQuery', `${what} must be text, got ${JSON.stringify(resolved)}`);
    }
    return resolved;
  }

  private parameter(name: string, position: SourceRange): QueryParameters[string] {
    if (!Object.hasOwn(this.parameters, name)) {
      throw new RookeryError(
        'InvalidQuery',
        `The query uses $${name} (line ${position.start.line}, column ${position.start.column}) but QueryParameters ` +
          `has no "${name}"; pass it with the query`,
      );
    }
    return this.parameters[name] as QueryParameters[string];
  }

  private operandField(operand: Operand): string {
    if (operand.kind === 'field') {
      const name = this.fieldName(operand);
      this.usedFields.add(name);
      return name;
    }
    if (operand.name.toLowerCase() === 'id' && operand.args.length === 0) {
      this.usedFields.add(ID_FIELD);
      return ID_FIELD;
    }
    throw unsupported(`${operand.name}() in a condition`, operand.position, 'compare a field or id()');
  }

  private expression(e: Expression): Predicate {
    switch (e.kind) {
      case 'true':
        return { kind: 'true' };
      case 'and':
      case 'or':
        return { kind: e.kind, children: e.operands.map((o) => this.expression(o)) };
      case 'not':
        return { kind: 'not', child: this.expression(e.operand) };
      case 'comparison':
        return {
          kind: 'compare',
          field: this.operandField(e.left),
          op: e.operator,
          value: this.value(e.right),
        };
      case 'between':
        return {
          kind: 'between',
          field: this.operandField(e.left),
          low: this.value(e.low),
          high: this.value(e.high),
        };
      case 'in': {
        const values: Scalar[] = [];
        for (const v of e.values) {
          if (v.kind === 'parameter') {
            const resolved = this.parameter(v.name, v.position);
            // One by one: spreading a 10,000-value array into push() passes 10,000 arguments.
            if (Array.isArray(resolved)) for (const item of resolved) values.push(item);
            else values.push(resolved);
          } else values.push(this.value(v));
        }
        if (values.length > MAX_IN_VALUES) {
          throw new RookeryError(
            'InvalidQuery',
            `The ${e.all ? 'all in' : 'in'} list at line ${e.position.start.line}, column ${e.position.start.column} ` +
              `holds ${values.length.toLocaleString('en-US')} values; a list holds at most ` +
              `${MAX_IN_VALUES.toLocaleString('en-US')}: split the query, or query a field that groups them`,
          );
        }
        return { kind: 'in', field: this.operandField(e.left), values, all: e.all };
      }
      case 'startsWith':
      case 'endsWith':
        return {
          kind: e.kind,
          field: this.operandField(e.field),
          value: this.text(e.value, `${e.kind}()'s value`),
        };
      case 'exists':
        return { kind: 'exists', field: this.operandField(e.field) };
      case 'search': {
        const field = this.operandField(e.field);
        this.searchedFields.add(field);
        return {
          kind: 'search',
          field,
          terms: this.text(e.terms, 'search terms'),
          operator: e.operator ?? 'or',
        };
      }
      case 'boost':
        // Ranking is by bm25 on the search; a boost factor does not change which documents match.
        return this.expression(e.expression);
      case 'regex':
        throw unsupported('regex()', e.position, 'use startsWith(), endsWith() or search()');
      case 'spatial': {
        if (e.relation !== 'within' || e.shape.kind !== 'circle') {
          throw unsupported(
            `spatial.${e.relation}(…, ${e.shape.kind === 'wkt' ? 'spatial.wkt' : 'spatial.circle'})`,
            e.position,
            'use spatial.within(field, spatial.circle(radius, lat, lng[, units]))',
          );
        }
        const radius = this.number(e.shape.radius, 'the circle radius');
        return {
          kind: 'within',
          field: this.spatialField(e.target),
          lat: this.number(e.shape.latitude, 'the latitude'),
          lng: this.number(e.shape.longitude, 'the longitude'),
          radiusKm: e.shape.units === 'miles' ? radius * MILES_IN_KM : radius,
        };
      }
    }
  }

  private spatialField(target: SpatialTarget): string {
    if (target.kind === 'field') return this.operandField(target);
    const lat = this.fieldName(target.latitude);
    const lng = this.fieldName(target.longitude);
    const name = `@spatial.${lat}.${lng}`;
    this.spatialSources.set(name, { Lat: lat, Lng: lng });
    this.usedFields.add(name);
    return name;
  }

  private orderItem(item: OrderItem): OrderKey {
    const descending = item.direction === 'desc';
    const e = item.expression;
    if (e.kind === 'field') return { kind: 'field', field: this.operandField(e), descending };
    if (e.kind === 'spatialDistance') {
      return {
        kind: 'distance',
        field: this.spatialField(e.target),
        lat: this.number(e.point.latitude, 'the latitude'),
        lng: this.number(e.point.longitude, 'the longitude'),
        descending,
      };
    }
    if (e.name.toLowerCase() === 'score') return { kind: 'score' };
    if (e.name.toLowerCase() === 'id') return { kind: 'field', field: this.operandField(e), descending };
    throw unsupported(`order by ${e.name}()`, e.position, 'order by a field, score() or spatial.distance()');
  }

  facets(): FacetSpec[] {
    const select = this.query.select;
    if (select?.kind !== 'selectFacets') return [];
    return select.facets.map((facet): FacetSpec => {
      const options = facet.options ? this.parameter(facet.options.name, facet.options.position) : undefined;
      const { top, order } = facetOptions(options);
      if (facet.aggregations.length > 0) {
        throw unsupported('facet aggregations', facet.position, 'facets count matches per term or range');
      }
      if (facet.kind === 'fieldFacet') {
        const field = this.operandField(facet.field);
        return { kind: 'terms', field, name: facet.alias ?? field, top, order };
      }
      return {
        kind: 'ranges',
        name: facet.alias ?? 'ranges',
        ranges: facet.ranges.map((range) => ({
          label: rangeLabel(range, this),
          predicate: this.expression(range),
        })),
      };
    });
  }

  suggestions(): { field: string; term: string; name: string; max: number }[] {
    const select = this.query.select;
    if (select?.kind !== 'selectSuggest') return [];
    return select.suggestions.map((s) => {
      const field = this.operandField(s.field);
      const max = s.options ? suggestPageSize(this.parameter(s.options.name, s.options.position)) : 5;
      return { field, term: this.text(s.term, 'the suggested term'), name: s.alias ?? field, max };
    });
  }

  callName(call: FunctionCall): string {
    return call.name.toLowerCase();
  }
}

/** The most suggestions one `suggest()` may ask for: each is an edit-distance ranking over the vocabulary. */
export const MAX_SUGGESTIONS = 400;

/**
 * RavenDB's SuggestionOptions as a parameter (an object, or its JSON text): only PageSize changes what
 * Rookery answers (Accuracy, Distance and SortMode are accepted and left to the one ranking rule,
 * suggestions.ts). Without PageSize, 5 — what the engine always asked for before options were read.
 */
const suggestOptionsSchema = z.looseObject({
  PageSize: z.number().int().min(1).max(MAX_SUGGESTIONS).optional(),
});

function suggestPageSize(options: unknown): number {
  let value = options;
  if (typeof value === 'string') {
    try {
      value = JSON.parse(value);
    } catch {
      value = undefined;
    }
  }
  const parsed = suggestOptionsSchema.safeParse(value);
  if (!parsed.success) {
    throw new RookeryError(
      'InvalidQuery',
      `suggest() options must be an object such as {"PageSize": 10}, PageSize a whole number from 1 to ${MAX_SUGGESTIONS}`,
    );
  }
  return parsed.data.PageSize ?? 5;
}

function facetOptions(options: unknown): { top: number; order: 'countDesc' | 'termAsc' | 'termDesc' } {
  let top = 100;
  let order: 'countDesc' | 'termAsc' | 'termDesc' = 'countDesc';
  if (typeof options === 'string') {
    let parsed: unknown;
    try {
      parsed = JSON.parse(options);
    } catch {
      throw new RookeryError('InvalidQuery', 'facet options must be a JSON object such as {"PageSize": 10}');
    }
    return facetOptions(parsed);
  }
  if (options && typeof options === 'object' && !Array.isArray(options)) {
    const o = options as Record<string, unknown>;
    if (typeof o.PageSize === 'number' && o.PageSize > 0) top = Math.min(Math.floor(o.PageSize), 10_000);
    if (o.TermSortMode === 'ValueAsc') order = 'termAsc';
    if (o.TermSortMode === 'ValueDesc') order = 'termDesc';
  }
  return { top, order };
}

function rangeLabel(range: Expression, compiler: RqlCompiler): string {
  const value = (v: Value) => JSON.stringify(compiler.value(v));
  switch (range.kind) {
    case 'comparison':
      return `${range.left.kind === 'field' ? compiler.fieldName(range.left) : 'id()'} ${range.operator} ${value(range.right)}`;
    case 'between':
      return `${range.left.kind === 'field' ? compiler.fieldName(range.left) : 'id()'} between ${value(range.low)} and ${value(range.high)}`;
    case 'and':
      return range.operands.map((o) => rangeLabel(o, compiler)).join(' and ');
    default:
      return range.kind;
  }
}
