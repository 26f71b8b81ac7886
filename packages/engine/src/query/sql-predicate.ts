import { RookeryError } from '@rookery/protocol';
import { NULL_TERM, TEXT_LOWER_BOUND, type TermValue, termOf } from '../indexing/field-values.js';
import { allInAsAnd, type Predicate, type Scalar } from './plan.js';

/** What the compiler needs to know about the index's fields. */
export interface FieldLookup {
  fieldId(name: string): number | undefined;
  /** FTS5 column of a `Search` field, or null. */
  searchColumn(name: string): string | null;
  isExact(name: string): boolean;
}

export interface Sql {
  sql: string;
  params: unknown[];
}

/** Sorts after every string: the upper bound of a prefix range. */
const MAX_CHAR = '\u{10FFFF}';
const EARTH_RADIUS_KM = 6371.0088;

/** Never true, for a field no entry has: SQLite can prove it without reading anything. */
const NOTHING: Sql = { sql: '0', params: [] };

/**
 * Compiles a predicate into an SQL condition on the entry id `entry` (an
 * expression such as `d.entry`). Each leaf is a seek into `terms_by_entry`
 * (or the FTS or spatial table) for that one entry, so the condition costs a
 * few B-tree lookups per candidate whatever the index size.
 */
export function compileProbe(predicate: Predicate, entry: string, fields: FieldLookup): Sql {
  switch (predicate.kind) {
    case 'true':
      return { sql: '1', params: [] };
    case 'and':
    case 'or': {
      if (predicate.children.length === 0) return { sql: predicate.kind === 'and' ? '1' : '0', params: [] };
      const parts = predicate.children.map((c) => compileProbe(c, entry, fields));
      return balanced(parts, predicate.kind === 'and' ? ' AND ' : ' OR ');
    }
    case 'not': {
      const inner = compileProbe(predicate.child, entry, fields);
      return { sql: `NOT ${inner.sql}`, params: inner.params };
    }
    case 'compare':
      if (predicate.op === '!=') {
        const eq = compileProbe({ ...predicate, op: '=' }, entry, fields);
        return { sql: `NOT ${eq.sql}`, params: eq.params };
      }
      break;
    case 'in':
      if (predicate.all && predicate.values.length <= INLINE_IN_VALUES)
        return compileProbe(allInAsAnd(predicate), entry, fields);
      if (predicate.all) {
        // One equality per value would take two SQL parameters each: instead, the entry has every value
        // when as many of its terms are in the list as the list has distinct terms.
        const range = termRange({ ...predicate, all: false }, fields);
        if (range === null) return NOTHING;
        return {
          sql: `(SELECT count(DISTINCT value) FROM terms WHERE entry = ${entry} AND field = ? AND ${range.sql}) = ?`,
          params: [range.field, ...range.params, range.distinctTerms],
        };
      }
      break;
    case 'search': {
      const match = searchMatch(predicate.field, predicate.terms, predicate.operator, fields);
      if (match === null) return NOTHING;
      return { sql: `EXISTS (SELECT 1 FROM fts WHERE fts MATCH ? AND rowid = ${entry})`, params: [match] };
    }
    case 'within': {
      const field = fields.fieldId(predicate.field);
      if (field === undefined) return NOTHING;
      const box = latitudeBand(predicate.lat, predicate.radiusKm);
      return {
        sql: `EXISTS (SELECT 1 FROM spatial WHERE entry = ${entry} AND field = ? AND lat BETWEEN ? AND ?
              AND rk_distance_km(lat, lng, ?, ?) <= ?)`,
        params: [field, box.minLat, box.maxLat, predicate.lat, predicate.lng, predicate.radiusKm],
      };
    }
  }
  // Equality on a full-text field matches the phrase, as an analysed field does in RavenDB.
  if (predicate.kind === 'compare' && predicate.op === '=' && fields.searchColumn(predicate.field)) {
    const match = searchMatch(predicate.field, String(predicate.value ?? ''), 'and', fields);
    if (match === null) return NOTHING;
    return { sql: `EXISTS (SELECT 1 FROM fts WHERE fts MATCH ? AND rowid = ${entry})`, params: [match] };
  }
  const range = termRange(predicate, fields);
  if (range === null) return NOTHING;
  return {
    sql: `EXISTS (SELECT 1 FROM terms WHERE entry = ${entry} AND field = ? AND ${range.sql})`,
    params: [range.field, ...range.params],
  };
}

