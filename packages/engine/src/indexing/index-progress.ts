import type { IndexBuildProgress } from '@rookery/protocol';
import type BetterSqlite3 from 'better-sqlite3';
import { FLAG_ARCHIVED } from '../document-shape.js';

/**
 * Documents left to index are counted exactly up to this many. Counting
 * more would make a stats call as slow as a scan (a million documents took
 * 0.6–1 s warm and 7 s cold here), so past it the count is estimated.
 */
export const EXACT_PROGRESS_UP_TO = 10_000;

export interface ProgressOptions {
  includeArchived: boolean;
  /** Counted exactly up to this many documents left; more are estimated. */
  exactUpTo?: number;
}

/**
 * How far an index has got through its collections (all documents for
 * null), read from docs.db: the documents it covers, from the counters, and
 * how many of them were written after `afterEtag`, the index's last etag.
 * Used by index stats in both the tenant and the indexer process, each with
 * its own connection.
 */
export function indexProgressOf(
  docs: BetterSqlite3.Database,
  collections: readonly string[] | null,
  afterEtag: number,
  options: ProgressOptions,
): IndexBuildProgress {
  const cap = options.exactUpTo ?? EXACT_PROGRESS_UP_TO;
  const archivedTest = options.includeArchived ? '' : `AND (flags & ${FLAG_ARCHIVED}) = 0`;
  const counters = countersByCollection(docs);
  const wanted =
    collections === null
      ? [...counters.values()]
      : [...new Set(collections.map((c) => c.toLowerCase()))].flatMap((lower) => {
          const known = counters.get(lower);
          return known ? [known] : [];
        });
  let total = 0;
  let left = 0;
  let estimated = false;
  const leftOf = docs.prepare<[string, number, number], { n: number }>(
    `SELECT count(*) AS n FROM (SELECT 1 FROM docs WHERE collection = ? AND etag > ? ${archivedTest} LIMIT ?)`,
  );
  for (const collection of wanted) {
    const covered = collection.documents - (options.includeArchived ? 0 : collection.archived);
    total += covered;
    const exact = leftOf.get(collection.name, afterEtag, cap + 1)?.n ?? 0;
    if (exact <= cap) {
      left += exact;
      continue;
    }
    estimated = true;
    left += Math.max(cap + 1, estimateLeft(docs, collection.name, afterEtag, covered));
  }
  return { TotalDocuments: total, DocumentsToProcess: Math.min(left, total), IsEstimate: estimated };
}

interface CollectionCounters {
  /** The collection's stored spelling (docs.collection is case-sensitive, collection names are not). */
  name: string;
  documents: number;
  archived: number;
}

function countersByCollection(docs: BetterSqlite3.Database): Map<string, CollectionCounters> {
  const rows = docs
    .prepare<[], { key: string; value: number }>(
      "SELECT key, value FROM counters WHERE (key >= 'docs/' AND key < 'docs0') OR (key >= 'archived/' AND key < 'archived0')",
    )
    .all();
  const byLower = new Map<string, CollectionCounters>();
  const entryOf = (name: string) => {
    let entry = byLower.get(name.toLowerCase());
    if (!entry) {
      entry = { name, documents: 0, archived: 0 };
      byLower.set(name.toLowerCase(), entry);
    }
    return entry;
  };
  for (const { key, value } of rows) {
    if (key.startsWith('docs/')) {
      const entry = entryOf(key.slice('docs/'.length));
      entry.name = key.slice('docs/'.length);
      entry.documents = value;
    } else entryOf(key.slice('archived/'.length)).archived = value;
  }
  return byLower;
}

/**
 * The collection's documents after `afterEtag`, supposing they are spread
 * evenly over its etags: right for a collection written once in bulk (the
 * long builds this is for), rougher for one rewritten unevenly.
 */
function estimateLeft(
  docs: BetterSqlite3.Database,
  collection: string,
  afterEtag: number,
  covered: number,
): number {
  // One seek at each end of the collection's (collection, etag) entries: min() and max() in one query would scan.
  const edge = (order: 'ASC' | 'DESC') =>
    docs
      .prepare<[string], { etag: number }>(
        `SELECT etag FROM docs WHERE collection = ? ORDER BY etag ${order} LIMIT 1`,
      )
      .get(collection)?.etag ?? 0;
  const first = edge('ASC');
  const last = edge('DESC');
  if (last <= first) return covered;
  const share = (last - Math.max(afterEtag, first - 1)) / (last - first + 1);
  return Math.round(covered * Math.min(1, share));
}
