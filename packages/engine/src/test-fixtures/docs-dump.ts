import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';

/** Everything docs.db stores, table by table, rows in key order: two dumps are equal iff the files hold the same data. */
export type Dump = Record<string, unknown[]>;

const TABLES: Record<string, string> = {
  docs: 'etag',
  tombstones: 'etag',
  counters: 'key',
  sequences: 'kind, tag',
  meta: 'key',
  index_definitions: 'name_lower',
  subscriptions: 'name_lower',
};

/** Reads a database directory's docs.db on a read-only connection (the owner may keep it open). */
export function dumpDatabase(directory: string): Dump {
  const sqlite = new BetterSqlite3(path.join(directory, 'docs.db'), { readonly: true, fileMustExist: true });
  try {
    const tables = (
      sqlite.prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name").all() as {
        name: string;
      }[]
    ).map((t) => t.name);
    // A table this list does not know would escape the comparison: a new table must be added here.
    const unknown = tables.filter((t) => !(t in TABLES));
    if (unknown.length > 0) throw new Error(`dumpDatabase does not know the tables ${unknown.join(', ')}`);
    const dump: Dump = {};
    for (const [table, order] of Object.entries(TABLES)) {
      dump[table] = (
        sqlite.prepare(`SELECT * FROM ${table} ORDER BY ${order}`).all() as Record<string, unknown>[]
      ).map((row) =>
        Object.fromEntries(
          Object.entries(row).map(([k, v]) => [k, Buffer.isBuffer(v) ? `blob:${v.toString('hex')}` : v]),
        ),
      );
    }
    return dump;
  } finally {
    sqlite.close();
  }
}