/**
 * `a AND b AND c AND d` as `((a AND b) AND (c AND d))`: SQLite parses a flat chain into a tree as deep as
 * the chain is long and refuses past 1,000 ("Expression tree is too large"), which `all in` with thousands
 * of values (one equality each) or a long chain of `or`s reaches. Grouped in halves, the tree is only
 * log2(n) deep, and means the same: AND and OR are associative.
 */
function balanced(parts: readonly Sql[], operator: string): Sql {
  if (parts.length === 1) return parts[0]!;
  const middle = Math.ceil(parts.length / 2);
  const left = balanced(parts.slice(0, middle), operator);
  const right = balanced(parts.slice(middle), operator);
  return { sql: `(${left.sql}${operator}${right.sql})`, params: [...left.params, ...right.params] };
}

/**
 * Above this many values, `in` reads its list from one JSON parameter (json_each) instead of one SQL
 * parameter per value: SQLite takes at most 32,766 parameters, and each list length would otherwise be a
 * statement of its own in the statement caches.
 */
export const INLINE_IN_VALUES = 64;

export interface TermRange {
  field: number;
  /** Condition on the column `value`. */
  sql: string;
  params: unknown[];
  /** True when one entry can match through several values (so a scan of it may repeat entries). */
  mayRepeat: boolean;
  /** `in`: how many distinct terms its values make (`'Ada'` and `'ada'` are one in a default field). */
  distinctTerms?: number;
}

/**
 * A leaf that is a range of one field's terms, as a condition on `value`:
 * the same condition serves a probe (per entry) and a scan (the driver).
 * Null when the field was never indexed.
 */
export function termRange(predicate: Predicate, fields: FieldLookup): TermRange | null {
  if (!('field' in predicate)) throw new Error(`not a leaf: ${predicate.kind}`);
  if (fields.searchColumn(predicate.field) && predicate.kind !== 'search') {
    throw new RookeryError(
      'InvalidQuery',
      `Field ${predicate.field} is a full-text field: query it with search(${predicate.field}, '…') or "=" ` +
        'rather than ranges, prefixes or "in"',
    );
  }
  const field = fields.fieldId(predicate.field);
  if (field === undefined) return null;
  const exact = fields.isExact(predicate.field);
  const term = (value: Scalar): TermValue => termOf(value, exact) ?? NULL_TERM;
  switch (predicate.kind) {
    case 'compare': {
      const value = term(predicate.value);
      if (predicate.op === '=' || predicate.op === '!=') {
        return { field, sql: 'value = ?', params: [value], mayRepeat: false };
      }
      return { field, ...comparison(predicate.op, value), mayRepeat: true };
    }
    case 'between': {
      const low = term(predicate.low);
      const high = term(predicate.high);
      return { field, sql: 'value >= ? AND value <= ?', params: [low, high], mayRepeat: true };
    }
    case 'in': {
      const terms = predicate.values.map(term);
      const distinctTerms = new Set(terms).size;
      if (terms.length <= INLINE_IN_VALUES)
        return {
          field,
          sql: `value IN (${terms.map(() => '?').join(', ')})`,
          params: terms,
          mayRepeat: true,
          distinctTerms,
        };
      // JSON holds text and numbers; the null term (a blob) is matched on its own.
      const listed = terms.filter((t) => typeof t !== 'object');
      const sql = 'value IN (SELECT value FROM json_each(?))';
      return listed.length === terms.length
        ? { field, sql, params: [JSON.stringify(listed)], mayRepeat: true, distinctTerms }
        : {
            field,
            sql: `(${sql} OR value = ?)`,
            params: [JSON.stringify(listed), NULL_TERM],
            mayRepeat: true,
            distinctTerms,
          };
    }
    case 'startsWith': {
      const prefix = exact ? predicate.value : predicate.value.toLowerCase();
      return { field, sql: 'value >= ? AND value < ?', params: [prefix, prefix + MAX_CHAR], mayRepeat: true };
    }
    case 'endsWith': {
      const suffix = exact ? predicate.value : predicate.value.toLowerCase();
      // substr(value, -0) is the whole value, not '': every text ends with the empty suffix.
      if (suffix === '') {
        return {
          field,
          sql: 'value >= ? AND value < ?',
          params: [TEXT_LOWER_BOUND, NULL_TERM],
          mayRepeat: true,
        };
      }
      return {
        field,
        sql: 'value >= ? AND value < ? AND substr(value, -?) = ?',
        params: [TEXT_LOWER_BOUND, NULL_TERM, suffix.length, suffix],
        mayRepeat: true,
      };
    }
    case 'exists':
      return { field, sql: 'value < ?', params: [NULL_TERM], mayRepeat: true };
    default:
      throw new Error(`not a term predicate: ${predicate.kind}`);
  }
}

