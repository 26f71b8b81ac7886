import fs from 'node:fs';
import type { FacetResult, IndexDefinition, QueryPlanNode } from '@rookery/protocol';
import { RookeryError } from '@rookery/protocol';
import type BetterSqlite3 from 'better-sqlite3';
import { compareTerms, NULL_TERM, type TermValue } from '../indexing/field-values.js';
import {
  exactFieldsOf,
  FieldRegistry,
  ftsColumnOf,
  openIndexFile,
  readDefinition,
  searchFieldsOf,
} from '../indexing/index-file.js';
import { EntrySet } from './entry-set.js';
import type { FieldOrder } from './field-order.js';
import { MatchSets } from './match-sets.js';
import { allInAsAnd, type FacetSpec, type IndexQuery, type OrderKey, type Predicate } from './plan.js';
import { PostingLists } from './posting-sets.js';
import {
  compileProbe,
  distanceKm,
  type FieldLookup,
  INLINE_IN_VALUES,
  latitudeBand,
  type Sql,
  searchMatch,
  termRange,
} from './sql-predicate.js';
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

/** How one predicate is matched: the SQL plan, and the bitmap when MatchSets chose to build one. */
interface MatchPlan {
  driver: Driver;
  residual: Predicate | null;
  match: Sql;
  set: EntrySet | null;
}

export interface QueryPage {
  entries: PageEntry[];
  total: number;
  plan: QueryPlanNode;
}

/** Where candidate entries come from: the cheapest scan the predicate allows. */
interface Driver {
  sql: string;
  params: unknown[];
  /** Expected number of rows (exact for one term, capped estimates otherwise). */
  estimate: number;
  /** The scan may return an entry more than once (multi-valued fields, unions). */
  mayRepeat: boolean;
  describe: QueryPlanNode;
}

