import fs from 'node:fs';
import type { FacetResult, IndexDefinition, QueryPlanNode } from '@rookery/protocol';
import type BetterSqlite3 from 'better-sqlite3';
import { BULK_BUILD_META_KEY } from '../indexing/bulk-build.js';
import type { TermValue } from '../indexing/field-values.js';
import {
  exactFieldsOf,
  FieldRegistry,
  ftsColumnOf,
  openIndexFile,
  readDefinition,
  searchFieldsOf,
} from '../indexing/index-file.js';
import { chooseDriver, type Driver, ESTIMATE_CAP, type MatchPlan, matchSql } from './cost-model.js';
import type { EntrySet } from './entry-set.js';
import { facetsOf } from './facets.js';
import { MatchSets } from './match-sets.js';
import { orderPage } from './page-order.js';
import type { FacetSpec, IndexQuery, Predicate } from './plan.js';
import { describeMatch } from './plan-describe.js';
import { PostingLists } from './posting-sets.js';
import { type ReaderScope, ReaderSql } from './reader-scope.js';
import { distanceKm, type FieldLookup, termRange } from './sql-predicate.js';
import { SuggestionReader } from './suggestions.js';

export interface PageEntry {
  entry: number;
  docId: string | null;
  stored: string | null;
}

export interface IndexReaderOptions {
  /**
   * When matches are computed as bitmaps (MatchSets): `auto` for broad matches
   * whose missing leaves cost less to read than probing the candidates (see
   * matchSet); `always` and `never` are for tests that check both plans give
   * one answer.
   */
  matchSets?: 'auto' | 'always' | 'never';
  matchSetBytes?: number;
  /**
   * Whether searches read the full-text postings where they can (posting-sets.ts); false reads every
   * search through FTS5, for tests comparing the two. Default true.
   */
  postings?: boolean;
}

export interface QueryPage {
  entries: PageEntry[];
  total: number;
  plan: QueryPlanNode;
}

/**
 * Bytes of leaf bitmaps and field orders kept per index reader (MatchSets): at 1M entries a bitmap
 * is 125 KB and an order 8–12 MB (an order may take half of the bound, a bitmap a quarter).
 */
const DEFAULT_MATCH_SET_BYTES = 32 * 1024 * 1024;
/** Below this many candidates the SQL plan is cheap whatever it probes; bitmaps are for broad matches. */
const SET_MIN_CANDIDATES = 1_000;
/**
 * Reading an entry into a bitmap costs about a sixteenth of testing a
 * candidate in SQL: missing leaves are read when they hold at most this many
 * entries per candidate of the SQL plan.
 */
const SET_READ_RATIO = 16;
/**
 * Combining kept bitmaps costs about as much per this many entries of the index (an AND of 32 entries a
 * word, ~3 ns) as SQL spends on one candidate of a narrow match (its probes and sort keys, ~40 µs at 1M
 * entries: `not prerelease and search(Query, two words)`, 142 matches, 6.7 ms through SQL, 1 ms kept).
 */
const KEPT_SET_ENTRIES_PER_CANDIDATE = 100_000;

/**
 * Queries one index file (read-only). Predicates become SQL over the index's
 * B-trees; counts are computed by SQLite without building the match set in
 * JavaScript; only the requested page of entries is materialised.
 */
export class IndexReader implements FieldLookup {
  readonly definition: IndexDefinition;
  private readonly db: BetterSqlite3.Database;
  private readonly fields: FieldRegistry;
  private readonly searchFields: string[];
  private readonly exactFields: Set<string>;
  private readonly sql: ReaderSql;
  /** What the reader's parts (cost model, page order, facets) see of it. */
  private readonly scope: ReaderScope;
  private readonly inode: number;
  private readonly sets: MatchSets;
  private readonly setPolicy: NonNullable<IndexReaderOptions['matchSets']>;
  private readonly suggestions: SuggestionReader;

