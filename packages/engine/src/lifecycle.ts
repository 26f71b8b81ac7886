import type { SweepResult } from '@rookery/protocol';
import type { Statements } from './storage/statements.js';
import type { WriteTransaction } from './write-transaction.js';

/**
 * One batch of the archival and expiration sweep, run as one unit of work of the database's
 * single writer (so it merges with client writes, and the mirror records it like any write).
 *
 * Expiration goes first and takes from the same budget: a document that is due for both is
 * deleted, never compressed just before. Expired documents leave tombstones (so indexers,
 * the changes feed and replicas of the data see the delete); archived ones get a new etag (so
 * indexers that exclude archived documents drop their entries). `More` is read inside the same
 * transaction, so a caller looping while it is true stops exactly when nothing due is left.
 */
export function sweepDue(tx: WriteTransaction, s: Statements, dueBy: number, limit: number): SweepResult {
  const expired = s.dueToExpire.all(dueBy, limit);
  for (const { id } of expired) tx.delete(id, undefined);
  const archived = limit > expired.length ? s.dueToArchive.all(dueBy, limit - expired.length) : [];
  for (const { id } of archived) tx.archive(id);
  return {
    Archived: archived.length,
    Expired: expired.length,
    More: s.anyDue.get({ due: dueBy }) !== undefined,
  };
}