/**
 * Numbers sort before text and text before the null blob, so a range on one
 * kind gets a bound on the other side that keeps it within that kind:
 * `Age > 30` must not match names, `Name < 'm'` must not match numbers.
 */
function comparison(op: '<' | '<=' | '>' | '>=', value: TermValue): { sql: string; params: unknown[] } {
  const numeric = typeof value === 'number';
  switch (op) {
    case '>':
    case '>=':
      return { sql: `value ${op} ? AND value < ?`, params: [value, numeric ? TEXT_LOWER_BOUND : NULL_TERM] };
    case '<':
    case '<=':
      return numeric
        ? { sql: `value ${op} ?`, params: [value] }
        : { sql: `value ${op} ? AND value >= ?`, params: [value, TEXT_LOWER_BOUND] };
  }
}

/**
 * The FTS5 MATCH expression of `search(field, terms, op)`: terms are
 * tokenised like the index (letters and digits), quoted so no FTS5 syntax
 * leaks through from user input, `*` at a term's end is kept as a prefix.
 */
export function searchMatch(
  field: string,
  terms: string,
  operator: 'and' | 'or',
  fields: FieldLookup,
): string | null {
  const column = fields.searchColumn(field);
  if (!column) {
    throw new RookeryError(
      'InvalidQuery',
      `search() needs a full-text field, and ${field} is not one; declare it with Indexing: "Search" in the index`,
    );
  }
  const tokens: string[] = [];
  for (const match of terms.matchAll(/([\p{L}\p{N}]+)(\*)?/gu)) {
    tokens.push(`"${match[1]}"${match[2] ? ' *' : ''}`);
  }
  if (tokens.length === 0) return null;
  return `${column} : (${tokens.join(operator === 'and' ? ' AND ' : ' OR ')})`;
}

/** The latitudes a circle spans: a B-tree range on `spatial_by_lat`, refined by the exact distance. */
export function latitudeBand(lat: number, radiusKm: number): { minLat: number; maxLat: number } {
  const dLat = (radiusKm / EARTH_RADIUS_KM) * (180 / Math.PI);
  return { minLat: lat - dLat, maxLat: lat + dLat };
}

/** Great-circle distance (haversine), registered on index connections as `rk_distance_km`. */
export function distanceKm(lat1: number, lng1: number, lat2: number, lng2: number): number {
  const rad = Math.PI / 180;
  const dLat = (lat2 - lat1) * rad;
  const dLng = (lng2 - lng1) * rad;
  const a = Math.sin(dLat / 2) ** 2 + Math.cos(lat1 * rad) * Math.cos(lat2 * rad) * Math.sin(dLng / 2) ** 2;
  return 2 * EARTH_RADIUS_KM * Math.asin(Math.min(1, Math.sqrt(a)));
}