  constructor(
    readonly file: string,
    options: IndexReaderOptions = {},
  ) {
    this.inode = fs.statSync(file).ino;
    this.db = openIndexFile(file, { readonly: true });
    this.db.function('rk_distance_km', { deterministic: true }, (a, b, c, d) =>
      distanceKm(Number(a), Number(b), Number(c), Number(d)),
    );
    this.definition = readDefinition(this.db);
    this.fields = new FieldRegistry(this.db, false);
    this.searchFields = searchFieldsOf(this.definition);
    this.exactFields = exactFieldsOf(this.definition);
    this.sets = new MatchSets(
      this.db,
      this,
      options.matchSetBytes ?? DEFAULT_MATCH_SET_BYTES,
      options.postings === false ? null : new PostingLists(this.db),
    );
    this.setPolicy = options.matchSets ?? 'auto';
    this.suggestions = new SuggestionReader(this.db, this.definition, this);
    this.sql = new ReaderSql(this.db);
    this.scope = {
      sql: this.sql,
      sets: this.sets,
      setPolicy: this.setPolicy,
      fieldId: (name) => this.fieldId(name),
      searchColumn: (name) => this.searchColumn(name),
      isExact: (name) => this.isExact(name),
      entriesCount: () => this.entriesCount(),
      termCount: (field, value) => this.termCount(field, value),
    };
  }

  /** False once the index was deleted or replaced: the caller opens the new file. */
  isCurrent(): boolean {
    try {
      return fs.statSync(this.file).ino === this.inode;
    } catch {
      return false;
    }
  }

  get connection(): BetterSqlite3.Database {
    return this.db;
  }

  // FieldLookup
  fieldId(name: string): number | undefined {
    return this.fields.idOf(name);
  }
  searchColumn(name: string): string | null {
    return ftsColumnOf(this.searchFields, name);
  }
  isExact(name: string): boolean {
    return this.exactFields.has(name);
  }
  hasField(name: string): boolean {
    return this.searchColumn(name) !== null || this.fieldId(name) !== undefined;
  }

  lastEtag(): number {
    return Number(this.meta('last_etag'));
  }

  entriesCount(): number {
    return Number(this.meta('entries'));
  }

  run(query: IndexQuery): QueryPage {
    return this.read(() => {
      if (this.inFirstBuild()) {
        return {
          entries: [],
          total: 0,
          plan: {
            Operation: 'Query',
            Details: `index ${this.definition.Name}: its first build is running; it answers once the build has read every document`,
          },
        };
      }
      const plan = this.plan(query.where);
      const total = this.count(query.where, plan);
      const order = orderPage(this.scope, query, plan);
      const entries = this.loadEntries(order.entries);
      return {
        entries,
        total,
        plan: {
          Operation: 'Query',
          Details: `index ${this.definition.Name}`,
          Children: [describeMatch(query.where, plan), order.describe],
        },
      };
    });
  }

  /**
   * Every entry the query matches, in its order (skip and take applied), as entry numbers only, with the
   * total: what a streamed query pages through (loadEntries per page). One read, so the order is that of
   * one state of the index; 8 bytes per match is what the stream holds, never the documents.
   */
  matchingEntries(query: IndexQuery): { entries: number[]; total: number } {
    return this.read(() => {
      if (this.inFirstBuild()) return { entries: [], total: 0 };
      const plan = this.plan(query.where);
      return { entries: orderPage(this.scope, query, plan).entries, total: this.count(query.where, plan) };
    });
  }

  /** Drops the kept match bitmaps (the benchmark measures queries that find none). */
  dropMatchSets(): void {
    this.sets.clear();
  }

  /** Bytes of match bitmaps kept for the current state of the index. */
  get matchSetBytes(): number {
    return this.sets.cachedBytes;
  }

  facets(where: Predicate | null, specs: readonly FacetSpec[]): FacetResult[] {
    return this.read(() =>
      this.inFirstBuild()
        ? specs.map((spec) => ({ Name: spec.name, Values: [] }))
        : facetsOf(this.scope, where, specs, (p) => this.count(p, this.plan(p))),
    );
  }

  /**
   * True while the index is in its first (bulk) build (indexing/bulk-build.ts): the term rows wait in a
   * staging table, and `terms` itself, the entries' own B-tree (`terms_by_entry`) and the term counters
   * are made at its end, so until then no term would be found. It answers
   * nothing meanwhile (stale, as the query says), as an index a worker builds does until
   * it is adopted.
   */
  private inFirstBuild(): boolean {
    return this.sql.get('SELECT 1 AS one FROM meta WHERE key = ?', [BULK_BUILD_META_KEY]) !== undefined;
  }

  /** "Did you mean": indexed terms close to `term`, best first (suggestions.ts). */
  suggest(fieldName: string, term: string, max: number): string[] {
    return this.suggestions.suggest(fieldName, term, max);
  }

