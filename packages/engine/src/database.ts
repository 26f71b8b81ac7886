import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import {
  type BulkInsertLine,
  type Command,
  type CommandResult,
  type DatabaseStats,
  DEFAULT_SWEEP_LIMIT,
  type HiLoResponse,
  type IndexBuildProgress,
  type IndexDefinition,
  IndexDefinitionSchema,
  MAX_SWEEP_LIMIT,
  type PreparedChunk,
  preparedAt,
  type SweepResult,
} from '@rookery/protocol';
import BetterSqlite3 from 'better-sqlite3';
import { changeVectorOf, documentJsonOf } from './document-shape.js';
import { idKey, NODE_TAG } from './ids.js';
import { indexProgressOf, type ProgressOptions } from './indexing/index-progress.js';
import { sweepDue } from './lifecycle.js';
import { TransactionMerger } from './merger.js';
import type { MirrorLogger, MirrorOptions } from './mirror/options.js';
import { MirrorShipper } from './mirror/shipper.js';
import { humaneBytes } from './stats-reader.js';
import type { RecordedOps } from './storage/change-recorder.js';
import { prepareStorage, SCHEMA_VERSION, type SynchronousMode } from './storage/schema.js';
import {
  type ChangeRow,
  type DocumentRow,
  prepareReadStatements,
  prepareStatements,
  type ReadStatements,
  type Statements,
} from './storage/statements.js';
import { prepareStreamStatements, type StreamStatements } from './storage/stream-statements.js';
import { compileSubscriptionQuery } from './subscriptions/query.js';
import {
  type NewSubscription,
  type SubscriptionRecord,
  subscriptionRecordOf,
} from './subscriptions/record.js';
import {
  archivedCounter,
  type DatabaseState,
  type DocumentChange,
  TXID_META_KEY,
  WriteTransaction,
} from './write-transaction.js';

export interface DatabaseOptions {
  /** fsync policy of docs.db; `full` (default) makes every acknowledged write durable. */
  synchronous?: SynchronousMode;
  /** Bodies at least this long (in characters of JSON) are stored compressed. Default 4096. */
  compressionThresholdBytes?: number;
  /** Merge concurrent write batches into one transaction (default true). False is the benchmark baseline. */
  mergeTransactions?: boolean;
  /** Most documents one merged transaction takes. Default 20,000. */
  maxDocumentsPerTransaction?: number;
  /** Source of "now" in ms; tests pass a fake clock. */
  clock?: () => number;
  /**
   * Runs after every commit that wrote something, with the transaction's number and recorded
   * operations (the seam the mirror ships from; benchmarks attach prototypes here). A returned
   * promise holds the transaction's acknowledgment until it resolves.
   */
  commitHook?: CommitHook;
  /** Ships every committed transaction to a mirror directory (see docs/mirror.md). Absent: not mirrored. */
  mirror?: MirrorOptions;
  /** Where the mirror reports what it does (a pino logger fits). */
  logger?: MirrorLogger;
  /**
   * Whether this process may still write and acknowledge writes (the tenant's lease deadline): an
   * error refuses a write before it commits, and a committed one before it is acknowledged (see
   * MergerOptions.fence). A mirror fenced by a newer owner refuses them the same way.
   */
  writeFence?: () => Error | null;
}

/** A committed transaction as the mirror sees it. */
export interface CommittedTransaction {
  txid: number;
  /** When the transaction ran (ms): the documents' `@last-modified`, and what point-in-time restores go by. */
  committedAt: number;
  schema: number;
  ops: RecordedOps;
}

export type CommitHook = (committed: CommittedTransaction) => Promise<void> | undefined;

/** A document read from docs.db. `json` is the full document text, `@metadata` included. */
export interface LoadedDocument {
  id: string;
  collection: string;
  etag: number;
  changeVector: string;
  json: string;
}

/** One entry of "everything after etag N": a document that is there now, or a tombstone. */
export interface ChangeEntry {
  etag: number;
  id: string;
  collection: string;
  deleted: boolean;
}

export type CommitListener = (changes: readonly DocumentChange[]) => void;

