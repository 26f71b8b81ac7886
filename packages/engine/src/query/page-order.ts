// A query's page in its order: ranked by score (FTS5's bm25), in index order, walked along the first
// order field (its terms in SQL, or its order kept in memory, testing each entry against the match) until
// the page and its ties are complete, or its few matches sorted (over a kept order, or by SQLite). Which
// one is the cost model's call (cost-model.ts).
import type { QueryPlanNode } from '@rookery/protocol';
import { compareTerms, type TermValue } from '../indexing/field-values.js';
import {
  ESTIMATE_CAP,
  keptWalkIsCheaper,
  type MatchPlan,
  probeCost,
  SORTED_AS_WALKED_ROWS,
  walkIsCheaper,
} from './cost-model.js';
import { EntrySet } from './entry-set.js';
import type { FieldOrder } from './field-order.js';
import type { IndexQuery, OrderKey, Predicate } from './plan.js';
import type { ReaderScope } from './reader-scope.js';
import { compileProbe, type Sql, searchMatch } from './sql-predicate.js';

/** The entries of `query`'s page (skip and take applied) in its order, and how they were ordered. */
export function orderPage(
  scope: ReaderScope,
  query: IndexQuery,
  plan: MatchPlan,
): { entries: number[]; describe: QueryPlanNode } {
  const { skip, take } = query;
  const { driver, set } = plan;
  let { match } = plan;
  const [first] = query.orderBy;
  const search = firstSearch(query.where);
  const byScore = first?.kind === 'score' || (first === undefined && search !== null);
  if (byScore && search) {
    const matchText = searchMatch(search.field, search.terms, search.operator, scope);
    if (matchText === null) return { entries: [], describe: { Operation: 'OrderByScore' } };
    const probe = query.where ? compileProbe(query.where, 'fts.rowid', scope) : { sql: '1', params: [] };
    const entries = scope.sql.entryNumbers(
      `SELECT fts.rowid AS entry FROM fts WHERE fts MATCH ? AND ${probe.sql}
       ORDER BY bm25(fts) LIMIT ? OFFSET ?`,
      [matchText, ...probe.params, take, skip],
    );
    return { entries, describe: { Operation: 'OrderByScore', Details: 'bm25' } };
  }
  if (first === undefined || first.kind === 'score') {
    const entries = scope.sql.entryNumbers(`${match.sql} LIMIT ? OFFSET ?`, [...match.params, take, skip]);
    return { entries, describe: { Operation: 'IndexOrder' } };
  }
  const onlyFields = query.orderBy.every((k) => k.kind === 'field');
  const matches = set ? set.size : driver.estimate;
  // An estimate at the cap means "at least that many": broad, so the walk stays cheap whatever it tests.
  const testCost = set || matches >= ESTIMATE_CAP ? 1 : probeCost(query.where);
  const field = first.kind === 'field' ? scope.fieldId(first.field) : undefined;
  const kept = set && field !== undefined ? keptOrder(scope, field) : null;
  if (
    first.kind === 'field' &&
    onlyFields &&
    (kept
      ? keptWalkIsCheaper(scope, matches, skip + take)
      : walkIsCheaper(scope, matches, skip + take, testCost))
  ) {
    if (field === undefined)
      return { entries: [], describe: { Operation: 'OrderBy', Details: 'unknown field' } };
    if (kept && set) return walkKept(scope, query, kept, first.descending, set);
    // The walk reads every entry of the order field, not the driver's candidates: it must test the whole
    // predicate (the residual alone would let entries through that only the driver excluded).
    return walkSorted(scope, query, field, first.descending, set ?? query.where);
  }
  if (first.kind === 'field' && onlyFields && field !== undefined) {
    // With a bitmap the kept order was looked up above already.
    const order = set ? kept : keptOrder(scope, field);
    if (order) {
      // Candidates only: their order values come from the kept order, not from a seek each.
      const candidates = set ? [...set.entries()] : scope.sql.entryNumbers(match.sql, match.params);
      return sortByKeptOrder(scope, query, order, first.descending, candidates);
    }
    // Sorting in SQL seeks each candidate's sort keys: work towards keeping the field's order.
    if (scope.setPolicy !== 'never') scope.sets.noteWalked(field, SORTED_AS_WALKED_ROWS * matches);
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
    const sortKey = sortKeySql(scope, key);
    keys.push(`${sortKey.sql} AS k${i}`);
    keyParams.push(...sortKey.params);
    orderTerms.push(`k${i} ${'descending' in key && key.descending ? 'DESC' : 'ASC'}`);
  });
  const entries = scope.sql.entryNumbers(
    `SELECT m.entry AS entry, ${keys.join(', ')} FROM (${match.sql}) m
     ORDER BY ${orderTerms.join(', ')}, m.entry LIMIT ? OFFSET ?`,
    [...keyParams, ...match.params, take, skip],
  );
  return {
    entries,
    describe: { Operation: 'Sort', Details: `${query.orderBy.length} key(s), candidates sorted by SQLite` },
  };
}