const ESTIMATE_CAP = 10_000;
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
/** Testing a candidate against a full-text match costs about this many term probes (an FTS5 seek per entry). */
const SEARCH_PROBE_COST = 20;
/** Relative cost of testing one entry during an ordered walk against sorting one match (see walkIsCheaper). */
const WALK_COST_FACTOR = 0.5;
/** A match sorted (its sort keys read by SQL seeks, ~4 µs) costs about this many positions of a kept-order walk. */
const KEPT_WALK_POSITIONS_PER_SORTED = 200;
/** A match sorted in SQL costs about as much as this many rows of an SQL walk (towards keeping the order). */
const SORTED_AS_WALKED_ROWS = 4;
const STATEMENT_CACHE = 256;

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
  private readonly statements = new Map<string, BetterSqlite3.Statement>();
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
      const plan = this.plan(query.where);
      const total = this.count(query.where, plan);
      const order = this.page(query, plan);
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
      const plan = this.plan(query.where);
      return { entries: this.page(query, plan).entries, total: this.count(query.where, plan) };
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
    return this.read(() => this.facetsIn(where, specs));
  }

  private facetsIn(where: Predicate | null, specs: readonly FacetSpec[]): FacetResult[] {
    // Term facets join the matches' rows to their terms in SQL: a bitmap would not spare that join.
    const { driver, residual } = this.chooseDriver(where);
    const match = this.matchSql(driver, residual);
    return specs.map((spec) => {
      if (spec.kind === 'ranges') {
        return {
          Name: spec.name,
          Values: spec.ranges.map((range) => {
            const combined: Predicate = where
              ? { kind: 'and', children: [where, range.predicate] }
              : range.predicate;
            return { Range: range.label, Count: this.count(combined, this.plan(combined)) };
          }),
        };
      }
      if (this.searchColumn(spec.field)) {
        throw new RookeryError(
          'InvalidQuery',
          `facet(${spec.field}): facets count exact terms and ${spec.field} is a full-text field; facet on a ` +
            'field indexed without Indexing: "Search"',
        );
      }
      const field = this.fieldId(spec.field);
      if (field === undefined) return { Name: spec.name, Values: [] };
      const orderBy =
        spec.order === 'countDesc' ? 'count DESC, value' : spec.order === 'termAsc' ? 'value' : 'value DESC';
      const rows =
        where === null
          ? this.all<{ value: TermValue; count: number }>(
              `SELECT value, count FROM term_counts WHERE field = ? AND value < ? ORDER BY ${orderBy} LIMIT ?`,
              [field, NULL_TERM, spec.top],
            )
          : // CROSS JOIN keeps the matches as the outer loop (SQLite never reorders it), each looking up its
            // terms through terms_by_entry. With a plain JOIN the planner chose to walk every term of the
            // field and re-run the match (an FTS scan) for each: facets over a search took 10-20 s at 100k
            // documents instead of ~50 ms (found by the k6 NuGet test).
            this.all<{ value: TermValue; count: number }>(
              `SELECT t.value AS value, count(*) AS count FROM (${match.sql}) m
               CROSS JOIN terms t ON t.entry = m.entry AND t.field = ? AND t.value < ?
               GROUP BY t.value ORDER BY ${orderBy} LIMIT ?`,
              [...match.params, field, NULL_TERM, spec.top],
            );
      return { Name: spec.name, Values: rows.map((r) => ({ Range: String(r.value), Count: r.count })) };
    });
  }

  /** "Did you mean": indexed terms close to `term`, best first (suggestions.ts). */
  suggest(fieldName: string, term: string, max: number): string[] {
    return this.suggestions.suggest(fieldName, term, max);
  }

  close(): void {
    this.statements.clear();
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
    const { driver, residual } = this.chooseDriver(where);
    return { driver, residual, match: this.matchSql(driver, residual), set: this.matchSet(where, driver) };
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
    if (this.isSingleTerm(where) || driver.estimate < SET_MIN_CANDIDATES) return null;
    const budget = SET_READ_RATIO * driver.estimate;
    const worthReading = driver.estimate >= ESTIMATE_CAP || this.sets.missingSize(where, budget) <= budget;
    return worthReading ? this.sets.evaluate(where) : null;
  }

  private chooseDriver(where: Predicate | null): { driver: Driver; residual: Predicate | null } {
    if (where === null || where.kind === 'true') return { driver: this.allEntries(), residual: null };
    const leaf = this.leafDriver(where);
    if (leaf) return leaf;
    if (where.kind === 'and') {
      let best: { driver: Driver; residual: Predicate | null; index: number } | null = null;
      where.children.forEach((child, index) => {
        const candidate =
          child.kind === 'or' || child.kind === 'and' ? this.chooseDriver(child) : this.leafDriver(child);
        if (!candidate || candidate.driver.sql === this.allEntries().sql) return;
        if (!best || candidate.driver.estimate < best.driver.estimate) best = { ...candidate, index };
      });
      if (best !== null) {
        const chosen: { driver: Driver; residual: Predicate | null; index: number } = best;
        const rest = where.children.filter((_, i) => i !== chosen.index);
        if (chosen.residual) rest.push(chosen.residual);
        return {
          driver: chosen.driver,
          residual:
            rest.length === 0
              ? null
              : rest.length === 1
                ? (rest[0] ?? null)
                : { kind: 'and', children: rest },
        };
      }
    }
    if (where.kind === 'or') {
      const branches = where.children.map((child) => this.chooseDriver(child));
      if (branches.every((b) => b.driver.sql !== this.allEntries().sql)) {
        const parts = branches.map((b) => this.matchSql(b.driver, b.residual));
        return {
          driver: {
            sql: parts.map((p) => p.sql).join(' UNION '),
            params: parts.flatMap((p) => p.params),
            estimate: branches.reduce((sum, b) => sum + b.driver.estimate, 0),
            mayRepeat: false,
            describe: { Operation: 'Union', Children: branches.map((b) => b.driver.describe) },
          },
          residual: null,
        };
      }
    }
    return { driver: this.allEntries(), residual: where };
  }

  private leafDriver(predicate: Predicate): { driver: Driver; residual: Predicate | null } | null {
    switch (predicate.kind) {
      case 'search':
      case 'compare': {
        const column = this.searchColumn(predicate.field);
        if (predicate.kind === 'compare' && (predicate.op !== '=' || !column)) break;
        const terms = predicate.kind === 'search' ? predicate.terms : String(predicate.value ?? '');
        const match = searchMatch(
          predicate.field,
          terms,
          predicate.kind === 'search' ? predicate.operator : 'and',
          this,
        );
        if (match === null) return { driver: nothingDriver(), residual: null };
        return {
          driver: {
            sql: 'SELECT rowid AS entry FROM fts WHERE fts MATCH ?',
            params: [match],
            estimate: Math.min(
              this.keptSize(predicate) ??
                this.sets.postingEstimate(predicate) ??
                this.countCapped('SELECT rowid FROM fts WHERE fts MATCH ?', [match]),
              ESTIMATE_CAP,
            ),
            mayRepeat: false,
            describe: { Operation: 'FullTextSearch', Details: `${predicate.field}: ${match}` },
          },
          residual: null,
        };
      }
      case 'within': {
        const field = this.fieldId(predicate.field);
        if (field === undefined) return { driver: nothingDriver(), residual: null };
        const band = latitudeBand(predicate.lat, predicate.radiusKm);
        const sql = 'SELECT entry FROM spatial WHERE field = ? AND lat BETWEEN ? AND ?';
        const params = [field, band.minLat, band.maxLat];
        return {
          driver: {
            sql,
            params,
            estimate: this.countCapped(sql, params),
            mayRepeat: true,
            describe: { Operation: 'SpatialBand', Details: `${predicate.field} latitude band` },
          },
          // The band is a superset: the exact circle test stays as the residual.
          residual: predicate,
        };
      }
      case 'not':
      case 'and':
      case 'or':
      case 'true':
        return null;
      case 'in':
        if (predicate.all && predicate.values.length <= INLINE_IN_VALUES)
          return this.chooseDriver(allInAsAnd(predicate));
        // A long list: the entries with any of its values drive, and the probe keeps those with all of them.
        if (predicate.all) {
          const any = this.leafDriver({ ...predicate, all: false });
          return any && { driver: any.driver, residual: predicate };
        }
        break;
    }
    if (predicate.kind === 'endsWith' || (predicate.kind === 'compare' && predicate.op === '!=')) return null;
    const range = termRange(predicate, this);
    if (range === null) return { driver: nothingDriver(), residual: null };
    const sql = `SELECT entry FROM terms WHERE field = ? AND ${range.sql}`;
    const params = [range.field, ...range.params];
    const estimate =
      predicate.kind === 'compare' && predicate.op === '='
        ? this.termCount(range.field, range.params[0] as TermValue)
        : Math.min(this.keptSize(predicate) ?? this.countCapped(sql, params), ESTIMATE_CAP);
    return {
      driver: {
        sql,
        params,
        estimate,
        mayRepeat: range.mayRepeat,
        describe: { Operation: 'TermScan', Details: `${describe(predicate).Details}` },
      },
      residual: null,
    };
  }

  /**
   * A leaf's match count from its kept bitmap, or null: a common search
   * counted in FTS5 (up to ESTIMATE_CAP rowids) cost milliseconds a query
   * even while its bitmap was kept.
   */
  private keptSize(leaf: Predicate): number | null {
    return this.setPolicy === 'never' ? null : this.sets.keptSize(leaf);
  }

  private allEntries(): Driver {
    return {
      sql: 'SELECT id AS entry FROM entries',
      params: [],
      estimate: this.entriesCount(),
      mayRepeat: false,
      describe: { Operation: 'AllEntries' },
    };
  }

  /** The set of matching entries as SQL: `SELECT entry FROM …`. */
  private matchSql(driver: Driver, residual: Predicate | null): Sql {
    const probe = residual ? compileProbe(residual, 'd.entry', this) : null;
    return {
      sql: `SELECT ${driver.mayRepeat ? 'DISTINCT ' : ''}d.entry AS entry FROM (${driver.sql}) d${
        probe ? ` WHERE ${probe.sql}` : ''
      }`,
      params: [...driver.params, ...(probe?.params ?? [])],
    };
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
    return this.get<{ n: number }>(`SELECT count(*) AS n FROM (${match.sql})`, match.params)?.n ?? 0;
  }

  /** `where` as one exact term, whose count the indexer keeps; null for anything else. */
  private isSingleTerm(where: Predicate): boolean {
    return where.kind === 'compare' && where.op === '=' && !this.searchColumn(where.field);
  }

  private page(query: IndexQuery, plan: MatchPlan): { entries: number[]; describe: QueryPlanNode } {
    const { skip, take } = query;
    const { driver, set } = plan;
    let { match } = plan;
    const [first] = query.orderBy;
    const search = firstSearch(query.where);
    const byScore = first?.kind === 'score' || (first === undefined && search !== null);
    if (byScore && search) {
      const matchText = searchMatch(search.field, search.terms, search.operator, this);
      if (matchText === null) return { entries: [], describe: { Operation: 'OrderByScore' } };
      const probe = query.where ? compileProbe(query.where, 'fts.rowid', this) : { sql: '1', params: [] };
      const entries = this.entryNumbers(
        `SELECT fts.rowid AS entry FROM fts WHERE fts MATCH ? AND ${probe.sql}
         ORDER BY bm25(fts) LIMIT ? OFFSET ?`,
        [matchText, ...probe.params, take, skip],
      );
      return { entries, describe: { Operation: 'OrderByScore', Details: 'bm25' } };
    }
    if (first === undefined || first.kind === 'score') {
      const entries = this.entryNumbers(`${match.sql} LIMIT ? OFFSET ?`, [...match.params, take, skip]);
      return { entries, describe: { Operation: 'IndexOrder' } };
    }
    const onlyFields = query.orderBy.every((k) => k.kind === 'field');
    const matches = set ? set.size : driver.estimate;
    // An estimate at the cap means "at least that many": broad, so the walk stays cheap whatever it tests.
    const testCost = set || matches >= ESTIMATE_CAP ? 1 : probeCost(query.where);
    const field = first.kind === 'field' ? this.fieldId(first.field) : undefined;
    const kept = set && field !== undefined ? this.keptOrder(field) : null;
    if (
      first.kind === 'field' &&
      onlyFields &&
      (kept
        ? this.keptWalkIsCheaper(matches, skip + take)
        : this.walkIsCheaper(matches, skip + take, testCost))
    ) {
      if (field === undefined)
        return { entries: [], describe: { Operation: 'OrderBy', Details: 'unknown field' } };
      if (kept && set) return this.walkKept(query, kept, first.descending, set);
      // The walk reads every entry of the order field, not the driver's candidates: it must test the whole
      // predicate (the residual alone would let entries through that only the driver excluded).
      return this.walkSorted(query, field, first.descending, set ?? query.where);
    }
    if (first.kind === 'field' && onlyFields && field !== undefined) {
      // With a bitmap the kept order was looked up above already.
      const order = set ? kept : this.keptOrder(field);
      if (order) {
        // Candidates only: their order values come from the kept order, not from a seek each.
        const candidates = set ? [...set.entries()] : this.entryNumbers(match.sql, match.params);
        return this.sortByKeptOrder(query, order, first.descending, candidates);
      }
      // Sorting in SQL seeks each candidate's sort keys: work towards keeping the field's order.
      if (this.setPolicy !== 'never') this.sets.noteWalked(field, SORTED_AS_WALKED_ROWS * matches);
    }
    // Sorting the bitmap's few members costs less than re-running the driver and its probes.
    if (set)
      match = {
        sql: 'SELECT value AS entry FROM json_each(?)',
        params: [JSON.stringify([...set.entries()])],
      };
    // Few candidates: SQLite sorts them by every key (top-N sort with LIMIT).
    const keys: string[] = [];
    const keyParams: unknown[] = [];
    const orderTerms: string[] = [];
    query.orderBy.forEach((key, i) => {
      const sortKey = this.sortKeySql(key);
      keys.push(`${sortKey.sql} AS k${i}`);
      keyParams.push(...sortKey.params);
      orderTerms.push(`k${i} ${'descending' in key && key.descending ? 'DESC' : 'ASC'}`);
    });
    const entries = this.entryNumbers(
      `SELECT m.entry AS entry, ${keys.join(', ')} FROM (${match.sql}) m
       ORDER BY ${orderTerms.join(', ')}, m.entry LIMIT ? OFFSET ?`,
      [...keyParams, ...match.params, take, skip],
    );
    return {
      entries,
      describe: { Operation: 'Sort', Details: `${query.orderBy.length} key(s), candidates sorted by SQLite` },
    };
  }

  /**
   * Walking the order field's terms tests about `wanted × entries / matches`
   * entries before the page is full, each at `testCost` (in term probes);
   * sorting tests every match once (and computes its sort keys, about twice
   * the work of a test). Matches are estimated (capped), so the walk is
   * picked for broad filters.
   */
  private walkIsCheaper(matches: number, wanted: number, testCost: number): boolean {
    const entries = Math.max(1, this.entriesCount());
    return matches * matches > WALK_COST_FACTOR * testCost * wanted * entries;
  }

  /**
   * Over a kept order a walk costs a few nanoseconds a position, so it wins
   * unless the matches are so few that it would pass very many positions
   * for each: sorting costs about as much per match as a walk of
   * KEPT_WALK_POSITIONS_PER_SORTED positions.
   */
  private keptWalkIsCheaper(matches: number, wanted: number): boolean {
    const positions = (wanted * Math.max(1, this.entriesCount())) / Math.max(1, matches);
    return positions <= KEPT_WALK_POSITIONS_PER_SORTED * matches;
  }

  /** The order field's kept order when bitmaps are in use (read now if they always are), else null. */
  private keptOrder(field: number): FieldOrder | null {
    if (this.setPolicy === 'never') return null;
    this.sets.refresh();
    return this.sets.order(field, this.setPolicy === 'always');
  }

  private sortKeySql(key: OrderKey): Sql {
    if (key.kind === 'score') return { sql: '0', params: [] };
    const field = this.fieldId(key.field);
    if (field === undefined) return { sql: 'NULL', params: [] };
    if (key.kind === 'distance') {
      return {
        sql: '(SELECT min(rk_distance_km(lat, lng, ?, ?)) FROM spatial WHERE entry = m.entry AND field = ?)',
        params: [key.lat, key.lng, field],
      };
    }
    return {
      sql: `(SELECT value FROM terms WHERE entry = m.entry AND field = ? ORDER BY value ${
        key.descending ? 'DESC' : 'ASC'
      } LIMIT 1)`,
      params: [field],
    };
  }

  /**
   * Many candidates, ordered by a field: walk that field's terms in order and
   * test each entry, stopping once the page is full and the order value
   * changes (so ties are complete), then order the ties by the other keys.
   */
  private walkSorted(
    query: IndexQuery,
    field: number,
    descending: boolean,
    matches: Predicate | EntrySet | null,
  ): { entries: number[]; describe: QueryPlanNode } {
    // A bitmap is tested here in JavaScript; a predicate becomes a probe in the SQL of the walk.
    const set = matches instanceof EntrySet ? matches : null;
    const where = set ? null : (matches as Predicate | null);
    const probe = where ? compileProbe(where, 't.entry', this) : { sql: '1', params: [] };
    const direction = descending ? 'DESC' : 'ASC';
    const statement = this.statement(
      `SELECT t.entry AS entry, t.value AS value FROM terms t WHERE t.field = ? AND ${probe.sql}
       ORDER BY t.value ${direction}, t.entry ${direction}`,
    );
    const page = new WalkPage(query, set);
    let read = 0;
    for (const row of statement.iterate(field, ...probe.params) as IterableIterator<{
      entry: number;
      value: TermValue;
    }>) {
      read++;
      if (!page.offer(row.entry, row.value)) break;
    }
    // A field walked this way often enough gets its order kept (see MatchSets.order).
    if (set) this.sets.noteWalked(field, read);
    return this.walked(query, page.rows, `${page.rows.length} entries read in order`);
  }

  /**
   * walkSorted over the order field's kept order, testing the bitmap: the
   * same entries in the same order (an entry at its first value met, ties
   * complete), with each value's run standing for the value.
   */
  private walkKept(
    query: IndexQuery,
    order: FieldOrder,
    descending: boolean,
    set: EntrySet,
  ): { entries: number[]; describe: QueryPlanNode } {
    const { entries, runStarts } = order;
    const page = new WalkPage(query, set);
    let run = descending ? runStarts.length - 2 : 0;
    let passed = 0;
    for (let k = 0; k < entries.length; k++) {
      const at = descending ? entries.length - 1 - k : k;
      if (descending) while (at < (runStarts[run] as number)) run--;
      else while (at >= (runStarts[run + 1] as number)) run++;
      passed++;
      if (!page.offer(entries[at] as number, run)) break;
    }
    return this.walked(
      query,
      page.rows,
      `${passed} positions of the kept order passed, ${page.rows.length} entries taken`,
    );
  }

  /** A walk's page: its rows in walk order, ties of the order value ordered by the next keys. */
  private walked(
    query: IndexQuery,
    rows: { entry: number; value: TermValue }[],
    details: string,
  ): { entries: number[]; describe: QueryPlanNode } {
    let ordered = rows.map((r) => r.entry);
    if (query.orderBy.length > 1 && rows.length > 0) ordered = this.orderTies(rows, query.orderBy.slice(1));
    return {
      entries: ordered.slice(query.skip, query.skip + query.take),
      describe: {
        Operation: 'OrderedTermWalk',
        Details: `${details}${query.orderBy.length > 1 ? ', ties ordered by the next keys' : ''}`,
      },
    };
  }

  /**
   * Few candidates sorted over the first key's kept order: a candidate's
   * value there is its run (no seek per candidate). The page and the rest of
   * the run it ends in are kept, and only their next keys are read. The order
   * is the SQL sort's: an entry without the field sorts as NULL (first
   * ascending, last descending), as does a missing next key; full ties go by
   * entry id. Next keys compare as SQLite orders terms (compareTerms, text by
   * UTF-8 byte), as in orderTies.
   */
  private sortByKeptOrder(
    query: IndexQuery,
    order: FieldOrder,
    descending: boolean,
    candidates: number[],
  ): { entries: number[]; describe: QueryPlanNode } {
    const runs = order.runOfEntries(descending);
    const sign = descending ? -1 : 1;
    const keyed = candidates.map((entry) => ({
      entry,
      run: runs[entry] ?? -1,
      keys: [] as (TermValue | null)[],
    }));
    keyed.sort((a, b) => sign * (a.run - b.run) || a.entry - b.entry);
    const wanted = query.skip + query.take;
    let end = Math.min(wanted, keyed.length);
    while (end > 0 && end < keyed.length && keyed[end]?.run === keyed[end - 1]?.run) end++;
    const page = keyed.slice(0, end);
    const rest = query.orderBy.slice(1) as Extract<OrderKey, { kind: 'field' }>[];
    if (rest.length > 0) {
      for (const row of page) row.keys = rest.map((key) => this.sortValue(row.entry, key));
      page.sort((a, b) => {
        if (a.run !== b.run) return sign * (a.run - b.run);
        for (let i = 0; i < rest.length; i++) {
          const d = compareSqlSortValues(a.keys[i] ?? null, b.keys[i] ?? null);
          if (d !== 0) return rest[i]?.descending ? -d : d;
        }
        return a.entry - b.entry;
      });
    }
    return {
      entries: page.slice(query.skip, wanted).map((row) => row.entry),
      describe: {
        Operation: 'Sort',
        Details: `${candidates.length} candidates by the kept order of the first key${rest.length > 0 ? ', ties by the next keys' : ''}`,
      },
    };
  }

  /** The value an entry sorts by on a field key: its greatest descending, its least ascending; null if none. */
  private sortValue(entry: number, key: OrderKey): TermValue | null {
    if (key.kind !== 'field') return null;
    const field = this.fieldId(key.field);
    if (field === undefined) return null;
    // The entry and field come in through a one-row subquery, not as variables of the WHERE: SQLite 3.54
    // prepares a statement that orders by an index's column and compares that index's columns with bound
    // variables again at every new binding (~17 µs here, against ~5 µs for the lookup itself; 3.51 did not),
    // and this runs once per sorted entry of a page (docs/benchmarks.md, "Node 20 against Node 24").
    return (
      this.get<{ value: TermValue }>(
        `SELECT value FROM (SELECT ? AS entry, ? AS field) AS k JOIN terms t ON t.entry = k.entry AND t.field = k.field
         ORDER BY t.value ${key.descending ? 'DESC' : 'ASC'} LIMIT 1`,
        [entry, field],
      )?.value ?? null
    );
  }

  private orderTies(rows: { entry: number; value: TermValue }[], rest: readonly OrderKey[]): number[] {
    const keyed = rows.map((row, position) => ({
      ...row,
      position,
      keys: rest.map((key) => this.sortValue(row.entry, key)),
    }));
    keyed.sort((a, b) => {
      if (!sameTerm(a.value, b.value)) return a.position - b.position;
      for (let i = 0; i < rest.length; i++) {
        const key = rest[i];
        const d = compareTerm(a.keys[i] ?? null, b.keys[i] ?? null);
        if (d !== 0) return key && 'descending' in key && key.descending ? -d : d;
      }
      return a.position - b.position;
    });
    return keyed.map((k) => k.entry);
  }

  /** The entries' documents (their ids, or the stored results of a map/reduce index); missing ones are left out. */
  loadEntries(ids: readonly number[]): PageEntry[] {
    const statement = this.statement('SELECT doc_id, stored FROM entries WHERE id = ?');
    const entries: PageEntry[] = [];
    for (const entry of ids) {
      const row = statement.get(entry) as { doc_id: string | null; stored: string | null } | undefined;
      if (row) entries.push({ entry, docId: row.doc_id, stored: row.stored });
    }
    return entries;
  }

  // ---- SQL helpers ---------------------------------------------------------------

  private meta(key: string): string | number {
    return this.get<{ value: string | number }>('SELECT value FROM meta WHERE key = ?', [key])?.value ?? 0;
  }

  private termCount(field: number, value: TermValue): number {
    return (
      this.get<{ count: number }>('SELECT count FROM term_counts WHERE field = ? AND value = ?', [
        field,
        value,
      ])?.count ?? 0
    );
  }

  private countCapped(sql: string, params: unknown[]): number {
    return (
      this.get<{ n: number }>(`SELECT count(*) AS n FROM (${sql} LIMIT ${ESTIMATE_CAP})`, params)?.n ?? 0
    );
  }

  private statement(sql: string): BetterSqlite3.Statement {
    let statement = this.statements.get(sql);
    if (statement) {
      // Keep the map in recency order for the LRU bound below.
      this.statements.delete(sql);
    } else {
      statement = this.db.prepare(sql);
      if (this.statements.size >= STATEMENT_CACHE) {
        const oldest = this.statements.keys().next().value;
        if (oldest !== undefined) this.statements.delete(oldest);
      }
    }
    this.statements.set(sql, statement);
    return statement;
  }

  private get<T>(sql: string, params: unknown[]): T | undefined {
    return this.statement(sql).get(...params) as T | undefined;
  }

  private all<T>(sql: string, params: unknown[]): T[] {
    return this.statement(sql).all(...params) as T[];
  }

  /** The `entry` column of every row, one row object alive at a time (a streamed query reads every match). */
  private entryNumbers(sql: string, params: unknown[]): number[] {
    const entries: number[] = [];
    for (const row of this.statement(sql).iterate(...params) as IterableIterator<{ entry: number }>)
      entries.push(row.entry);
    return entries;
  }
}