/** A page of documents after an etag, and how far the read that produced it saw (see documentsAfter). */
export interface DocumentsAfter {
  documents: LoadedDocument[];
  scannedTo: number;
}

const DOCS_FILE = 'docs.db';
/** Pages per step of an online backup (a snapshot for the mirror): each step holds the event loop ~1 ms. */
const BACKUP_PAGES_PER_STEP = 256;
const HILO_MIN_RANGE = 32;
const HILO_MAX_RANGE = 1 << 20;

/**
 * One tenant database: a directory holding docs.db, its single writer (the
 * transaction merger) and its readers. Reads run on the same connection,
 * between transactions, and always see committed data.
 */
export class Database {
  private readonly merger: TransactionMerger<WriteTransaction>;
  private readonly listeners = new Set<CommitListener>();
  private readonly closeListeners = new Set<() => void>();
  private readonly commitHook: CommitHook | undefined;
  /** Null when the database is not mirrored. */
  readonly mirror: MirrorShipper | null;
  private closed = false;

  private constructor(
    readonly name: string,
    readonly directory: string,
    private readonly sqlite: BetterSqlite3.Database,
    private readonly s: Statements,
    private readonly state: DatabaseState,
    private readonly clock: () => number,
    options: DatabaseOptions,
    migratedFrom: number,
  ) {
    this.mirror = options.mirror
      ? new MirrorShipper(
          options.mirror,
          {
            localDirectory: directory,
            txid: state.txid,
            // An existing file whose schema just changed starts a new chain: older records replay only on the old schema.
            migrated: migratedFrom !== 0 && migratedFrom !== SCHEMA_VERSION,
            backupTo: (file, aborted) => this.backupTo(file, aborted),
            currentTxid: () => this.state.txid,
          },
          options.logger,
          clock,
        )
      : null;
    const mirror = this.mirror;
    this.commitHook = mirror
      ? (c) => mirror.append(c.txid, c.committedAt, c.schema, c.ops)
      : options.commitHook;
    this.merger = new TransactionMerger(
      () => new WriteTransaction(this.s, this.state, this.clock()),
      (tx) => this.afterCommit(tx),
      {
        merge: options.mergeTransactions ?? true,
        maxUnitsPerTransaction: options.maxDocumentsPerTransaction ?? 20_000,
        fence: () => mirror?.fencedError() ?? options.writeFence?.() ?? null,
      },
    );
  }

  /** Creates a new database directory; fails if one is already there. */
  static create(directory: string, name: string, options: DatabaseOptions = {}): Database {
    if (fs.existsSync(path.join(directory, DOCS_FILE)))
      throw new Error(`A database already exists in ${directory}`);
    fs.mkdirSync(directory, { recursive: true });
    return Database.openFile(directory, options, name);
  }

  /** Opens an existing database directory. */
  static open(directory: string, options: DatabaseOptions = {}): Database {
    if (!fs.existsSync(path.join(directory, DOCS_FILE))) throw new Error(`No database in ${directory}`);
    return Database.openFile(directory, options, undefined);
  }

  static exists(directory: string): boolean {
    return fs.existsSync(path.join(directory, DOCS_FILE));
  }

  private static openFile(
    directory: string,
    options: DatabaseOptions,
    newName: string | undefined,
  ): Database {
    const sqlite = new BetterSqlite3(path.join(directory, DOCS_FILE));
    try {
      const migratedFrom = prepareStorage(sqlite, { synchronous: options.synchronous ?? 'full' });
      const s = prepareStatements(sqlite);
      if (newName !== undefined) {
        sqlite
          .transaction(() => {
            s.setMeta.run('name', newName);
            // 16 random bytes, base64url: the database's identity inside every change vector.
            s.setMeta.run('databaseId', randomBytes(16).toString('base64url'));
          })
          .immediate();
      }
      const name = s.getMeta.get('name')?.value;
      const databaseId = s.getMeta.get('databaseId')?.value;
      if (name === undefined || databaseId === undefined)
        throw new Error(`${directory}/${DOCS_FILE} has no identity`);
      const counters = new Map(s.allCounters.all().map((r) => [r.key, r.value] as const));
      const collections = new Map<string, string>();
      for (const key of counters.keys()) {
        if (key.startsWith('docs/')) collections.set(key.slice(5).toLowerCase(), key.slice(5));
      }
      const state: DatabaseState = {
        databaseId,
        lastEtag: s.lastEtag.get()!.etag,
        txid: Number(s.getMeta.get(TXID_META_KEY)?.value ?? 0),
        collections,
        counters,
        compressionThresholdBytes: options.compressionThresholdBytes ?? 4096,
      };
      return new Database(
        name,
        directory,
        sqlite,
        s,
        state,
        options.clock ?? Date.now,
        options,
        migratedFrom,
      );
    } catch (error) {
      sqlite.close();
      throw error;
    }
  }

