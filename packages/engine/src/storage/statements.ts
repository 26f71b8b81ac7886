import type BetterSqlite3 from 'better-sqlite3';
import { FLAG_ARCHIVED } from '../document-shape.js';
import { ChangeRecorder } from './change-recorder.js';

export interface DocumentRow {
  etag: number;
  id: string;
  collection: string;
  last_modified: number;
  flags: number;
  metadata: string | null;
  body: string | Buffer;
}

/** A subscription as stored (see SCHEMA_V3 and SCHEMA_V4). */
export interface SubscriptionRow {
  name: string;
  query: string;
  /** JSON of its QueryParameters; null when it has none. */
  parameters: string | null;
  last_etag: number;
  created_at: number;
  last_ack_at: number | null;
}

export interface ChangeRow {
  etag: number;
  id: string;
  collection: string;
  deleted: 0 | 1;
}

/** etag, id_lower, id, collection, last_modified, flags, expires_at, archive_at, metadata, body */
export type DocumentInsert = [
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
];

/** A prepared statement with its parameter and row types. */
type Stmt<P extends unknown[] = unknown[], R = unknown> = BetterSqlite3.Statement<P, R>;
export type Head = { etag: number; id: string; collection: string; flags: number };

/** A statement that writes docs.db: it can only be run, and every run is recorded for the mirror. */
export interface WriteStmt<P extends unknown[]> {
  run(...params: P): BetterSqlite3.RunResult;
}

/**
 * Every statement that writes docs.db, with its op code in the mirror's commit log. A restore
 * replays a transaction by running the same SQL with the same parameters, so codes are stable:
 * never renumbered or reused, and a statement whose meaning changes gets a new code.
 */
export const WRITE_OPS = {
  /** etag, id_lower, id, collection, last_modified, flags, expires_at, archive_at, metadata, body */
  insertDocument: {
    code: 1,
    params: 10,
    sql: `INSERT INTO docs (etag, id_lower, id, collection, last_modified, flags, expires_at, archive_at, metadata, body)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)`,
  },
  /** etag, last_modified, flags, expires_at, archive_at, metadata, body, old etag */
  updateDocument: {
    code: 2,
    params: 8,
    sql: `UPDATE docs SET etag = ?, last_modified = ?, flags = ?, expires_at = ?, archive_at = ?, metadata = ?, body = ?
       WHERE etag = ?`,
  },
  deleteDocument: { code: 3, params: 1, sql: 'DELETE FROM docs WHERE etag = ?' },
  insertTombstone: {
    code: 4,
    params: 5,
    sql: `INSERT INTO tombstones (etag, id_lower, id, collection, deleted_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (id_lower) DO UPDATE SET etag = excluded.etag, id = excluded.id,
         collection = excluded.collection, deleted_at = excluded.deleted_at`,
  },
  deleteTombstone: { code: 5, params: 1, sql: 'DELETE FROM tombstones WHERE id_lower = ?' },
  addCounter: {
    code: 6,
    params: 2,
    sql: 'INSERT INTO counters (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = value + excluded.value',
  },
  setSequence: {
    code: 7,
    params: 3,
    sql: 'INSERT INTO sequences (kind, tag, value) VALUES (?, ?, ?) ON CONFLICT (kind, tag) DO UPDATE SET value = excluded.value',
  },
  setMeta: {
    code: 8,
    params: 2,
    sql: 'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
  },
  /** name_lower, definition JSON */
  putIndexDefinition: {
    code: 9,
    params: 2,
    sql: `INSERT INTO index_definitions (name_lower, definition) VALUES (?, ?)
       ON CONFLICT (name_lower) DO UPDATE SET definition = excluded.definition`,
  },
  deleteIndexDefinition: { code: 10, params: 1, sql: 'DELETE FROM index_definitions WHERE name_lower = ?' },
  /**
   * Schema 3's insertSubscription, before subscriptions had parameters: no longer written, kept so that a
   * restore can still replay a mirror chain schema 3 wrote.
   */
  insertSubscriptionV3: {
    code: 11,
    params: 5,
    sql: `INSERT INTO subscriptions (name_lower, name, query, last_etag, created_at, last_ack_at)
       VALUES (?, ?, ?, ?, ?, NULL)`,
  },
  /**
   * etag, acknowledged at (null: progress over documents that matched nothing, not an acknowledgment), name_lower.
   * Progress never moves back: an acknowledgment that arrives late (from a consumer taken over) cannot undo a newer one.
   */
  setSubscriptionProgress: {
    code: 12,
    params: 3,
    sql: `UPDATE subscriptions SET last_etag = max(last_etag, ?), last_ack_at = coalesce(?, last_ack_at)
       WHERE name_lower = ?`,
  },
  deleteSubscription: { code: 13, params: 1, sql: 'DELETE FROM subscriptions WHERE name_lower = ?' },
  /** name_lower, name, query, parameters JSON (null: none), last_etag, created_at */
  insertSubscription: {
    code: 14,
    params: 6,
    sql: `INSERT INTO subscriptions (name_lower, name, query, parameters, last_etag, created_at, last_ack_at)
       VALUES (?, ?, ?, ?, ?, ?, NULL)`,
  },
  /**
   * insertDocument's parameters; does nothing when the id exists. Bulk insert tries this first: a new
   * document then costs one descent of the id index instead of a lookup and then the insert's own check.
   */
  insertDocumentIfNew: {
    code: 15,
    params: 10,
    sql: `INSERT INTO docs (etag, id_lower, id, collection, last_modified, flags, expires_at, archive_at, metadata, body)
       VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?) ON CONFLICT (id_lower) DO NOTHING`,
  },
} as const satisfies Record<string, { code: number; params: number; sql: string }>;

