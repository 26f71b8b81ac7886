import type { IndexDefinition } from '@rookery/protocol';
import { asSpatialPoint, NULL_TERM, termOf } from './field-values.js';
import { exactFieldsOf, searchFieldsOf } from './index-file.js';
import type { IndexEntry } from './mapper.js';
import { type PreparedTerm, type SortedTerms, TermBuffer } from './term-buffer.js';

/**
 * A batch's index entries turned into the rows the index file stores, with
 * nothing left for the writer but SQLite: plain arrays, so they can be built
 * on another thread and posted to the writer. Entries are numbered from 0 in
 * the batch; the writer adds the first free entry id (order is unchanged by
 * adding a constant, so the terms stay in key order).
 */
export interface EntryRows {
  /** Per entry: the lower-cased document id, or `r:<group key>` for a reduce result. */
  sources: string[];
  /** Per entry: the document's id (null for a reduce result). */
  docIds: (string | null)[];
  /** Per entry: the stored JSON of a reduce result, else null. */
  stored: (string | null)[];
  /**
   * Full-text columns (the definition's search fields, sorted): entry i's
   * text of column c is `texts[i * columns + c]`; an entry without any text
   * has no FTS row.
   */
  texts: (string | null)[];
  points: { entry: number; field: string; lat: number; lng: number }[];
  terms: SortedTerms[];
}

/** How one entry field is turned into rows, worked out once per field name instead of once per value. */
interface FieldPlan {
  /** FTS5 column of a search field, or -1 for a term field. */
  search: number;
  exact: boolean;
}

/** Arrays up to this long are de-duplicated by a linear scan, longer ones with a Set. */
const SCAN_DEDUPE_MAX = 16;

/** Builds the EntryRows of one batch, entry by entry. */
export class EntryRowsBuilder {
  private readonly searchFields: readonly string[];
  private readonly exactFields: ReadonlySet<string>;
  private readonly plans = new Map<string, FieldPlan>();
  private readonly terms = new TermBuffer();
  private rows: Omit<EntryRows, 'terms'> = emptyRows();

  constructor(definition: IndexDefinition) {
    this.searchFields = searchFieldsOf(definition);
    this.exactFields = exactFieldsOf(definition);
  }

  add(source: string, docId: string | null, entry: IndexEntry, stored: string | null): void {
    const number = this.rows.sources.length;
    this.rows.sources.push(source);
    this.rows.docIds.push(docId);
    this.rows.stored.push(stored);
    const textsAt = this.rows.texts.length;
    for (let c = 0; c < this.searchFields.length; c++) this.rows.texts.push(null);
    for (const name of Object.keys(entry)) {
      const raw = entry[name];
      const plan = this.planOf(name);
      if (plan.search >= 0) this.rows.texts[textsAt + plan.search] = textOf(raw);
      else if (!Array.isArray(raw)) this.addValue(number, name, plan, raw);
      else {
        const values = raw.flat(8);
        if (values.length === 0) this.addValue(number, name, plan, null);
        else this.addDistinctValues(number, name, plan, values);
      }
    }
  }

  /** The buffers `take()`'s rows are made of, to move them to another thread rather than copy them. */
  static transferables(rows: EntryRows): ArrayBuffer[] {
    return rows.terms.flatMap((t) =>
      [t.numbers, t.numberEntries, t.stringEntries, t.nullEntries].map((a) => a.buffer as ArrayBuffer),
    );
  }

  /** Drops what was built (after a failure part-way through a batch). */
  reset(): void {
    this.rows = emptyRows();
    this.terms.clear();
  }

  /** The rows built so far (terms sorted), and a fresh start. */
  take(): EntryRows {
    const rows = { ...this.rows, terms: this.terms.drain() };
    this.rows = emptyRows();
    return rows;
  }

  private planOf(name: string): FieldPlan {
    let plan = this.plans.get(name);
    if (!plan) {
      plan = { search: this.searchFields.indexOf(name), exact: this.exactFields.has(name) };
      this.plans.set(name, plan);
    }
    return plan;
  }

  private addValue(entry: number, field: string, plan: FieldPlan, value: unknown): void {
    const term = this.termFor(entry, field, plan, value);
    if (term !== undefined) this.terms.add(field, term, entry);
  }

  /** An array's values, each distinct term once (an entry is in a term's postings once). */
  private addDistinctValues(entry: number, field: string, plan: FieldPlan, values: readonly unknown[]): void {
    const seen: PreparedTerm[] = [];
    const seenSet = values.length > SCAN_DEDUPE_MAX ? new Set<PreparedTerm>() : null;
    for (const value of values) {
      const term = this.termFor(entry, field, plan, value);
      if (term === undefined) continue;
      if (seenSet) {
        if (seenSet.has(term)) continue;
        seenSet.add(term);
      } else {
        if (seen.includes(term)) continue;
        seen.push(term);
      }
      this.terms.add(field, term, entry);
    }
  }

  /** The term a value is indexed as; undefined for none, and for a spatial point, which is kept here. */
  private termFor(entry: number, field: string, plan: FieldPlan, value: unknown): PreparedTerm | undefined {
    if (typeof value === 'object' && value !== null) {
      const point = asSpatialPoint(value);
      if (point) {
        this.rows.points.push({ entry, field, lat: point.lat, lng: point.lng });
        return undefined;
      }
    }
    const term = termOf(value, plan.exact);
    return term === NULL_TERM ? null : (term as PreparedTerm | undefined);
  }
}

function emptyRows(): Omit<EntryRows, 'terms'> {
  return { sources: [], docIds: [], stored: [], texts: [], points: [] };
}

/** A search field's text: its values, one per line (numbers and objects as JSON). */
function textOf(raw: unknown): string | null {
  const parts = (Array.isArray(raw) ? raw.flat(8) : [raw]).filter((v) => v !== null && v !== undefined);
  if (parts.length === 0) return null;
  return parts.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join('\n');
}