  get databaseId(): string {
    return this.state.databaseId;
  }

  /** The etag of the last committed change (document or tombstone). */
  get lastEtag(): number {
    return this.state.lastEtag;
  }

  // ---- reads ---------------------------------------------------------------

  get(id: string): LoadedDocument | null {
    const row = this.s.documentByKey.get(idKey(id));
    return row ? this.loaded(row) : null;
  }

  /** The current change vector of a document without reading its body (for 304 answers). */
  changeVectorOf(id: string): string | null {
    const row = this.s.etagByKey.get(idKey(id));
    return row ? changeVectorOf(row.etag, this.state.databaseId) : null;
  }

  /** Documents and tombstones changed after `etag`, in etag order: what indexers, changes and the mirror consume. */
  changesAfter(etag: number, limit: number): ChangeEntry[] {
    return this.s.changesAfter.all({ after: etag, limit }).map((r: ChangeRow) => ({
      etag: r.etag,
      id: r.id,
      collection: r.collection,
      deleted: r.deleted === 1,
    }));
  }

  /**
   * A page of a collection's documents (every document for `null`) in etag
   * order, through the (collection, etag) index: a collection query reads
   * only the page it returns. Archived documents are left out, as automatic
   * indexes leave them out, so `from Orders` and `from Orders where …` agree.
   */
  collectionPage(collection: string | null, skip: number, take: number): LoadedDocument[] {
    return [...this.collectionDocuments(collection, skip, take)];
  }

  /**
   * collectionPage one document at a time: a caller that stops early (a response budget ran out) has not
   * read the rest. Consume it synchronously: the statement stays open on the connection until it ends.
   */
  *collectionDocuments(collection: string | null, skip: number, take: number): Generator<LoadedDocument> {
    // Asking for no more rows than the counters say are there stops the scan at the last live document,
    // instead of walking the archived ones after it (archiving moves a document to the end of etag order).
    const limit = Math.min(take, Math.max(0, this.collectionCount(collection) - skip));
    if (limit === 0) return;
    const rows =
      collection === null
        ? this.reads().allDocs.iterate(limit, skip)
        : this.reads().collectionDocs.iterate(this.canonicalCollection(collection), limit, skip);
    for (const row of rows) yield this.loaded(row);
  }

  /**
   * A page of the documents whose id starts with `startsWith`, in id order (ids compare case-insensitively),
   * after the id `after` (exclusive; null: from the first), at most `limit`; `done` when nothing follows.
   * Keyset pages for streams: a document written while a stream runs keeps its place in id order, so the
   * stream neither repeats nor skips a document that was there all along. Archived documents are left out,
   * as collection pages leave them out.
   */
  documentsInIdOrder(
    startsWith: string,
    after: string | null,
    limit: number,
    maxChars = Number.POSITIVE_INFINITY,
  ): { documents: LoadedDocument[]; done: boolean } {
    const prefix = idKey(startsWith);
    const afterKey = after === null ? null : idKey(after);
    // Start at whichever bound is further, compared as SQLite compares text (UTF-8 bytes, not UTF-16 units).
    const rows =
      afterKey !== null && Buffer.compare(Buffer.from(afterKey), Buffer.from(prefix)) >= 0
        ? this.streams().docsAfterKey.iterate(afterKey, limit)
        : this.streams().docsFromKey.iterate(prefix, limit);
    const documents: LoadedDocument[] = [];
    let chars = 0;
    for (const row of rows) {
      // Ids with the prefix are contiguous in id order: the first one without it ends the stream.
      if (!idKey(row.id).startsWith(prefix)) return { documents, done: true };
      const document = this.loaded(row);
      documents.push(document);
      chars += document.json.length;
      if (chars >= maxChars) break;
    }
    return { documents, done: documents.length < limit && chars < maxChars };
  }