/** The cost of testing one entry against `where` in SQL, in term probes. */
function probeCost(where: Predicate | null): number {
  if (where === null) return 1;
  switch (where.kind) {
    case 'and':
    case 'or':
      return where.children.reduce((sum, child) => sum + probeCost(child), 0);
    case 'not':
      return probeCost(where.child);
    case 'search':
      return SEARCH_PROBE_COST;
    default:
      return 1;
  }
}

function describeMatch(where: Predicate | null, plan: MatchPlan): QueryPlanNode {
  if (plan.set && where) {
    return {
      Operation: 'Match',
      Details: `bitmaps of each term and full-text match, combined: ${plan.set.size} entries`,
      Children: [describe(where)],
    };
  }
  const { driver, residual } = plan;
  return {
    Operation: 'Match',
    Details: residual ? 'scan, then test each candidate' : 'scan',
    Children: [driver.describe, ...(residual ? [describe(residual)] : [])],
  };
}

function nothingDriver(): Driver {
  return {
    sql: 'SELECT NULL AS entry WHERE 0',
    params: [],
    estimate: 0,
    mayRepeat: false,
    describe: { Operation: 'Nothing', Details: 'no entry has this field' },
  };
}

/** The first search() reachable through `and`s: what score() ranks by. */
function firstSearch(where: Predicate | null): Extract<Predicate, { kind: 'search' }> | null {
  if (where === null) return null;
  if (where.kind === 'search') return where;
  if (where.kind === 'and') {
    for (const child of where.children) {
      const found = firstSearch(child);
      if (found) return found;
    }
  }
  return null;
}

