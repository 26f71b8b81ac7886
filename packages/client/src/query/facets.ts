// Facet descriptions for `query.aggregateBy(...)`. They hold values, not RQL: the query builder turns
// them into `facet(...)` with every value as a $parameter.

export type RangeValue = number | string | Date;

interface Bound {
  value: RangeValue;
  inclusive: boolean;
}

/** One range of a range facet: `range('Age').greaterThanOrEqual(30).lessThan(40)`. Immutable. */
export class FacetRange {
  constructor(
    readonly field: string,
    readonly low: Bound | null = null,
    readonly high: Bound | null = null,
  ) {}

  greaterThan(value: RangeValue): FacetRange {
    return new FacetRange(this.field, { value, inclusive: false }, this.high);
  }
  greaterThanOrEqual(value: RangeValue): FacetRange {
    return new FacetRange(this.field, { value, inclusive: true }, this.high);
  }
  lessThan(value: RangeValue): FacetRange {
    return new FacetRange(this.field, this.low, { value, inclusive: false });
  }
  lessThanOrEqual(value: RangeValue): FacetRange {
    return new FacetRange(this.field, this.low, { value, inclusive: true });
  }
}

export function range(field: string): FacetRange {
  return new FacetRange(field);
}

export interface FieldFacetOptions {
  /** Most values returned (by count, highest first, unless termSortMode says otherwise). */
  pageSize?: number;
  termSortMode?: 'CountDesc' | 'ValueAsc' | 'ValueDesc';
  /** The name of the result (default: the field). */
  alias?: string;
}

export type Facet =
  | { kind: 'field'; field: string; options: FieldFacetOptions }
  | { kind: 'ranges'; ranges: FacetRange[]; alias?: string };

/** Counts per distinct value of a field: `facet('Brand')`. */
export function facet(field: string, options: FieldFacetOptions = {}): Facet {
  return { kind: 'field', field, options };
}

/** Counts per range: `rangeFacet([range('Price').lessThan(10), range('Price').greaterThanOrEqual(10)])`. */
export function rangeFacet(ranges: FacetRange[], alias?: string): Facet {
  return alias === undefined ? { kind: 'ranges', ranges } : { kind: 'ranges', ranges, alias };
}

/** `suggestUsing({ field, term })`: "did you mean" for a term, from the terms the index holds. */
export interface SuggestionRequest {
  field: string;
  term: string;
  alias?: string;
}
