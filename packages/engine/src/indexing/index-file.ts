import fs from 'node:fs';
import path from 'node:path';
import type { IndexDefinition } from '@rookery/protocol';
import BetterSqlite3 from 'better-sqlite3';
import { markerFileOf } from './writer-marker.js';

/**
 * One index = one SQLite file, `indexes/<name>.db`, written only by the
 * indexer and read by queries (WAL: readers never block the writer).
 *
 * - `entries`: one row per index entry (a document may produce several; a
 *   reduce index has one per group). `source` is the lower-cased document id,
 *   or `r:<group key>` for reduce results, whose JSON is in `stored`.
 * - `terms`: the inverted index, (field, value, entry) in one B-tree, so an
 *   equality, an `in`, a range or a prefix is a range scan that yields entries
 *   in value order — which is also how `order by` is served.
 * - `terms_by_entry`: the same rows by entry, to test one entry against a
 *   predicate (a seek) and to delete an entry's terms in one ordered pass.
 * - `term_counts`: entries per (field, value), updated once per batch: total
 *   counts of single-term queries and whole-dataset facets without counting.
 * - `fts`: full-text fields (FTS5, contentless, rowid = entry), created with
 *   the index because its columns are the definition's `Search` fields.
 * - `spatial`: points per entry, by latitude for bounding-box scans.
 * - `map_results`: for map/reduce, each document's map output by group key,
 *   so a changed document re-reduces only its groups.
 */
const SCHEMA = `
CREATE TABLE meta (key TEXT PRIMARY KEY, value ANY) STRICT, WITHOUT ROWID;
CREATE TABLE fields (id INTEGER PRIMARY KEY, name TEXT NOT NULL UNIQUE) STRICT;
CREATE TABLE entries (id INTEGER PRIMARY KEY, source TEXT NOT NULL, doc_id TEXT, stored TEXT) STRICT;
CREATE INDEX entries_by_source ON entries(source);
CREATE TABLE terms (
  field INTEGER NOT NULL, value ANY NOT NULL, entry INTEGER NOT NULL,
  PRIMARY KEY (field, value, entry)
) STRICT, WITHOUT ROWID;
CREATE INDEX terms_by_entry ON terms(entry, field, value);
CREATE TABLE term_counts (
  field INTEGER NOT NULL, value ANY NOT NULL, count INTEGER NOT NULL,
  PRIMARY KEY (field, value)
) STRICT, WITHOUT ROWID;
CREATE TABLE spatial (entry INTEGER NOT NULL, field INTEGER NOT NULL, lat REAL NOT NULL, lng REAL NOT NULL) STRICT;
CREATE INDEX spatial_by_entry ON spatial(entry);
CREATE INDEX spatial_by_lat ON spatial(field, lat);
CREATE TABLE map_results (source TEXT NOT NULL, reduce_key TEXT NOT NULL, value TEXT NOT NULL) STRICT;
CREATE INDEX map_results_by_source ON map_results(source);
CREATE INDEX map_results_by_key ON map_results(reduce_key);
CREATE TABLE errors (id INTEGER PRIMARY KEY, at INTEGER NOT NULL, document TEXT, error TEXT NOT NULL) STRICT;
`;

export const INDEXES_DIRECTORY = 'indexes';

/**
 * Inside the indexes directory: where a changed definition's index is built beside the one that keeps
 * answering until it has caught up (side by side, as RavenDB's `ReplacementOf` index), under the same
 * file name. Its name has no `.db` suffix, so nothing that lists index files mistakes it for one.
 */
export const REPLACING_DIRECTORY = '.replacing';

/** The file of the index that will replace `name` (database-indexer.ts), in `indexesDirectory`. */
export function replacementFileOf(indexesDirectory: string, name: string): string {
  return path.join(indexesDirectory, REPLACING_DIRECTORY, indexFileName(name));
}

/** Removes an index file with its sidecars (removeIndexSidecars). */
export function removeIndexFiles(file: string): void {
  removeIndexSidecars(file);
  fs.rmSync(file, { force: true });
}

/** An index file's WAL, shared memory, journal and writer marker: what must not outlive the file they belong to. */
export function removeIndexSidecars(file: string): void {
  for (const suffix of ['-wal', '-shm', '-journal']) fs.rmSync(file + suffix, { force: true });
  fs.rmSync(markerFileOf(file), { force: true });
}

/** Index names are case-insensitive; the file name is the encoded lower-case name. */
export function indexFileName(name: string): string {
  return `${encodeURIComponent(name.toLowerCase())}.db`;
}

export function indexNameFromFile(file: string): string | null {
  if (!file.endsWith('.db')) return null;
  try {
    return decodeURIComponent(file.slice(0, -3));
  } catch {
    return null;
  }
}

/** The FTS5 column name of a search field (FTS5 column names are case-insensitive identifiers). */
export function ftsColumnOf(searchFields: readonly string[], field: string): string | null {
  const i = searchFields.indexOf(field);
  return i < 0 ? null : `c${i}`;
}

