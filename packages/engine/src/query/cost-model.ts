// The reader's cost model: which scan drives a query (the cheapest the predicate allows, by estimates
// the index keeps or counts capped at ESTIMATE_CAP), and whether a page is cheaper walked in order or
// sorted. The constants were measured on the NuGet-like benchmarks (docs/benchmarks.md).
import type { QueryPlanNode } from '@rookery/protocol';
import type { TermValue } from '../indexing/field-values.js';
import type { EntrySet } from './entry-set.js';
import { allInAsAnd, type Predicate } from './plan.js';
import { describe } from './plan-describe.js';
import type { ReaderScope } from './reader-scope.js';
import {
  compileProbe,
  INLINE_IN_VALUES,
  latitudeBand,
  type Sql,
  searchMatch,
  termRange,
} from './sql-predicate.js';

/** Where candidate entries come from: the cheapest scan the predicate allows. */
export interface Driver {
  sql: string;
  params: unknown[];
  /** Expected number of rows (exact for one term, capped estimates otherwise). */
  estimate: number;
  /** The scan may return an entry more than once (multi-valued fields, unions). */
  mayRepeat: boolean;
  describe: QueryPlanNode;
}

/** How one predicate is matched: the SQL plan, and the bitmap when MatchSets chose to build one. */
export interface MatchPlan {
  driver: Driver;
  residual: Predicate | null;
  match: Sql;
  set: EntrySet | null;
}

/** Estimates count at most this many rows: above it a match is "broad", whatever its size. */
export const ESTIMATE_CAP = 10_000;
/** Testing a candidate against a full-text match costs about this many term probes (an FTS5 seek per entry). */
const SEARCH_PROBE_COST = 20;
/** Relative cost of testing one entry during an ordered walk against sorting one match (see walkIsCheaper). */
const WALK_COST_FACTOR = 0.5;
/** A match sorted (its sort keys read by SQL seeks, ~4 µs) costs about this many positions of a kept-order walk. */
const KEPT_WALK_POSITIONS_PER_SORTED = 200;
/** A match sorted in SQL costs about as much as this many rows of an SQL walk (towards keeping the order). */
export const SORTED_AS_WALKED_ROWS = 4;