/** The order field's kept order when bitmaps are in use (read now if they always are), else null. */
function keptOrder(scope: ReaderScope, field: number): FieldOrder | null {
  if (scope.setPolicy === 'never') return null;
  scope.sets.refresh();
  return scope.sets.order(field, scope.setPolicy === 'always');
}

function sortKeySql(scope: ReaderScope, key: OrderKey): Sql {
  if (key.kind === 'score') return { sql: '0', params: [] };
  const field = scope.fieldId(key.field);
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
function walkSorted(
  scope: ReaderScope,
  query: IndexQuery,
  field: number,
  descending: boolean,
  matches: Predicate | EntrySet | null,
): { entries: number[]; describe: QueryPlanNode } {
  // A bitmap is tested here in JavaScript; a predicate becomes a probe in the SQL of the walk.
  const set = matches instanceof EntrySet ? matches : null;
  const where = set ? null : (matches as Predicate | null);
  const probe = where ? compileProbe(where, 't.entry', scope) : { sql: '1', params: [] };
  const direction = descending ? 'DESC' : 'ASC';
  const statement = scope.sql.statement(
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
  if (set) scope.sets.noteWalked(field, read);
  return walked(scope, query, page.rows, `${page.rows.length} entries read in order`);
}

/**
 * walkSorted over the order field's kept order, testing the bitmap: the
 * same entries in the same order (an entry at its first value met, ties
 * complete), with each value's run standing for the value.
 */
function walkKept(
  scope: ReaderScope,
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
  return walked(
    scope,
    query,
    page.rows,
    `${passed} positions of the kept order passed, ${page.rows.length} entries taken`,
  );
}

/** A walk's page: its rows in walk order, ties of the order value ordered by the next keys. */
function walked(
  scope: ReaderScope,
  query: IndexQuery,
  rows: { entry: number; value: TermValue }[],
  details: string,
): { entries: number[]; describe: QueryPlanNode } {
  let ordered = rows.map((r) => r.entry);
  if (query.orderBy.length > 1 && rows.length > 0) ordered = orderTies(scope, rows, query.orderBy.slice(1));
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
function sortByKeptOrder(
  scope: ReaderScope,
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
    for (const row of page) row.keys = rest.map((key) => sortValue(scope, row.entry, key));
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
function sortValue(scope: ReaderScope, entry: number, key: OrderKey): TermValue | null {
  if (key.kind !== 'field') return null;
  const field = scope.fieldId(key.field);
  if (field === undefined) return null;
  // The entry and field come in through a one-row subquery, not as variables of the WHERE: SQLite 3.54
  // prepares a statement that orders by an index's column and compares that index's columns with bound
  // variables again at every new binding (~17 µs here, against ~5 µs for the lookup itself; 3.51 did not),
  // and this runs once per sorted entry of a page (docs/benchmarks.md, "Node 20 against Node 24").
  return (
    scope.sql.get<{ value: TermValue }>(
      `SELECT value FROM (SELECT ? AS entry, ? AS field) AS k JOIN terms t ON t.entry = k.entry AND t.field = k.field
       ORDER BY t.value ${key.descending ? 'DESC' : 'ASC'} LIMIT 1`,
      [entry, field],
    )?.value ?? null
  );
}

function orderTies(
  scope: ReaderScope,
  rows: { entry: number; value: TermValue }[],
  rest: readonly OrderKey[],
): number[] {
  const keyed = rows.map((row, position) => ({
    ...row,
    position,
    keys: rest.map((key) => sortValue(scope, row.entry, key)),
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