export function searchFieldsOf(definition: IndexDefinition): string[] {
  return Object.entries(definition.Fields ?? {})
    .filter(([, options]) => options.Indexing === 'Search')
    .map(([name]) => name)
    .sort();
}

export function exactFieldsOf(definition: IndexDefinition): Set<string> {
  return new Set(
    Object.entries(definition.Fields ?? {})
      .filter(([, options]) => options.Indexing === 'Exact')
      .map(([name]) => name),
  );
}

export interface OpenIndexFileOptions {
  readonly?: boolean;
  /**
   * Writes without fsync (synchronous=OFF); only for a writer that holds a
   * writer marker (see writer-marker.ts), which makes a torn file detectable.
   */
  unsynced?: boolean;
}

/**
 * 16 KiB pages instead of SQLite's 4 KiB: an index's B-trees take rows in
 * runs, and with bigger pages a run splits fewer pages and the trees are
 * shallower. Writing 1M NuGet-like documents into a map index took about a
 * sixth less time (docs/benchmarks.md). It must be set before the first table.
 */
const PAGE_SIZE = 16_384;

/** A writer's page cache: it grows only as the index does, and a big build touches pages all over its B-trees. */
const WRITER_CACHE_KIB = 256 * 1024;
const READER_CACHE_KIB = 32 * 1024;

/** Creates the file with its schema and definition, or fails if it exists. */
export function createIndexFile(file: string, definition: IndexDefinition): BetterSqlite3.Database {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const db = new BetterSqlite3(file);
  try {
    db.pragma(`page_size = ${PAGE_SIZE}`);
    db.pragma('journal_mode = WAL');
    // An index is derived data: after a power loss it may lose its last batches
    // and re-index them from docs.db, but it is never torn (WAL commits are atomic).
    db.pragma('synchronous = NORMAL');
    const searchFields = searchFieldsOf(definition);
    db.transaction(() => {
      db.exec(SCHEMA);
      if (searchFields.length > 0) {
        const columns = searchFields.map((_, i) => `c${i}`).join(', ');
        db.exec(
          `CREATE VIRTUAL TABLE fts USING fts5(${columns}, content='', contentless_delete=1, ` +
            `tokenize='unicode61 remove_diacritics 2');
           CREATE VIRTUAL TABLE fts_vocab USING fts5vocab(fts, col);`,
        );
      }
      const setMeta = db.prepare('INSERT INTO meta (key, value) VALUES (?, ?)');
      setMeta.run('definition', JSON.stringify(definition));
      setMeta.run('last_etag', 0);
      setMeta.run('entries', 0);
      setMeta.run('created_at', Date.now());
    })();
    return db;
  } catch (error) {
    db.close();
    fs.rmSync(file, { force: true });
    throw error;
  }
}

export function openIndexFile(file: string, options: OpenIndexFileOptions = {}): BetterSqlite3.Database {
  const db = new BetterSqlite3(file, { readonly: options.readonly ?? false, fileMustExist: true });
  if (!options.readonly) db.pragma(options.unsynced ? 'synchronous = OFF' : 'synchronous = NORMAL');
  db.pragma(`cache_size = -${options.readonly ? READER_CACHE_KIB : WRITER_CACHE_KIB}`);
  return db;
}

export function readDefinition(db: BetterSqlite3.Database): IndexDefinition {
  const row = db.prepare("SELECT value FROM meta WHERE key = 'definition'").get() as { value: string };
  return JSON.parse(row.value) as IndexDefinition;
}

/** Field name ↔ id, shared by writer and readers. Ids never change once given. */
export class FieldRegistry {
  private readonly ids = new Map<string, number>();
  private readonly select: BetterSqlite3.Statement<[], { id: number; name: string }>;
  private readonly insert: BetterSqlite3.Statement<[string]> | null;

  constructor(db: BetterSqlite3.Database, writable: boolean) {
    this.select = db.prepare('SELECT id, name FROM fields');
    this.insert = writable ? db.prepare('INSERT INTO fields (name) VALUES (?)') : null;
    this.reload();
  }

  reload(): void {
    for (const row of this.select.all()) this.ids.set(row.name, row.id);
  }

  /** The field's id, or undefined if no entry ever had it (readers re-check the file once). */
  idOf(name: string): number | undefined {
    let id = this.ids.get(name);
    if (id === undefined) {
      this.reload();
      id = this.ids.get(name);
    }
    return id;
  }

  /** Writer only: the id, allocating one for a new field (inside the indexing transaction). */
  ensure(name: string): number {
    const known = this.ids.get(name);
    if (known !== undefined) return known;
    if (!this.insert) throw new Error('read-only field registry');
    const id = Number(this.insert.run(name).lastInsertRowid);
    this.ids.set(name, id);
    return id;
  }

  forget(): void {
    this.ids.clear();
  }
}
