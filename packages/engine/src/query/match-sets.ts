// The entries a predicate matches, as a bitmap (EntrySet), built from one
// bitmap per leaf: a range of one field's terms, or one full-text match. Leaf
// sets are kept for the state of the index file they were read from — the
// connection's `PRAGMA data_version` changes whenever the indexer commits, and
// then every set is dropped — least recently used first out within a byte
// bound. A filter repeated across queries (a common search term, "not
// prerelease") is read from SQLite once per state of the index, and every
// query combining it is an AND and a popcount (the filter cache of Lucene-based
// engines, per index file instead of per segment). The order of a field that
// ordered walks read often is kept the same way (field-order.ts).
import type BetterSqlite3 from 'better-sqlite3';
import { EntrySet } from './entry-set.js';
import { FieldOrder } from './field-order.js';
import { allInAsAnd, type Predicate } from './plan.js';
import { type PostingLists, type PostingSearch, postingTokens } from './posting-sets.js';
import { type FieldLookup, INLINE_IN_VALUES, searchMatch, termRange } from './sql-predicate.js';

/** A set bigger than this share of the bound is used once and not kept. */
const LARGEST_SHARE = 4;
/** An order may take up to this share of the bound (a million entries: 8–12 MB). */
const LARGEST_ORDER_SHARE = 2;

/**
 * A field's order is read once SQL walks of it have read this share of the
 * index's entries in one state: reading it costs under a tenth of walking as
 * many rows, so a field walked often is read early and one walked once never
 * (after each commit of the indexer it is read again only if walked again).
 */
const ORDER_AFTER_WALKED_SHARE = 1 / 10;

interface Leaf {
  key: string;
  /** The column holding the leaf's entries in the rows of `from`. */
  column: string;
  /** `FROM … WHERE …` of the leaf's rows; null when nothing can match. */
  from: string | null;
  params: unknown[];
  /** One exact term: its size is the indexer's counter, not a count. */
  counted?: boolean;
  /** A search the full-text postings answer (posting-sets.ts): read there, not through `from`. */
  postings?: PostingSearch;
}

/** A leaf no entry can match (a field never indexed, a search of no words). */
const NOTHING: Leaf = { key: 'nothing', column: '', from: null, params: [] };

export class MatchSets {
  /** Leaf sets and field orders, least recently used first. */
  private readonly kept = new Map<string, EntrySet | FieldOrder>();
  /** Rows read by SQL walks in this state, per order field. */
  private readonly walked = new Map<number, number>();
  /** Fields whose order is too big to keep: in this state it is not read again. */
  private readonly tooBig = new Set<number>();
  private readonly statements = new Map<string, BetterSqlite3.Statement>();
  private bytes = 0;
  private version: number | null = null;
  private maxEntry = 0;
  private readonly dataVersion: BetterSqlite3.Statement;
  private readonly lastEntry: BetterSqlite3.Statement;

  constructor(
    private readonly db: BetterSqlite3.Database,
    private readonly fields: FieldLookup,
    private readonly maxBytes: number,
    /** The full-text postings, or null to read every search through FTS5 (tests compare both). */
    private readonly postings: PostingLists | null = null,
  ) {
    this.dataVersion = db.prepare('PRAGMA data_version').pluck();
    this.lastEntry = db.prepare('SELECT coalesce(max(id), 0) FROM entries').pluck();
  }

  /**
   * Drops the sets of an older state of the file. Call inside the query's read
   * transaction, so the sets built next and the rest of the query see one state.
   */
  refresh(): void {
    const version = Number(this.dataVersion.get());
    if (version === this.version) return;
    this.clear();
    this.postings?.reset();
    this.version = version;
    this.maxEntry = Number(this.lastEntry.get());
  }

  clear(): void {
    this.kept.clear();
    this.walked.clear();
    this.tooBig.clear();
    this.bytes = 0;
    this.version = null;
  }

  get cachedBytes(): number {
    return this.bytes;
  }

  /** True when every leaf of `where` can be read as a set (spatial circles cannot). */
  supports(where: Predicate): boolean {
    return this.leaves(where) !== null;
  }