export function chooseDriver(
  scope: ReaderScope,
  where: Predicate | null,
): { driver: Driver; residual: Predicate | null } {
  if (where === null || where.kind === 'true') return { driver: allEntries(scope), residual: null };
  const leaf = leafDriver(scope, where);
  if (leaf) return leaf;
  if (where.kind === 'and') {
    let best: { driver: Driver; residual: Predicate | null; index: number } | null = null;
    where.children.forEach((child, index) => {
      const candidate =
        child.kind === 'or' || child.kind === 'and' ? chooseDriver(scope, child) : leafDriver(scope, child);
      if (!candidate || candidate.driver.sql === allEntries(scope).sql) return;
      if (!best || candidate.driver.estimate < best.driver.estimate) best = { ...candidate, index };
    });
    if (best !== null) {
      const chosen: { driver: Driver; residual: Predicate | null; index: number } = best;
      const rest = where.children.filter((_, i) => i !== chosen.index);
      if (chosen.residual) rest.push(chosen.residual);
      return {
        driver: chosen.driver,
        residual:
          rest.length === 0 ? null : rest.length === 1 ? (rest[0] ?? null) : { kind: 'and', children: rest },
      };
    }
  }
  if (where.kind === 'or') {
    const branches = where.children.map((child) => chooseDriver(scope, child));
    if (branches.every((b) => b.driver.sql !== allEntries(scope).sql)) {
      const parts = branches.map((b) => matchSql(scope, b.driver, b.residual));
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
  return { driver: allEntries(scope), residual: where };
}

function leafDriver(
  scope: ReaderScope,
  predicate: Predicate,
): { driver: Driver; residual: Predicate | null } | null {
  switch (predicate.kind) {
    case 'search':
    case 'compare': {
      const column = scope.searchColumn(predicate.field);
      if (predicate.kind === 'compare' && (predicate.op !== '=' || !column)) break;
      const terms = predicate.kind === 'search' ? predicate.terms : String(predicate.value ?? '');
      const match = searchMatch(
        predicate.field,
        terms,
        predicate.kind === 'search' ? predicate.operator : 'and',
        scope,
      );
      if (match === null) return { driver: nothingDriver(), residual: null };
      return {
        driver: {
          sql: 'SELECT rowid AS entry FROM fts WHERE fts MATCH ?',
          params: [match],
          estimate: Math.min(
            keptSize(scope, predicate) ??
              scope.sets.postingEstimate(predicate) ??
              scope.sql.countCapped('SELECT rowid FROM fts WHERE fts MATCH ?', [match], ESTIMATE_CAP),
            ESTIMATE_CAP,
          ),
          mayRepeat: false,
          describe: { Operation: 'FullTextSearch', Details: `${predicate.field}: ${match}` },
        },
        residual: null,
      };
    }
    case 'within': {
      const field = scope.fieldId(predicate.field);
      if (field === undefined) return { driver: nothingDriver(), residual: null };
      const band = latitudeBand(predicate.lat, predicate.radiusKm);
      const sql = 'SELECT entry FROM spatial WHERE field = ? AND lat BETWEEN ? AND ?';
      const params = [field, band.minLat, band.maxLat];
      return {
        driver: {
          sql,
          params,
          estimate: scope.sql.countCapped(sql, params, ESTIMATE_CAP),
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
        return chooseDriver(scope, allInAsAnd(predicate));
      // A long list: the entries with any of its values drive, and the probe keeps those with all of them.
      if (predicate.all) {
        const any = leafDriver(scope, { ...predicate, all: false });
        return any && { driver: any.driver, residual: predicate };
      }
      break;
  }
  if (predicate.kind === 'endsWith' || (predicate.kind === 'compare' && predicate.op === '!=')) return null;
  const range = termRange(predicate, scope);
  if (range === null) return { driver: nothingDriver(), residual: null };
  const sql = `SELECT entry FROM terms WHERE field = ? AND ${range.sql}`;
  const params = [range.field, ...range.params];
  const estimate =
    predicate.kind === 'compare' && predicate.op === '='
      ? scope.termCount(range.field, range.params[0] as TermValue)
      : Math.min(
          keptSize(scope, predicate) ?? scope.sql.countCapped(sql, params, ESTIMATE_CAP),
          ESTIMATE_CAP,
        );
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
function keptSize(scope: ReaderScope, leaf: Predicate): number | null {
  return scope.setPolicy === 'never' ? null : scope.sets.keptSize(leaf);
}

export function allEntries(scope: ReaderScope): Driver {
  return {
    sql: 'SELECT id AS entry FROM entries',
    params: [],
    estimate: scope.entriesCount(),
    mayRepeat: false,
    describe: { Operation: 'AllEntries' },
  };
}

/** The set of matching entries as SQL: `SELECT entry FROM …`. */
export function matchSql(scope: ReaderScope, driver: Driver, residual: Predicate | null): Sql {
  const probe = residual ? compileProbe(residual, 'd.entry', scope) : null;
  return {
    sql: `SELECT ${driver.mayRepeat ? 'DISTINCT ' : ''}d.entry AS entry FROM (${driver.sql}) d${
      probe ? ` WHERE ${probe.sql}` : ''
    }`,
    params: [...driver.params, ...(probe?.params ?? [])],
  };
}

/**
 * Walking the order field's terms tests about `wanted × entries / matches`
 * entries before the page is full, each at `testCost` (in term probes);
 * sorting tests every match once (and computes its sort keys, about twice
 * the work of a test). Matches are estimated (capped), so the walk is
 * picked for broad filters.
 */
export function walkIsCheaper(
  scope: ReaderScope,
  matches: number,
  wanted: number,
  testCost: number,
): boolean {
  const entries = Math.max(1, scope.entriesCount());
  return matches * matches > WALK_COST_FACTOR * testCost * wanted * entries;
}

/**
 * Over a kept order a walk costs a few nanoseconds a position, so it wins
 * unless the matches are so few that it would pass very many positions
 * for each: sorting costs about as much per match as a walk of
 * KEPT_WALK_POSITIONS_PER_SORTED positions.
 */
export function keptWalkIsCheaper(scope: ReaderScope, matches: number, wanted: number): boolean {
  const positions = (wanted * Math.max(1, scope.entriesCount())) / Math.max(1, matches);
  return positions <= KEPT_WALK_POSITIONS_PER_SORTED * matches;
}

/** The cost of testing one entry against `where` in SQL, in term probes. */
export function probeCost(where: Predicate | null): number {
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

export function nothingDriver(): Driver {
  return {
    sql: 'SELECT NULL AS entry WHERE 0',
    params: [],
    estimate: 0,
    mayRepeat: false,
    describe: { Operation: 'Nothing', Details: 'no entry has this field' },
  };
}
