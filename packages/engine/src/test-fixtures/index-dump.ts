// What an index answers queries from, as plain data to compare: a restored or adopted index must
// equal one built from zero (mirror/index-snapshots.test.ts, mirror/index-build.test.ts).
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { INDEXES_DIRECTORY, indexFileName } from '../indexing/index-file.js';

/** Everything an index answers queries from, independent of entry numbering: per source, its terms and stored value. */
export function dumpIndex(databaseDirectory: string, name: string): unknown {
  const sqlite = new BetterSqlite3(path.join(databaseDirectory, INDEXES_DIRECTORY, indexFileName(name)), {
    readonly: true,
    fileMustExist: true,
  });
  try {
    const rows = sqlite
      .prepare(
        `SELECT e.source, e.doc_id, e.stored, f.name AS field, t.value
         FROM entries e LEFT JOIN terms t ON t.entry = e.id LEFT JOIN fields f ON f.id = t.field`,
      )
      .all() as {
      source: string;
      doc_id: string | null;
      stored: string | null;
      field: string;
      value: unknown;
    }[];
    const entries = rows.map((r) => JSON.stringify([r.source, r.doc_id, r.stored, r.field, r.value])).sort();
    const counts = (
      sqlite
        .prepare(
          'SELECT f.name, c.value, c.count FROM term_counts c JOIN fields f ON f.id = c.field WHERE c.count > 0',
        )
        .all() as unknown[]
    )
      .map((r) => JSON.stringify(r))
      .sort();
    const meta = sqlite
      .prepare("SELECT value FROM meta WHERE key IN ('entries', 'last_etag') ORDER BY key")
      .all();
    return { entries, counts, meta };
  } finally {
    sqlite.close();
  }
}
