import type BetterSqlite3 from 'better-sqlite3';

export interface DocumentRow {
  etag: number;
  id: string;
  collection: string;
  last_modified: number;
  flags: number;
  metadata: string | null;
  body: string | Buffer;
}

export interface ChangeRow {
  etag: number;
  id: string;
  collection: string;
  deleted: 0 | 1;
}

/** A prepared statement with its parameter and row types. */
type Stmt<P extends unknown[] = unknown[], R = unknown> = BetterSqlite3.Statement<P, R>;
type Head = { etag: number; id: string; collection: string };

/** Every statement docs.db needs, prepared once per open database. */
export interface Statements {
  begin: Stmt<[]>;
  commit: Stmt<[]>;
  rollback: Stmt<[]>;
  savepoint: Stmt<[]>;
  release: Stmt<[]>;
  rollbackToSavepoint: Stmt<[]>;
  documentByKey: Stmt<[string], DocumentRow>;
  headByKey: Stmt<[string], Head>;
  etagByKey: Stmt<[string], { etag: number }>;
  /** etag, id_lower, id, collection, last_modified, flags, expires_at, archive_at, metadata, body */
  insertDocument: Stmt<
    [
      number,
      string,
      string,
      string,
      number,
      number,
      number | null,
      number | null,
      string | null,
      string | Buffer,
    ]
  >;
  /** etag, last_modified, flags, expires_at, archive_at, metadata, body, old etag */
  updateDocument: Stmt<
    [number, number, number, number | null, number | null, string | null, string | Buffer, number]
  >;
  deleteDocument: Stmt<[number]>;
  insertTombstone: Stmt<[number, string, string, string, number]>;
  deleteTombstone: Stmt<[string]>;
  addCounter: Stmt<[string, number]>;
  allCounters: Stmt<[], { key: string; value: number }>;
  sequence: Stmt<[string, string], { value: number }>;
  setSequence: Stmt<[string, string, number]>;
  lastEtag: Stmt<[], { etag: number }>;
  getMeta: Stmt<[string], { value: string }>;
  setMeta: Stmt<[string, string]>;
  changesAfter: Stmt<[{ after: number; limit: number }], ChangeRow>;
}

export function prepareStatements(db: BetterSqlite3.Database): Statements {
  const prepare = <P extends unknown[] = unknown[], R = unknown>(sql: string): Stmt<P, R> =>
    db.prepare<P, R>(sql);
  return {
    begin: prepare('BEGIN IMMEDIATE'),
    commit: prepare('COMMIT'),
    rollback: prepare('ROLLBACK'),
    savepoint: prepare('SAVEPOINT work'),
    release: prepare('RELEASE work'),
    rollbackToSavepoint: prepare('ROLLBACK TO work'),

    documentByKey: prepare<[string], DocumentRow>(
      'SELECT etag, id, collection, last_modified, flags, metadata, body FROM docs WHERE id_lower = ?',
    ),
    headByKey: prepare<[string], { etag: number; id: string; collection: string }>(
      'SELECT etag, id, collection FROM docs WHERE id_lower = ?',
    ),
    etagByKey: prepare<[string], { etag: number }>('SELECT etag FROM docs WHERE id_lower = ?'),
    insertDocument: prepare(
      `INSERT INTO docs (etag, id_lower, id, collection, last_modified, flags, expires_at, archive_at, metadata, body)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
    ),
    updateDocument: prepare(
      `UPDATE docs SET etag = ?, last_modified = ?, flags = ?, expires_at = ?, archive_at = ?, metadata = ?, body = ?
       WHERE etag = ?`,
    ),
    deleteDocument: prepare('DELETE FROM docs WHERE etag = ?'),
    insertTombstone: prepare(
      `INSERT INTO tombstones (etag, id_lower, id, collection, deleted_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (id_lower) DO UPDATE SET etag = excluded.etag, id = excluded.id,
         collection = excluded.collection, deleted_at = excluded.deleted_at`,
    ),
    deleteTombstone: prepare('DELETE FROM tombstones WHERE id_lower = ?'),

    addCounter: prepare(
      'INSERT INTO counters (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = value + excluded.value',
    ),
    allCounters: prepare<[], { key: string; value: number }>('SELECT key, value FROM counters'),
    sequence: prepare<[string, string], { value: number }>(
      'SELECT value FROM sequences WHERE kind = ? AND tag = ?',
    ),
    setSequence: prepare(
      'INSERT INTO sequences (kind, tag, value) VALUES (?, ?, ?) ON CONFLICT (kind, tag) DO UPDATE SET value = excluded.value',
    ),
    lastEtag: prepare<[], { etag: number }>(
      'SELECT max(coalesce((SELECT max(etag) FROM docs), 0), coalesce((SELECT max(etag) FROM tombstones), 0)) AS etag',
    ),
    getMeta: prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?'),
    setMeta: prepare(
      'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
    ),
    changesAfter: prepare<[{ after: number; limit: number }], ChangeRow>(
      `SELECT etag, id, collection, 0 AS deleted FROM docs WHERE etag > @after
       UNION ALL
       SELECT etag, id, collection, 1 AS deleted FROM tombstones WHERE etag > @after
       ORDER BY etag LIMIT @limit`,
    ),
  };
}

/** Statements of the query paths (collection pages, staleness), prepared on first use. */
export interface ReadStatements {
  allDocs: Stmt<[number, number], DocumentRow>;
  collectionDocs: Stmt<[string, number, number], DocumentRow>;
  changedInCollection: Stmt<[{ c: string; e: number }], { one: number }>;
}

export function prepareReadStatements(db: BetterSqlite3.Database): ReadStatements {
  const columns = 'etag, id, collection, last_modified, flags, metadata, body';
  return {
    allDocs: db.prepare<[number, number], DocumentRow>(
      `SELECT ${columns} FROM docs ORDER BY etag LIMIT ? OFFSET ?`,
    ),
    collectionDocs: db.prepare<[string, number, number], DocumentRow>(
      `SELECT ${columns} FROM docs WHERE collection = ? ORDER BY etag LIMIT ? OFFSET ?`,
    ),
    changedInCollection: db.prepare<[{ c: string; e: number }], { one: number }>(
      `SELECT 1 AS one FROM docs WHERE collection = :c AND etag > :e
       UNION ALL SELECT 1 FROM tombstones WHERE collection = :c AND etag > :e LIMIT 1`,
    ),
  };
}