  /**
   * How many entries the leaves not kept yet hold together (what evaluating
   * would read), counted up to just past `limit`: the caller only asks
   * whether reading them is worth it.
   */
  missingSize(where: Predicate, limit: number): number {
    const missing = new Map<string, Leaf>();
    for (const leaf of this.leaves(where) ?? []) {
      if (leaf.from !== null && !this.kept.has(leaf.key)) missing.set(leaf.key, leaf);
    }
    let size = 0;
    for (const leaf of missing.values()) {
      if (size > limit) break;
      if (leaf.postings) {
        size += this.postings!.estimate(leaf.postings);
        continue;
      }
      size += Number(
        leaf.counted
          ? (this.statement('SELECT count FROM term_counts WHERE field = ? AND value = ?').get(
              ...leaf.params,
            ) ?? 0)
          : this.statement(`SELECT count(*) FROM (SELECT 1 ${leaf.from} LIMIT ?)`).get(
              ...leaf.params,
              limit - size + 1,
            ),
      );
    }
    return size;
  }

  /**
   * The size of the leaf's set if it is kept for the current state, else
   * null: a free, exact estimate where the planner would count in SQL.
   */
  /**
   * A search's size from the postings' counts (exact for one word; see PostingLists.estimate), or null
   * when the postings cannot answer it: a free estimate where the planner would count in FTS5.
   */
  postingEstimate(search: Predicate): number | null {
    this.refresh();
    const leaf = this.leafOf(search);
    return leaf?.postings ? this.postings!.estimate(leaf.postings) : null;
  }

  keptSize(leaf: Predicate): number | null {
    this.refresh();
    const found = this.leafOf(leaf);
    const kept = found === null ? undefined : this.kept.get(found.key);
    return kept instanceof EntrySet ? kept.size : null;
  }

  evaluate(where: Predicate): EntrySet {
    switch (where.kind) {
      case 'true':
        return this.all();
      case 'and':
      case 'or': {
        const [first, ...rest] = where.children.map((child) => this.evaluate(child));
        if (first === undefined) return where.kind === 'and' ? this.all() : EntrySet.empty(this.maxEntry);
        return rest.reduce((acc, set) => (where.kind === 'and' ? acc.and(set) : acc.or(set)), first);
      }
      case 'not':
        return this.all().andNot(this.evaluate(where.child));
      case 'compare':
        if (where.op === '!=') return this.all().andNot(this.evaluate({ ...where, op: '=' }));
        break;
      case 'in':
        if (where.all) return this.evaluate(allInAsAnd(where));
        break;
    }
    const leaf = this.leafOf(where);
    if (leaf === null) throw new Error(`no set for ${where.kind}`);
    return this.leafSet(leaf);
  }

