import type BetterSqlite3 from 'better-sqlite3';
import type { MapResultRow } from './batch-preparer.js';
import type { BulkBuild } from './bulk-build.js';

/** Groups read and reduced at once in the reduce phase (one reduce call, one entries write). */
const GROUPS_PER_READ = 1_000;

/**
 * The reduce phase of a map/reduce index's first build (bulk-build.ts): once the map phase has
 * stored every document's map results, every group is reduced once, in key order, reading
 * `map_results` through `map_results_by_key` (made at the end of the map phase). A group's rows
 * come in rowid order (`ORDER BY reduce_key, rowid`, the index's own order, no sort): the order an
 * incremental build reduces them in (stored rows first, then each batch's in batch order, each
 * inserted after the ones before), so both give the same result even for an order-dependent reduce.
 */
export class GroupScan {
  private readonly s;

  constructor(db: BetterSqlite3.Database) {
    this.s = {
      firstKeys: db.prepare<[number], { reduce_key: string }>(
        'SELECT DISTINCT reduce_key FROM map_results ORDER BY reduce_key LIMIT ?',
      ),
      keysAfter: db.prepare<[string, number], { reduce_key: string }>(
        'SELECT DISTINCT reduce_key FROM map_results WHERE reduce_key > ? ORDER BY reduce_key LIMIT ?',
      ),
      rowsBetween: db.prepare<[string, string], { reduce_key: string; source: string; value: string }>(
        `SELECT reduce_key, source, value FROM map_results
         WHERE reduce_key >= ? AND reduce_key <= ? ORDER BY reduce_key, rowid`,
      ),
    };
  }

  /** Up to `limit` group keys after `after` (from the first when undefined), in key order. */
  keysAfter(after: string | undefined, limit: number): string[] {
    const rows = after === undefined ? this.s.firstKeys.all(limit) : this.s.keysAfter.all(after, limit);
    return rows.map((r) => r.reduce_key);
  }

  /** The rows of the groups `keys` (consecutive keys, in order), by key, each group's in rowid order. */
  groupsOf(keys: readonly string[]): Map<string, MapResultRow[]> {
    const groups = new Map<string, MapResultRow[]>(keys.map((key) => [key, []]));
    if (keys.length === 0) return groups;
    for (const row of this.s.rowsBetween.all(keys[0]!, keys.at(-1)!)) {
      // The source is the document's lower-cased id: what a failed group's error names.
      groups.get(row.reduce_key)!.push({
        source: row.source,
        document: row.source,
        key: row.reduce_key,
        value: row.value,
      });
    }
    return groups;
  }
}

/**
 * Reduces the next groups after the last one reduced (inside the caller's transaction), GROUPS_PER_READ
 * at a time through `reduceAndWrite`, recording each read's last key, until `maxGroups` were reduced,
 * `until` (a Date.now() time) has passed after at least one read, or no group is left: returns
 * true in the last case (the caller then ends the bulk build).
 */
export function reduceNextGroups(
  scan: GroupScan,
  bulk: BulkBuild,
  limits: { maxGroups: number; until: number },
  reduceAndWrite: (keys: string[], groups: Map<string, MapResultRow[]>) => void,
): boolean {
  let reduced = 0;
  do {
    const keys = scan.keysAfter(bulk.reducedTo, Math.min(GROUPS_PER_READ, limits.maxGroups - reduced));
    if (keys.length === 0) return true;
    reduceAndWrite(keys, scan.groupsOf(keys));
    bulk.reducedUpTo(keys.at(-1)!);
    reduced += keys.length;
  } while (reduced < limits.maxGroups && Date.now() < limits.until);
  // The chunk ended on a limit: whether groups are left is found by the next chunk (which may end the build at once).
  return false;
}