  /** Documents in a collection (all documents for `null`) that are not archived, from the counters: no counting. */
  collectionCount(collection: string | null): number {
    if (collection === null) {
      let live = 0;
      for (const [key, value] of this.state.counters) {
        if (key.startsWith('docs/')) live += value;
        else if (key.startsWith('archived/')) live -= value;
      }
      return live;
    }
    const canonical = this.canonicalCollection(collection);
    const counter = (key: string) => this.state.counters.get(key) ?? 0;
    return counter(`docs/${canonical}`) - counter(archivedCounter(canonical));
  }

  /** True if a document of `collections` (any for null) was written or deleted after `etag`. */
  hasChangesAfter(collections: readonly string[] | null, etag: number): boolean {
    if (etag >= this.state.lastEtag) return false;
    if (collections === null) return true;
    const statement = this.reads().changedInCollection;
    return collections.some((c) => statement.get({ c: this.canonicalCollection(c), e: etag }) !== undefined);
  }

  /** How many of `collections`' documents were written after `etag`: an index's progress (see index-progress.ts). */
  progressAfter(
    collections: readonly string[] | null,
    etag: number,
    options: ProgressOptions,
  ): IndexBuildProgress {
    return indexProgressOf(this.sqlite, collections, etag, options);
  }

  private canonicalCollection(collection: string): string {
    return this.state.collections.get(collection.toLowerCase()) ?? collection;
  }

  private streamStatements?: StreamStatements;
  private streams(): StreamStatements {
    this.streamStatements ??= prepareStreamStatements(this.sqlite);
    return this.streamStatements;
  }

  private readStatements?: ReadStatements;
  private reads(): ReadStatements {
    this.readStatements ??= prepareReadStatements(this.sqlite);
    return this.readStatements;
  }

  private loaded(row: DocumentRow): LoadedDocument {
    return {
      id: row.id,
      collection: row.collection,
      etag: row.etag,
      changeVector: changeVectorOf(row.etag, this.state.databaseId),
      json: documentJsonOf(row, this.state.databaseId),
    };
  }

  stats(): DatabaseStats {
    const collections: Record<string, number> = {};
    let documents = 0;
    for (const [key, value] of this.state.counters) {
      if (!key.startsWith('docs/') || value === 0) continue;
      collections[key.slice(5)] = value;
      documents += value;
    }
    const bytes = this.sizeOnDisk();
    return {
      DatabaseName: this.name,
      DatabaseId: this.state.databaseId,
      CountOfDocuments: documents,
      CountOfTombstones: this.state.counters.get('tombstones') ?? 0,
      Collections: collections,
      LastDocEtag: this.state.lastEtag,
      SizeOnDisk: { Bytes: bytes, Humane: humaneBytes(bytes) },
      ...(this.mirror ? { Mirror: this.mirror.stats() } : {}),
    };
  }

  // ---- writes (all through the merger) -------------------------------------

  /** Applies the commands as one ACID batch: all of them or, on the first failure, none. */
  batch(commands: readonly Command[]): Promise<CommandResult[]> {
    return this.merger.enqueue((tx) => commands.map((command) => applyCommand(tx, command)), commands.length);
  }

  /** Stores a chunk of bulk-insert lines in one unit of work. */
  insertMany(lines: readonly BulkInsertLine[]): Promise<number> {
    return this.merger.enqueue((tx) => {
      for (const line of lines) tx.put(line.Id, line.Document, undefined);
      return lines.length;
    }, lines.length);
  }

