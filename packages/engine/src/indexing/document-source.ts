import type { IndexBuildProgress } from '@rookery/protocol';
import BetterSqlite3 from 'better-sqlite3';
import { documentOf, isArchived } from '../document-shape.js';
import { TXID_META_KEY } from '../write-transaction.js';
import { indexProgressOf, type ProgressOptions } from './index-progress.js';

export interface SourceDocument {
  etag: number;
  /** Lower-cased id: the key entries are tracked by. */
  key: string;
  id: string;
  collection: string;
  doc: Record<string, unknown>;
}

export interface SourceTombstone {
  etag: number;
  key: string;
  collection: string;
}

export interface SourceBatch {
  documents: SourceDocument[];
  /**
   * Documents whose entries must go: deleted ones, and, for an index that does not include
   * archived documents, archived ones (to such an index, archiving is a delete).
   */
  tombstones: SourceTombstone[];
  /** Everything up to this etag has been read: the index may record it once the batch is applied. */
  upToEtag: number;
}

interface DocRow {
  etag: number;
  id_lower: string;
  id: string;
  collection: string;
  last_modified: number;
  flags: number;
  metadata: string | null;
  body: string | Buffer;
}

/**
 * A read-only view of a database's docs.db for indexers: "documents and
 * tombstones after etag N", read in one WAL snapshot so a batch never mixes
 * two states of the database.
 */
export class DocumentSource {
  private readonly db: BetterSqlite3.Database;
  private readonly databaseId: string;
  private readonly lastDocEtag: BetterSqlite3.Statement<[], { etag: number | null }>;
  private readonly lastTombstoneEtag: BetterSqlite3.Statement<[], { etag: number | null }>;
  private readonly docsOfCollection: BetterSqlite3.Statement<[string, number, number], DocRow>;
  private readonly allDocs: BetterSqlite3.Statement<[number, number], DocRow>;
  private readonly tombstonesAfter: BetterSqlite3.Statement<
    [number, number],
    { etag: number; id_lower: string; collection: string }
  >;
  private readonly changedInCollection: BetterSqlite3.Statement<[{ c: string; e: number }], { one: number }>;
  private readonly collectionNames: BetterSqlite3.Statement<[], { key: string }>;
  private readonly dataVersionPragma: BetterSqlite3.Statement<[], number>;

  constructor(file: string) {
    this.db = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
    this.db.pragma('cache_size = -16384');
    const row = this.db.prepare("SELECT value FROM meta WHERE key = 'databaseId'").get() as
      | { value: string }
      | undefined;
    this.databaseId = row?.value ?? '';
    const columns = 'etag, id_lower, id, collection, last_modified, flags, metadata, body';
    this.dataVersionPragma = this.db.prepare<[], number>('PRAGMA data_version').pluck();
    this.lastDocEtag = this.db.prepare('SELECT max(etag) AS etag FROM docs');
    this.lastTombstoneEtag = this.db.prepare('SELECT max(etag) AS etag FROM tombstones');
    this.docsOfCollection = this.db.prepare(
      `SELECT ${columns} FROM docs WHERE collection = ? AND etag > ? ORDER BY etag LIMIT ?`,
    );
    this.allDocs = this.db.prepare(`SELECT ${columns} FROM docs WHERE etag > ? ORDER BY etag LIMIT ?`);
    this.tombstonesAfter = this.db.prepare(
      'SELECT etag, id_lower, collection FROM tombstones WHERE etag > ? ORDER BY etag LIMIT ?',
    );
    this.collectionNames = this.db.prepare("SELECT key FROM counters WHERE key >= 'docs/' AND key < 'docs0'");
    this.changedInCollection = this.db.prepare(
      `SELECT 1 AS one FROM docs WHERE collection = :c AND etag > :e
       UNION ALL SELECT 1 FROM tombstones WHERE collection = :c AND etag > :e LIMIT 1`,
    );
  }

  /**
   * Collection names are case-insensitive and stored in their first spelling;
   * the per-collection index of docs.db is case-sensitive, so index definitions'
   * names are mapped to the stored spelling (unknown ones stay as they are).
   */
  private storedSpellings(collections: readonly string[]): string[] {
    const stored = new Map<string, string>();
    for (const { key } of this.collectionNames.all()) stored.set(key.slice(5).toLowerCase(), key.slice(5));
    return collections.map((c) => stored.get(c.toLowerCase()) ?? c);
  }