/**
 * The rows an ordered walk keeps, in walk order: each matching entry once, at
 * the first value the walk meets it with, until the page is full and, when
 * later keys order ties, the last value's ties are complete.
 */
class WalkPage {
  readonly rows: { entry: number; value: TermValue }[] = [];
  private readonly seen = new Set<number>();
  private readonly wanted: number;
  private readonly tiesMatter: boolean;

  constructor(
    query: IndexQuery,
    /** The matches as a bitmap, or null when the walk's SQL tested them already. */
    private readonly set: EntrySet | null,
  ) {
    this.wanted = query.skip + query.take;
    this.tiesMatter = query.orderBy.length > 1;
  }

  /** Offers the walk's next entry and its value; false once the walk can stop. */
  offer(entry: number, value: TermValue): boolean {
    if ((this.set && !this.set.has(entry)) || this.seen.has(entry)) return true;
    const last = this.rows.at(-1);
    if (this.rows.length >= this.wanted && (!this.tiesMatter || (last && !sameTerm(last.value, value))))
      return false;
    this.seen.add(entry);
    this.rows.push({ entry, value });
    return true;
  }
}

function sameTerm(a: TermValue, b: TermValue): boolean {
  if (Buffer.isBuffer(a) || Buffer.isBuffer(b)) return Buffer.isBuffer(a) && Buffer.isBuffer(b);
  return a === b;
}