export type WriteOpName = keyof typeof WRITE_OPS;

/** Every statement docs.db needs, prepared once per open database. */
export interface Statements {
  /** What the current write transaction wrote, for the mirror. */
  recorder: ChangeRecorder;
  begin: Stmt<[]>;
  commit: Stmt<[]>;
  rollback: Stmt<[]>;
  savepoint: Stmt<[]>;
  release: Stmt<[]>;
  rollbackToSavepoint: Stmt<[]>;
  documentByKey: Stmt<[string], DocumentRow>;
  headByKey: Stmt<[string], Head>;
  etagByKey: Stmt<[string], { etag: number }>;
  insertDocument: WriteStmt<DocumentInsert>;
  insertDocumentIfNew: WriteStmt<DocumentInsert>;
  updateDocument: WriteStmt<
    [number, number, number, number | null, number | null, string | null, string | Buffer, number]
  >;
  deleteDocument: WriteStmt<[number]>;
  insertTombstone: WriteStmt<[number, string, string, string, number]>;
  deleteTombstone: WriteStmt<[string]>;
  addCounter: WriteStmt<[string, number]>;
  allCounters: Stmt<[], { key: string; value: number }>;
  sequence: Stmt<[string, string], { value: number }>;
  setSequence: WriteStmt<[string, string, number]>;
  lastEtag: Stmt<[], { etag: number }>;
  getMeta: Stmt<[string], { value: string }>;
  setMeta: WriteStmt<[string, string]>;
  putIndexDefinition: WriteStmt<[string, string]>;
  deleteIndexDefinition: WriteStmt<[string]>;
  indexDefinitions: Stmt<[], { definition: string }>;
  insertSubscription: WriteStmt<[string, string, string, string | null, number, number]>;
  setSubscriptionProgress: WriteStmt<[number, number | null, string]>;
  deleteSubscription: WriteStmt<[string]>;
  subscriptionByName: Stmt<[string], SubscriptionRow>;
  allSubscriptions: Stmt<[], SubscriptionRow>;
  changesAfter: Stmt<[{ after: number; limit: number }], ChangeRow>;
  /** Ids of documents whose `@expires` is at or before a time, soonest first, at most a limit. */
  dueToExpire: Stmt<[number, number], { id: string }>;
  /** Ids of documents whose `@archive-at` is at or before a time (never archived ones: archiving clears it). */
  dueToArchive: Stmt<[number, number], { id: string }>;
  anyDue: Stmt<[{ due: number }], { one: number }>;
}

const SUBSCRIPTION_COLUMNS = 'name, query, parameters, last_etag, created_at, last_ack_at';