  /**
   * docs.db's last transaction number now (0 before the first): read after an index copy is complete,
   * it is at or after every state a batch in the copy was read from (see mirror/index-snapshots.ts).
   */
  txid(): number {
    const row = this.db.prepare('SELECT value FROM meta WHERE key = ?').get(TXID_META_KEY) as
      | { value: string }
      | undefined;
    return Number(row?.value ?? 0);
  }

  /** Documents the database holds (archived ones too), from its counters: what decides where a new index is built. */
  documentCount(): number {
    const row = this.db
      .prepare("SELECT coalesce(sum(value), 0) AS n FROM counters WHERE key >= 'docs/' AND key < 'docs0'")
      .get() as { n: number };
    return Number(row.n);
  }

  /**
   * SQLite's `PRAGMA data_version` on this connection: it changes whenever another connection (the tenant)
   * committed to docs.db since the last call. One pragma, no page read: how an idle indexer tells "nothing
   * changed" without asking every index (database-indexer.ts, `isQuiet`).
   */
  dataVersion(): number {
    return Number(this.dataVersionPragma.get());
  }

  lastEtag(): number {
    return Math.max(this.lastDocEtag.get()?.etag ?? 0, this.lastTombstoneEtag.get()?.etag ?? 0);
  }

  /**
   * True if a document of one of `collections` (all if null) changed after `etag`:
   * the index is stale only then, not merely because another collection moved on.
   */
  hasChangesAfter(collections: readonly string[] | null, etag: number): boolean {
    if (collections === null) return this.lastEtag() > etag;
    return this.storedSpellings(collections).some(
      (c) => this.changedInCollection.get({ c, e: etag }) !== undefined,
    );
  }

  /** How many of `collections`' documents were written after `etag` (see index-progress.ts). */
  progressAfter(
    collections: readonly string[] | null,
    etag: number,
    options: ProgressOptions,
  ): IndexBuildProgress {
    return indexProgressOf(this.db, collections, etag, options);
  }

  /**
   * Up to about `limit` documents (and tombstones) of `collections` after
   * `afterEtag`. Each stream is read in etag order; the batch ends at the
   * smallest etag where a stream was cut, so nothing before `upToEtag` is
   * ever skipped. Archived documents come as documents when `includeArchived`,
   * else as tombstones (never decompressed nor parsed).
   */
  readBatch(
    collections: readonly string[] | null,
    afterEtag: number,
    limit: number,
    { includeArchived = false }: { includeArchived?: boolean } = {},
  ): SourceBatch {
    return this.db.transaction(() => {
      let upTo = this.lastEtag();
      const streams: DocRow[][] =
        collections === null
          ? [this.allDocs.all(afterEtag, limit)]
          : this.storedSpellings(collections).map((c) => this.docsOfCollection.all(c, afterEtag, limit));
      for (const rows of streams) {
        const last = rows.at(-1);
        if (rows.length === limit && last) upTo = Math.min(upTo, last.etag);
      }
      const tombstoneRows = this.tombstonesAfter.all(afterEtag, limit);
      const lastTombstone = tombstoneRows.at(-1);
      if (tombstoneRows.length === limit && lastTombstone) upTo = Math.min(upTo, lastTombstone.etag);

      const wanted = collections === null ? null : new Set(collections.map((c) => c.toLowerCase()));
      const documents: SourceDocument[] = [];
      const tombstones: SourceTombstone[] = [];
      for (const rows of streams) {
        for (const row of rows) {
          if (row.etag > upTo) break;
          if (!includeArchived && isArchived(row.flags)) {
            tombstones.push({ etag: row.etag, key: row.id_lower, collection: row.collection });
            continue;
          }
          documents.push({
            etag: row.etag,
            key: row.id_lower,
            id: row.id,
            collection: row.collection,
            doc: documentOf(row, this.databaseId),
          });
        }
      }
      documents.sort((a, b) => a.etag - b.etag);
      for (const row of tombstoneRows) {
        if (row.etag > upTo) break;
        if (wanted && !wanted.has(row.collection.toLowerCase())) continue;
        tombstones.push({ etag: row.etag, key: row.id_lower, collection: row.collection });
      }
      return { documents, tombstones, upToEtag: Math.max(upTo, afterEtag) };
    })();
  }

  close(): void {
    this.db.close();
  }
}