/** SQLite's ORDER BY: NULL first, then numbers, text and blobs. */
function compareSqlSortValues(a: TermValue | null, b: TermValue | null): number {
  if (a === null || b === null) return (a === null ? 0 : 1) - (b === null ? 0 : 1);
  return compareTerm(a, b);
}

/** SQLite's order of values, with a missing value (null) after every term. */
function compareTerm(a: TermValue | null, b: TermValue | null): number {
  if (a === null || b === null) return (a === null ? 1 : 0) - (b === null ? 1 : 0);
  return compareTerms(a, b);
}

export function describe(predicate: Predicate): QueryPlanNode {
  switch (predicate.kind) {
    case 'and':
    case 'or':
      return { Operation: predicate.kind.toUpperCase(), Children: predicate.children.map(describe) };
    case 'not':
      return { Operation: 'NOT', Children: [describe(predicate.child)] };
    case 'true':
      return { Operation: 'All' };
    case 'compare':
      return {
        Operation: 'Test',
        Details: `${predicate.field} ${predicate.op} ${JSON.stringify(predicate.value)}`,
      };
    case 'between':
      return {
        Operation: 'Test',
        Details: `${predicate.field} between ${JSON.stringify(predicate.low)} and ${JSON.stringify(predicate.high)}`,
      };
    case 'in':
      return {
        Operation: 'Test',
        Details: `${predicate.field} ${predicate.all ? 'all in' : 'in'} (${predicate.values.length} values)`,
      };
    case 'search':
      return { Operation: 'Test', Details: `search(${predicate.field}, ${JSON.stringify(predicate.terms)})` };
    case 'within':
      return { Operation: 'Test', Details: `${predicate.field} within ${predicate.radiusKm} km` };
    default:
      return { Operation: 'Test', Details: `${predicate.kind}(${predicate.field})` };
  }
}
