/**
 * Turning document values into index terms. Every indexed value becomes one
 * SQLite value whose storage class keeps kinds apart in one B-tree:
 * numbers < text < blobs. Strings are lower-cased unless the field is exact
 * (RavenDB's default analyser is case-insensitive), booleans become
 * 'true'/'false' as in RavenDB, and null or a missing value becomes the empty
 * blob, so "where X = null" and ordering by a sparse field both work.
 */
export type TermValue = number | string | Buffer;

export const NULL_TERM: Buffer = Buffer.alloc(0);

/** The smallest text value: every number sorts before it, every string at or after it. */
export const TEXT_LOWER_BOUND = '';

const termRank = (t: TermValue) => (typeof t === 'number' ? 0 : typeof t === 'string' ? 1 : 2);

/** SQLite's order of the values terms are stored as: numbers, then text (by UTF-8 bytes), then blobs. */
export function compareTerms(a: TermValue, b: TermValue): number {
  const ra = termRank(a);
  const rb = termRank(b);
  if (ra !== rb) return ra - rb;
  if (typeof a === 'number') return a === b ? 0 : a < (b as number) ? -1 : 1;
  if (typeof a === 'string') return compareUtf8(a, b as string);
  return Buffer.compare(a, b as Buffer);
}

/**
 * Compares strings in UTF-8 byte order (SQLite's BINARY collation) without encoding them. UTF-16 code units
 * order the same way except that surrogates (characters from U+10000) sort before U+E000–U+FFFF in UTF-16
 * and after them in UTF-8.
 */
function compareUtf8(a: string, b: string): number {
  if (a === b) return 0;
  const n = Math.min(a.length, b.length);
  for (let i = 0; i < n; i++) {
    const x = a.charCodeAt(i);
    const y = b.charCodeAt(i);
    if (x === y) continue;
    const xSurrogate = x >= 0xd800 && x <= 0xdfff;
    const ySurrogate = y >= 0xd800 && y <= 0xdfff;
    if (xSurrogate !== ySurrogate) return xSurrogate ? 1 : -1;
    return x - y;
  }
  return a.length - b.length;
}

export function termOf(value: unknown, exact: boolean): TermValue | undefined {
  switch (typeof value) {
    case 'string':
      return exact ? value : value.toLowerCase();
    case 'number':
      return Number.isFinite(value) ? value : undefined;
    case 'boolean':
      return value ? 'true' : 'false';
    case 'undefined':
      return NULL_TERM;
    case 'object': {
      if (value === null) return NULL_TERM;
      const json = JSON.stringify(value);
      return exact ? json : json.toLowerCase();
    }
    default:
      return undefined;
  }
}

/** A point stored by a spatial field (declarative `{Lat, Lng}` or `createSpatialField` in JavaScript). */
export interface SpatialPoint {
  lat: number;
  lng: number;
}

export function asSpatialPoint(value: unknown): SpatialPoint | null {
  if (typeof value !== 'object' || value === null) return null;
  const v = value as Record<string, unknown>;
  if (v['@spatial'] !== true) return null;
  const { lat, lng } = v;
  if (typeof lat !== 'number' || typeof lng !== 'number') return null;
  if (!(lat >= -90 && lat <= 90 && lng >= -180 && lng <= 180)) return null;
  return { lat, lng };
}

interface PathSegment {
  name: string;
}

const compiledPaths = new Map<string, PathSegment[] | 'id'>();

function compilePath(path: string): PathSegment[] | 'id' {
  let compiled = compiledPaths.get(path);
  if (compiled === undefined) {
    compiled =
      path === 'id()'
        ? 'id'
        : path.split('.').map((part) => ({ name: part.endsWith('[]') ? part.slice(0, -2) : part }));
    if (compiledPaths.size > 10_000) compiledPaths.clear();
    compiledPaths.set(path, compiled);
  }
  return compiled;
}

/**
 * The values at `path` in `doc`. Arrays met on the way are flattened, so
 * `Tags` and `Tags[]` both give every tag and `Lines[].Product` every line's
 * product. A path that leads nowhere gives `[undefined]`: a missing value is
 * indexed as null.
 */
export function valuesAt(doc: Record<string, unknown>, path: string): unknown[] {
  const compiled = compilePath(path);
  if (compiled === 'id') {
    const meta = doc['@metadata'] as Record<string, unknown> | undefined;
    return [meta?.['@id']];
  }
  let current: unknown[] = [doc];
  for (const segment of compiled) {
    const next: unknown[] = [];
    for (const value of current) {
      if (typeof value !== 'object' || value === null) continue;
      const child = (value as Record<string, unknown>)[segment.name];
      if (Array.isArray(child)) next.push(...child);
      else if (child !== undefined) next.push(child);
    }
    current = next;
    if (current.length === 0) return [undefined];
  }
  const flat: unknown[] = [];
  for (const value of current) {
    if (Array.isArray(value)) flat.push(...value);
    else flat.push(value);
  }
  return flat.length === 0 ? [undefined] : flat;
}