  /** insertMany for documents already split by prepareDocument (bulk insert parses them on another thread). */
  insertPrepared(chunk: PreparedChunk): Promise<number> {
    const count = chunk.ids.length;
    return this.merger.enqueue((tx) => {
      for (let i = 0; i < count; i++) tx.putPrepared(chunk.ids[i] as string, preparedAt(chunk, i));
      return count;
    }, count);
  }

  /**
   * Hands out a range of ids for client-side generation (`users/33-A` … `users/64-A`).
   * A client that used up its last range quickly gets a bigger one.
   */
  async nextHiLo(
    tag: string,
    lastBatchSize: number | undefined,
    lastRangeAt: number | undefined,
  ): Promise<HiLoResponse> {
    let size = Math.max(HILO_MIN_RANGE, lastBatchSize ?? HILO_MIN_RANGE);
    if (lastBatchSize !== undefined && lastRangeAt !== undefined && this.clock() - lastRangeAt < 60_000)
      size *= 2;
    size = Math.min(size, HILO_MAX_RANGE);
    const high = await this.merger.enqueue((tx) => tx.nextSequence('hilo', tag.toLowerCase(), size));
    return { Prefix: `${tag}/`, Low: high - size + 1, High: high, LastSize: size, ServerTag: NODE_TAG };
  }

  /**
   * One batch of the archival and expiration sweep (see lifecycle.ts): deletes documents whose
   * `@expires` is at or before `now` and archives those whose `@archive-at` is, at most `limit`
   * in all, as one unit of the single writer. Callers (the worker's sweep jobs, through the
   * tenant's HTTP API) repeat while `More` is true.
   */
  sweepDue(now: number = this.clock(), options: { limit?: number } = {}): Promise<SweepResult> {
    const limit = options.limit ?? DEFAULT_SWEEP_LIMIT;
    if (!Number.isInteger(limit) || limit < 1 || limit > MAX_SWEEP_LIMIT) {
      return Promise.reject(
        new RangeError(`sweep limit must be a whole number from 1 to ${MAX_SWEEP_LIMIT}, got ${limit}`),
      );
    }
    return this.merger.enqueue((tx) => sweepDue(tx, this.s, now, limit), limit);
  }

  /** Stores an index definition in docs.db: the index file is derived from it (and rebuilt from it after a restore). */
  putIndexDefinition(definition: IndexDefinition): Promise<void> {
    return this.merger.enqueue((tx) => tx.putIndexDefinition(definition));
  }

  deleteIndexDefinition(name: string): Promise<boolean> {
    return this.merger.enqueue((tx) => tx.deleteIndexDefinition(name));
  }

  /** Every index definition stored in docs.db, by name. */
  indexDefinitions(): IndexDefinition[] {
    return this.s.indexDefinitions
      .all()
      .map((row) => IndexDefinitionSchema.parse(JSON.parse(row.definition)));
  }