  close(): void {
    this.sql.clear();
    this.db.close();
  }

  // ---- planning ----------------------------------------------------------------

  /**
   * One read transaction around a query: its count, its page and its bitmaps
   * all see the same state of the index while the indexer commits beside it.
   */
  private read<T>(run: () => T): T {
    if (this.db.inTransaction) return run();
    this.db.exec('BEGIN');
    try {
      return run();
    } finally {
      this.db.exec('COMMIT');
    }
  }

  private plan(where: Predicate | null): MatchPlan {
    const { driver, residual } = chooseDriver(this.scope, where);
    return {
      driver,
      residual,
      match: matchSql(this.scope, driver, residual),
      set: this.matchSet(where, driver),
    };
  }

  /**
   * The matches as a bitmap when that is cheaper than SQL: counting through
   * SQL visits every candidate of the driver and probes the rest of the
   * predicate for each (~1 µs a candidate, far more for a full-text probe); a
   * leaf's bitmap costs ~50 ns per entry to read once and nothing while the
   * index stays as it is. So bitmaps are used for broad matches whose count is
   * not a single term's counter, when the driver's candidates are at the
   * estimate's cap or the leaves not kept yet are small against them.
   * Narrow queries stay in SQL: a bitmap per point lookup would crowd out the
   * broad ones worth keeping.
   */
  private matchSet(where: Predicate | null, driver: Driver): EntrySet | null {
    if (where === null || where.kind === 'true' || this.setPolicy === 'never') return null;
    this.sets.refresh();
    if (!this.sets.supports(where)) return null;
    if (this.setPolicy === 'always') return this.sets.evaluate(where);
    if (this.isSingleTerm(where)) return null;
    // Every leaf kept already (a query asked again while the index stays as it is): the bitmap costs word
    // operations only, so it wins over SQL for all but a few candidates (see KEPT_SET_ENTRIES_PER_CANDIDATE).
    if (
      driver.estimate * KEPT_SET_ENTRIES_PER_CANDIDATE >= this.entriesCount() &&
      this.sets.missingSize(where, 0) === 0
    )
      return this.sets.evaluate(where);
    if (driver.estimate < SET_MIN_CANDIDATES) return null;
    const budget = SET_READ_RATIO * driver.estimate;
    const worthReading = driver.estimate >= ESTIMATE_CAP || this.sets.missingSize(where, budget) <= budget;
    return worthReading ? this.sets.evaluate(where) : null;
  }

  private count(where: Predicate | null, plan: MatchPlan): number {
    if (where === null || where.kind === 'true') return this.entriesCount();
    if (plan.set) return plan.set.size;
    // One exact term: the counter kept by the indexer, no counting at all.
    if (this.isSingleTerm(where)) {
      const range = termRange(where, this);
      return range ? this.termCount(range.field, range.params[0] as TermValue) : 0;
    }
    const { match } = plan;
    return this.sql.get<{ n: number }>(`SELECT count(*) AS n FROM (${match.sql})`, match.params)?.n ?? 0;
  }

  /** `where` as one exact term, whose count the indexer keeps; null for anything else. */
  private isSingleTerm(where: Predicate): boolean {
    return where.kind === 'compare' && where.op === '=' && !this.searchColumn(where.field);
  }

  /** The entries' documents (their ids, or the stored results of a map/reduce index); missing ones are left out. */
  loadEntries(ids: readonly number[]): PageEntry[] {
    const statement = this.sql.statement('SELECT doc_id, stored FROM entries WHERE id = ?');
    const entries: PageEntry[] = [];
    for (const entry of ids) {
      const row = statement.get(entry) as { doc_id: string | null; stored: string | null } | undefined;
      if (row) entries.push({ entry, docId: row.doc_id, stored: row.stored });
    }
    return entries;
  }

  // ---- SQL helpers ---------------------------------------------------------------

  private meta(key: string): string | number {
    return (
      this.sql.get<{ value: string | number }>('SELECT value FROM meta WHERE key = ?', [key])?.value ?? 0
    );
  }

  private termCount(field: number, value: TermValue): number {
    return (
      this.sql.get<{ count: number }>('SELECT count FROM term_counts WHERE field = ? AND value = ?', [
        field,
        value,
      ])?.count ?? 0
    );
  }
}