export function prepareStatements(db: BetterSqlite3.Database): Statements {
  const prepare = <P extends unknown[] = unknown[], R = unknown>(sql: string): Stmt<P, R> =>
    db.prepare<P, R>(sql);
  const recorder = new ChangeRecorder();
  // Runs the statement and records it; the rest-parameter array is recorded as it is (no copy).
  const recorded = <P extends unknown[]>(name: WriteOpName): WriteStmt<P> => {
    const { code, sql } = WRITE_OPS[name];
    const statement = db.prepare<unknown[]>(sql);
    return {
      run: (...params: P) => {
        const result = statement.run(...params);
        // Recorded once it succeeded: a unit that catches a failed statement and goes on must not replay it.
        recorder.record(code, params);
        return result;
      },
    };
  };
  return {
    recorder,
    begin: prepare('BEGIN IMMEDIATE'),
    commit: prepare('COMMIT'),
    rollback: prepare('ROLLBACK'),
    savepoint: prepare('SAVEPOINT work'),
    release: prepare('RELEASE work'),
    rollbackToSavepoint: prepare('ROLLBACK TO work'),

    documentByKey: prepare<[string], DocumentRow>(
      'SELECT etag, id, collection, last_modified, flags, metadata, body FROM docs WHERE id_lower = ?',
    ),
    headByKey: prepare<[string], Head>('SELECT etag, id, collection, flags FROM docs WHERE id_lower = ?'),
    etagByKey: prepare<[string], { etag: number }>('SELECT etag FROM docs WHERE id_lower = ?'),
    insertDocument: recorded('insertDocument'),
    insertDocumentIfNew: recorded('insertDocumentIfNew'),
    updateDocument: recorded('updateDocument'),
    deleteDocument: recorded('deleteDocument'),
    insertTombstone: recorded('insertTombstone'),
    deleteTombstone: recorded('deleteTombstone'),

    addCounter: recorded('addCounter'),
    allCounters: prepare<[], { key: string; value: number }>('SELECT key, value FROM counters'),
    sequence: prepare<[string, string], { value: number }>(
      'SELECT value FROM sequences WHERE kind = ? AND tag = ?',
    ),
    setSequence: recorded('setSequence'),
    lastEtag: prepare<[], { etag: number }>(
      'SELECT max(coalesce((SELECT max(etag) FROM docs), 0), coalesce((SELECT max(etag) FROM tombstones), 0)) AS etag',
    ),
    getMeta: prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?'),
    setMeta: recorded('setMeta'),
    putIndexDefinition: recorded('putIndexDefinition'),
    deleteIndexDefinition: recorded('deleteIndexDefinition'),
    indexDefinitions: prepare<[], { definition: string }>(
      'SELECT definition FROM index_definitions ORDER BY name_lower',
    ),
    insertSubscription: recorded('insertSubscription'),
    setSubscriptionProgress: recorded('setSubscriptionProgress'),
    deleteSubscription: recorded('deleteSubscription'),
    subscriptionByName: prepare<[string], SubscriptionRow>(
      `SELECT ${SUBSCRIPTION_COLUMNS} FROM subscriptions WHERE name_lower = ?`,
    ),
    allSubscriptions: prepare<[], SubscriptionRow>(
      `SELECT ${SUBSCRIPTION_COLUMNS} FROM subscriptions ORDER BY name_lower`,
    ),
    changesAfter: prepare<[{ after: number; limit: number }], ChangeRow>(
      `SELECT etag, id, collection, 0 AS deleted FROM docs WHERE etag > @after
       UNION ALL
       SELECT etag, id, collection, 1 AS deleted FROM tombstones WHERE etag > @after
       ORDER BY etag LIMIT @limit`,
    ),
    // Both read the partial indexes docs_by_expiry / docs_by_archive_at (a comparison implies NOT NULL).
    dueToExpire: prepare<[number, number], { id: string }>(
      'SELECT id FROM docs WHERE expires_at <= ? ORDER BY expires_at LIMIT ?',
    ),
    dueToArchive: prepare<[number, number], { id: string }>(
      'SELECT id FROM docs WHERE archive_at <= ? ORDER BY archive_at LIMIT ?',
    ),
    anyDue: prepare<[{ due: number }], { one: number }>(
      `SELECT 1 AS one WHERE EXISTS (SELECT 1 FROM docs WHERE expires_at <= :due)
         OR EXISTS (SELECT 1 FROM docs WHERE archive_at <= :due)`,
    ),
  };
}

/** Statements of the query paths (collection pages, staleness), prepared on first use. */
export interface ReadStatements {
  /** Documents that are not archived, in etag order: collection queries leave archived ones out. */
  allDocs: Stmt<[number, number], DocumentRow>;
  collectionDocs: Stmt<[string, number, number], DocumentRow>;
  changedInCollection: Stmt<[{ c: string; e: number }], { one: number }>;
  /** Documents that are not archived with an etag above a value, in etag order (what subscriptions read). */
  allDocsAfter: Stmt<[number, number], DocumentRow>;
  collectionDocsAfter: Stmt<[string, number, number], DocumentRow>;
}

export function prepareReadStatements(db: BetterSqlite3.Database): ReadStatements {
  const columns = 'etag, id, collection, last_modified, flags, metadata, body';
  const notArchived = `flags & ${FLAG_ARCHIVED} = 0`;
  return {
    allDocs: db.prepare<[number, number], DocumentRow>(
      `SELECT ${columns} FROM docs WHERE ${notArchived} ORDER BY etag LIMIT ? OFFSET ?`,
    ),
    collectionDocs: db.prepare<[string, number, number], DocumentRow>(
      `SELECT ${columns} FROM docs WHERE collection = ? AND ${notArchived} ORDER BY etag LIMIT ? OFFSET ?`,
    ),
    allDocsAfter: db.prepare<[number, number], DocumentRow>(
      `SELECT ${columns} FROM docs WHERE etag > ? AND ${notArchived} ORDER BY etag LIMIT ?`,
    ),
    collectionDocsAfter: db.prepare<[string, number, number], DocumentRow>(
      `SELECT ${columns} FROM docs WHERE collection = ? AND etag > ? AND ${notArchived} ORDER BY etag LIMIT ?`,
    ),
    changedInCollection: db.prepare<[{ c: string; e: number }], { one: number }>(
      `SELECT 1 AS one FROM docs WHERE collection = :c AND etag > :e
       UNION ALL SELECT 1 FROM tombstones WHERE collection = :c AND etag > :e LIMIT 1`,
    ),
  };
}