  onCommit(listener: CommitListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Runs `listener` once when the database starts closing (it was deleted, or the tenant is stopping), or at
   * once if it already has: what keeps a consumer (a subscription) from waiting on a database that is gone.
   */
  onClose(listener: () => void): () => void {
    if (this.closed) {
      listener();
      return () => {};
    }
    this.closeListeners.add(listener);
    return () => this.closeListeners.delete(listener);
  }

  // ---- subscriptions (stored in docs.db, written through the merger) -------

  /** Stores a new subscription after checking its query (400 `InvalidQuery`); 409 `SubscriptionAlreadyExists`. */
  async createSubscription(subscription: NewSubscription): Promise<SubscriptionRecord> {
    compileSubscriptionQuery(subscription.query, subscription.parameters);
    return this.merger.enqueue((tx) => tx.createSubscription(subscription));
  }

  /** A subscription by name (case-insensitive), or null. */
  subscription(name: string): SubscriptionRecord | null {
    const row = this.s.subscriptionByName.get(name.toLowerCase());
    return row ? subscriptionRecordOf(row) : null;
  }

  subscriptions(): SubscriptionRecord[] {
    return this.s.allSubscriptions.all().map(subscriptionRecordOf);
  }

  /**
   * Records a subscription's progress durably: `acknowledged` for a batch its consumer acknowledged, or not
   * for documents scanned past without a match. Takes no etag (it is not a document change). False when
   * the subscription no longer exists.
   */
  recordSubscriptionProgress(name: string, etag: number, acknowledged: boolean): Promise<boolean> {
    return this.merger.enqueue((tx) => tx.recordSubscriptionProgress(name, etag, acknowledged));
  }

  deleteSubscription(name: string): Promise<boolean> {
    return this.merger.enqueue((tx) => tx.deleteSubscription(name));
  }

  /**
   * Up to `limit` documents of a collection (every document for null) with an etag above `etag`, in etag
   * order, archived ones left out (as queries leave them out). `scannedTo` is how far the read saw: the last
   * document's etag when the page is full, else the last etag of the database, since there is nothing more
   * for this read up to there (tombstones, archived documents and other collections included).
   */
  documentsAfter(
    collection: string | null,
    etag: number,
    limit: number,
    maxChars = Number.POSITIVE_INFINITY,
  ): DocumentsAfter {
    const rows =
      collection === null
        ? this.reads().allDocsAfter.iterate(etag, limit)
        : this.reads().collectionDocsAfter.iterate(this.canonicalCollection(collection), etag, limit);
    // Row by row, so that a page of large documents stops at `maxChars` (and at least one document)
    // instead of holding `limit` of them at once.
    const documents: LoadedDocument[] = [];
    let chars = 0;
    for (const row of rows) {
      const document = this.loaded(row);
      documents.push(document);
      chars += document.json.length;
      if (chars >= maxChars) break;
    }
    const full = (documents.length === limit && limit > 0) || chars >= maxChars;
    return {
      documents,
      scannedTo: full ? documents[documents.length - 1]!.etag : Math.max(etag, this.state.lastEtag),
    };
  }

  writeStats() {
    return this.merger.stats();
  }

  /** Commits what is queued, then closes the file. Idempotent. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    for (const listener of this.closeListeners) {
      try {
        listener();
      } catch {
        // A consumer's failure to let go must not keep the database open.
      }
    }
    this.closeListeners.clear();
    await this.merger.close();
    await this.mirror?.close();
    this.sqlite.close();
  }

  /** Online backup of this connection's database: steps between transactions, writes carried into the copy. */
  private async backupTo(file: string, aborted: () => boolean): Promise<void> {
    await this.sqlite.backup(file, {
      progress: () => {
        if (aborted()) throw new Error('backup abandoned: the database is closing');
        return BACKUP_PAGES_PER_STEP;
      },
    });
  }

  private afterCommit(tx: WriteTransaction): Promise<void> | undefined {
    tx.publish();
    // The mirror first: a listener that throws must not keep a transaction from it.
    const confirmed =
      tx.committed && this.commitHook
        ? this.commitHook({
            txid: tx.committed.txid,
            committedAt: tx.now,
            schema: SCHEMA_VERSION,
            ops: tx.committed.ops,
          })
        : undefined;
    if (tx.changes.length > 0) {
      for (const listener of this.listeners) {
        try {
          listener(tx.changes);
        } catch {
          // A listener's failure is its own (the changes feed, an indexer nudge); the commit stands.
        }
      }
    }
    return confirmed;
  }

  private sizeOnDisk(): number {
    let total = 0;
    for (const suffix of ['', '-wal', '-shm']) {
      try {
        total += fs.statSync(path.join(this.directory, DOCS_FILE + suffix)).size;
      } catch {
        // -wal and -shm come and go with checkpoints.
      }
    }
    return total;
  }
}

function applyCommand(tx: WriteTransaction, command: Command): CommandResult {
  switch (command.Type) {
    case 'PUT':
      return tx.put(command.Id, command.Document, command.ChangeVector);
    case 'DELETE':
      return tx.delete(command.Id, command.ChangeVector);
    case 'PATCH':
      return tx.patch(command.Id, command.Patch, command.ChangeVector);
  }
}
