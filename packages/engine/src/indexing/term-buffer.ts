import { NULL_TERM, type TermValue } from './field-values.js';

interface Posting<V> {
  value: V;
  entry: number;
}

interface FieldTerms {
  numbers: Posting<number>[];
  strings: Posting<string>[];
  /** Entries whose value is the null term (the only blob term). */
  nulls: number[];
}

/**
 * A batch's new (field, value, entry) rows, handed back in the terms table's
 * key order. Inserting in key order touches each B-tree page once instead of
 * jumping around the tree for every row: on 200k NuGet-like documents the
 * inserts ran about 4× faster than in arrival order. Sorting is done per field
 * and per type with monomorphic comparisons (a single mixed comparator was
 * slower than the inserts it saved), and relies on the sort being stable:
 * rows arrive in entry order, so equal values stay ordered by entry. (JavaScript
 * orders strings by UTF-16 unit, SQLite by UTF-8 byte; they disagree only past
 * U+FFFF, which costs a little locality, never correctness.)
 */
export class TermBuffer {
  private readonly byField = new Map<number, FieldTerms>();
  private count = 0;

  get size(): number {
    return this.count;
  }

  add(field: number, value: TermValue, entry: number): void {
    let terms = this.byField.get(field);
    if (!terms) {
      terms = { numbers: [], strings: [], nulls: [] };
      this.byField.set(field, terms);
    }
    if (typeof value === 'number') terms.numbers.push({ value, entry });
    else if (typeof value === 'string') terms.strings.push({ value, entry });
    else terms.nulls.push(entry);
    this.count++;
  }

  clear(): void {
    this.byField.clear();
    this.count = 0;
  }

  /** Calls `row` for every buffered row in SQLite's order (field, then numbers < text < blob), then empties. */
  drain(row: (field: number, value: TermValue, entry: number) => void): void {
    const fields = [...this.byField.keys()].sort((a, b) => a - b);
    for (const field of fields) {
      const terms = this.byField.get(field)!;
      terms.numbers.sort((a, b) => a.value - b.value);
      for (const p of terms.numbers) row(field, p.value, p.entry);
      terms.strings.sort((a, b) => (a.value < b.value ? -1 : a.value > b.value ? 1 : 0));
      for (const p of terms.strings) row(field, p.value, p.entry);
      for (const entry of terms.nulls) row(field, NULL_TERM, entry);
    }
    this.clear();
  }
}
