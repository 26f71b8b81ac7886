import type BetterSqlite3 from 'better-sqlite3';
import { FLAG_ARCHIVED } from '../document-shape.js';
import type { DocumentRow } from './statements.js';

/**
 * The statements NDJSON streams in id order read docs.db with (etag order is Database.documentsAfter's).
 * A stream reads keyset pages ("after this key, at most N"): each page is one short statement, because
 * better-sqlite3 cannot keep an iterator open on the connection across the awaits between pages (the
 * writer and every other request use that connection). Archived documents are left out, as collection
 * pages and automatic indexes leave them out.
 */
export interface StreamStatements {
  /** In id order (the id_lower index), from a key inclusive. */
  docsFromKey: BetterSqlite3.Statement<[string, number], DocumentRow>;
  /** In id order, after a key exclusive. */
  docsAfterKey: BetterSqlite3.Statement<[string, number], DocumentRow>;
}

export function prepareStreamStatements(db: BetterSqlite3.Database): StreamStatements {
  const columns = 'etag, id, collection, last_modified, flags, metadata, body';
  const notArchived = `flags & ${FLAG_ARCHIVED} = 0`;
  return {
    docsFromKey: db.prepare(
      `SELECT ${columns} FROM docs WHERE id_lower >= ? AND ${notArchived} ORDER BY id_lower LIMIT ?`,
    ),
    docsAfterKey: db.prepare(
      `SELECT ${columns} FROM docs WHERE id_lower > ? AND ${notArchived} ORDER BY id_lower LIMIT ?`,
    ),
  };
}