  /** Prepared once per shape of leaf: the SQL holds no values, so a few dozen shapes cover every query. */
  private statement(sql: string): BetterSqlite3.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql).pluck();
      this.statements.set(sql, statement);
    }
    return statement;
  }

  private all(): EntrySet {
    return this.leafSet(this.allLeaf());
  }

  /**
   * The kept order of a field (entries by its terms), or null if it is not
   * kept. With `read`, an order not kept is read now, as it also is once SQL
   * walks of the field read enough rows (see `noteWalked`).
   */
  order(field: number, read: boolean): FieldOrder | null {
    const key = `order ${field}`;
    const kept = this.use(key);
    if (kept instanceof FieldOrder) return kept;
    if (this.tooBig.has(field)) return null;
    if (!read && (this.walked.get(field) ?? 0) < this.maxEntry * ORDER_AFTER_WALKED_SHARE) return null;
    // Sized as if every entry had one value: an order that would be too big is not read at all (a field
    // most entries lack may be missed here; it then stays in SQL, as it would without orders).
    if (FieldOrder.bytesAtLeast(this.maxEntry, this.maxEntry) > this.maxBytes / LARGEST_ORDER_SHARE) {
      this.tooBig.add(field);
      return null;
    }
    const order = FieldOrder.fromRuns(
      this.statement(
        `SELECT group_concat(list, ';' ORDER BY value) FROM
           (SELECT value, group_concat(entry) AS list FROM terms WHERE field = ? GROUP BY value)`,
      ).get(field) as string | null,
    );
    // Read and too big after all (a field of several values per entry): used this once, never read again.
    if (!this.keep(key, order, LARGEST_ORDER_SHARE)) this.tooBig.add(field);
    return order;
  }

  /** Counts rows an SQL walk of `field` read: a field walked enough gets its order kept. */
  noteWalked(field: number, rows: number): void {
    this.walked.set(field, (this.walked.get(field) ?? 0) + rows);
  }

  private leafSet(leaf: Leaf): EntrySet {
    if (leaf.from === null) return EntrySet.empty(this.maxEntry);
    const kept = this.use(leaf.key);
    if (kept instanceof EntrySet) return kept;
    if (leaf.postings) {
      const set = this.postings!.set(leaf.postings, this.maxEntry);
      this.keep(leaf.key, set, LARGEST_SHARE);
      return set;
    }
    // One string for the whole leaf rather than a row object per entry.
    const list = this.statement(`SELECT group_concat(${leaf.column}) ${leaf.from}`).get(...leaf.params) as
      | string
      | null;
    const set = EntrySet.fromList(list, this.maxEntry);
    this.keep(leaf.key, set, LARGEST_SHARE);
    return set;
  }

  /** A kept item, made the most recently used (Map order is insertion order). */
  private use(key: string): EntrySet | FieldOrder | undefined {
    const kept = this.kept.get(key);
    if (kept) {
      this.kept.delete(key);
      this.kept.set(key, kept);
    }
    return kept;
  }

  /**
   * Keeps an item unless it is over `1 / share` of the bound, dropping the
   * least recently used ones past the bound; false if it was not kept.
   */
  private keep(key: string, item: EntrySet | FieldOrder, share: number): boolean {
    if (item.bytes > this.maxBytes / share) return false;
    this.kept.set(key, item);
    this.bytes += item.bytes;
    for (const [oldKey, old] of this.kept) {
      if (this.bytes <= this.maxBytes) break;
      this.kept.delete(oldKey);
      this.bytes -= old.bytes;
    }
    return true;
  }

  /** Every leaf `evaluate` would read, or null if one of them cannot be a set. */
  private leaves(where: Predicate): Leaf[] | null {
    switch (where.kind) {
      case 'true':
        return [this.allLeaf()];
      case 'and':
      case 'or': {
        const all: Leaf[] = [];
        for (const child of where.children) {
          const leaves = this.leaves(child);
          if (leaves === null) return null;
          all.push(...leaves);
        }
        return all;
      }
      case 'not': {
        const leaves = this.leaves(where.child);
        return leaves && [this.allLeaf(), ...leaves];
      }
      case 'compare':
        if (where.op === '!=') {
          const leaf = this.leafOf({ ...where, op: '=' });
          return leaf && [this.allLeaf(), leaf];
        }
        break;
      case 'in':
        // A long `all in` is one bitmap per value: SQL's single count probe serves it better (sql-predicate.ts).
        if (where.all) return where.values.length <= INLINE_IN_VALUES ? this.leaves(allInAsAnd(where)) : null;
        break;
    }
    const leaf = this.leafOf(where);
    return leaf && [leaf];
  }

  private allLeaf(): Leaf {
    return { key: 'all', column: 'id', from: 'FROM entries', params: [] };
  }

  /**
   * One leaf as a query for its entries, with the same meaning as its probe in
   * compileProbe: equality on a full-text field is a phrase match there too.
   */
  private leafOf(where: Predicate): Leaf | null {
    if (where.kind === 'within') return null;
    if (
      where.kind === 'search' ||
      (where.kind === 'compare' && where.op === '=' && this.fields.searchColumn(where.field))
    ) {
      const match =
        where.kind === 'search'
          ? searchMatch(where.field, where.terms, where.operator, this.fields)
          : searchMatch(where.field, String(where.value ?? ''), 'and', this.fields);
      if (match === null) return NOTHING;
      const leaf: Leaf = {
        key: `fts ${match}`,
        column: 'rowid',
        from: 'FROM fts WHERE fts MATCH ?',
        params: [match],
      };
      const tokens = postingTokens(where.kind === 'search' ? where.terms : String(where.value ?? ''));
      if (tokens && this.postings?.available()) {
        const col = Number(this.fields.searchColumn(where.field)!.slice(1));
        leaf.postings = { col, tokens, operator: where.kind === 'search' ? where.operator : 'and' };
      }
      return leaf;
    }
    const range = termRange(where, this.fields);
    if (range === null) return NOTHING;
    return {
      key: `terms ${range.field} ${range.sql} ${JSON.stringify(range.params)}`,
      column: 'entry',
      from: `FROM terms WHERE field = ? AND ${range.sql}`,
      params: [range.field, ...range.params],
      counted: where.kind === 'compare' && where.op === '=',
    };
  }
}
