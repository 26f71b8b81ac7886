import type BetterSqlite3 from 'better-sqlite3';

/**
 * docs.db layout.
 *
 * `docs` is keyed by etag (the rowid), so the table is stored in write order:
 * appends land at the right edge of the B-tree, and "everything after etag N"
 * (indexers, changes, the mirror) is a range scan. An update gives the row a
 * new etag, which moves it to the end. Lookups by id go through `id_lower`.
 * The change vector is derived from the etag and the database id, so it is not
 * stored. The body column comes last so that reading the other columns never
 * touches the body's overflow pages (the 304 path reads only the etag).
 */
const SCHEMA_V1 = `
CREATE TABLE docs (
  etag          INTEGER PRIMARY KEY,
  id_lower      TEXT NOT NULL UNIQUE,
  id            TEXT NOT NULL,
  collection    TEXT NOT NULL,
  last_modified INTEGER NOT NULL,
  flags         INTEGER NOT NULL,
  expires_at    INTEGER,
  archive_at    INTEGER,
  metadata      TEXT,
  body          ANY NOT NULL
) STRICT;
CREATE INDEX docs_by_collection ON docs(collection, etag);
CREATE INDEX docs_by_expiry ON docs(expires_at) WHERE expires_at IS NOT NULL;
CREATE INDEX docs_by_archive_at ON docs(archive_at) WHERE archive_at IS NOT NULL;

CREATE TABLE tombstones (
  etag       INTEGER PRIMARY KEY,
  id_lower   TEXT NOT NULL UNIQUE,
  id         TEXT NOT NULL,
  collection TEXT NOT NULL,
  deleted_at INTEGER NOT NULL
) STRICT;

-- Document and tombstone counts, updated once per transaction.
CREATE TABLE counters (
  key   TEXT PRIMARY KEY,
  value INTEGER NOT NULL
) STRICT, WITHOUT ROWID;

-- HiLo ranges (kind 'hilo') and identities (kind 'identity') per tag.
CREATE TABLE sequences (
  kind  TEXT NOT NULL,
  tag   TEXT NOT NULL,
  value INTEGER NOT NULL,
  PRIMARY KEY (kind, tag)
) STRICT, WITHOUT ROWID;

CREATE TABLE meta (
  key   TEXT PRIMARY KEY,
  value TEXT NOT NULL
) STRICT, WITHOUT ROWID;
`;

/**
 * Index definitions live in docs.db too (the index files are derived data, rebuilt from these), so
 * that everything a restore from the mirror needs is in the one file the mirror ships.
 */
const SCHEMA_V2 = `
CREATE TABLE index_definitions (
  name_lower TEXT PRIMARY KEY,
  definition TEXT NOT NULL
) STRICT, WITHOUT ROWID;
`;

/**
 * Subscriptions and their progress live in docs.db as well: progress is written through the merger like
 * any other write, so it is durable, ordered with the documents it acknowledges, and shipped to the mirror.
 * `last_etag` is the etag up to which the consumer has acknowledged (or the server has scanned past without
 * a match); `last_ack_at` is null until the first acknowledgment.
 */
const SCHEMA_V3 = `
CREATE TABLE subscriptions (
  name_lower  TEXT PRIMARY KEY,
  name        TEXT NOT NULL,
  query       TEXT NOT NULL,
  last_etag   INTEGER NOT NULL,
  created_at  INTEGER NOT NULL,
  last_ack_at INTEGER
) STRICT, WITHOUT ROWID;
`;

/**
 * A subscription's `$parameters` (JSON of its QueryParameters; null when it has none). A column added to the
 * table rather than a change to SCHEMA_V3, so that a file schema 3 already wrote is upgraded in place: its
 * subscriptions get null (no parameters), which is what they had.
 */
const SCHEMA_V4 = `
ALTER TABLE subscriptions ADD COLUMN parameters TEXT;
`;

const MIGRATIONS: readonly string[] = [SCHEMA_V1, SCHEMA_V2, SCHEMA_V3, SCHEMA_V4];

/** The schema version this build writes; the mirror's records carry it so a replay never mixes versions. */
export const SCHEMA_VERSION = MIGRATIONS.length;

export type SynchronousMode = 'full' | 'normal' | 'off';

export interface StorageOptions {
  /** `full` (default) fsyncs the WAL at every commit: an acknowledged write survives power loss. */
  synchronous: SynchronousMode;
}

/**
 * Applies pragmas and brings the schema to the latest version, in one transaction. Returns the
 * version the file had (0 for a new file), so the mirror can tell that the file changed under it.
 */
export function prepareStorage(db: BetterSqlite3.Database, options: StorageOptions): number {
  db.pragma('journal_mode = WAL');
  db.pragma(`synchronous = ${options.synchronous.toUpperCase()}`);
  db.pragma('foreign_keys = OFF');
  db.pragma('temp_store = MEMORY');
  db.pragma('cache_size = -65536'); // 64 MiB page cache
  db.pragma('busy_timeout = 5000');
  // Checkpoint every ~40 MB of WAL instead of every 4 MB: a checkpoint runs inside a commit and fsyncs the
  // database file, so fewer, bigger ones keep commits short (measured +20% on 1 KB inserts, see README).
  db.pragma('wal_autocheckpoint = 10000');
  const current = db.pragma('user_version', { simple: true }) as number;
  if (current > MIGRATIONS.length) {
    throw new Error(
      `docs.db has schema version ${current} but this build knows only ${MIGRATIONS.length}; upgrade Rookery`,
    );
  }
  if (current === MIGRATIONS.length) return current;
  db.transaction(() => {
    for (let v = current; v < MIGRATIONS.length; v++) db.exec(MIGRATIONS[v]!);
    db.pragma(`user_version = ${MIGRATIONS.length}`);
  }).immediate();
  return current;
}
