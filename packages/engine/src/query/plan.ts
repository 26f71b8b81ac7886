/**
 * A query as the engine runs it: what RQL compiles to once the index is
 * chosen. Field names are index field names; values are JSON scalars.
 */
export type Scalar = string | number | boolean | null;

export type Predicate =
  | { kind: 'compare'; field: string; op: '=' | '!=' | '<' | '<=' | '>' | '>='; value: Scalar }
  | { kind: 'between'; field: string; low: Scalar; high: Scalar }
  | { kind: 'in'; field: string; values: Scalar[]; all: boolean }
  | { kind: 'startsWith' | 'endsWith'; field: string; value: string }
  | { kind: 'exists'; field: string }
  | { kind: 'search'; field: string; terms: string; operator: 'and' | 'or'; boost?: number }
  | { kind: 'within'; field: string; lat: number; lng: number; radiusKm: number }
  | { kind: 'and' | 'or'; children: Predicate[] }
  | { kind: 'not'; child: Predicate }
  | { kind: 'true' };

export type OrderKey =
  | { kind: 'field'; field: string; descending: boolean }
  | { kind: 'score' }
  | { kind: 'distance'; field: string; lat: number; lng: number; descending: boolean };

export type FacetSpec =
  | { kind: 'terms'; field: string; name: string; top: number; order: 'countDesc' | 'termAsc' | 'termDesc' }
  | { kind: 'ranges'; name: string; ranges: { label: string; predicate: Predicate }[] };

export interface IndexQuery {
  where: Predicate | null;
  orderBy: OrderKey[];
  skip: number;
  take: number;
}

/** `field all in (a, b)` as the conjunction `field = a and field = b`: how every plan evaluates it. */
export function allInAsAnd(where: Extract<Predicate, { kind: 'in' }>): Predicate {
  return {
    kind: 'and',
    children: where.values.map((value) => ({ kind: 'compare', field: where.field, op: '=', value })),
  };
}
