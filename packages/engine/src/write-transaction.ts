import {
  type CommandResult,
  type DocumentInput,
  EMPTY_COLLECTION,
  type IndexDefinition,
  type Patch,
  type PreparedDocument,
  prepareDocument,
  RookeryError,
} from '@rookery/protocol';
import { changeVectorOf, documentOf, isArchived, storedBody } from './document-shape.js';
import { classifyId, idKey, NODE_TAG } from './ids.js';
import type { MergeableTransaction } from './merger.js';
import { applyPatch } from './patch.js';
import type { RecordedOps } from './storage/change-recorder.js';
import type { DocumentInsert, DocumentRow, Head, Statements } from './storage/statements.js';
import { type NewSubscription, type SubscriptionRecord, storedParameters } from './subscriptions/record.js';

/** What a committed write changed; published to listeners (changes feed, indexers, mirror) after commit. */
export interface DocumentChange {
  type: 'put' | 'delete';
  id: string;
  collection: string;
  etag: number;
  changeVector: string;
}

/** In-memory state of an open database that only committed transactions may change. */
export interface DatabaseState {
  readonly databaseId: string;
  lastEtag: number;
  /**
   * Number of the last committed transaction that wrote anything, stored in docs.db's meta in that
   * same transaction: the mirror's position, which any copy of the file (a snapshot) carries with it.
   */
  txid: number;
  /** Collection names by their lower-case key, in the case they were first stored with. */
  readonly collections: Map<string, string>;
  /** Counter table mirror: `docs/<Collection>`, `archived/<Collection>` (archived ones among them) and `tombstones`. */
  readonly counters: Map<string, number>;
  readonly compressionThresholdBytes: number;
}

export type ExpectedChangeVector = string | null | undefined;

const TOMBSTONES = 'tombstones';
/** The meta key holding the last transaction number (see DatabaseState.txid). */
export const TXID_META_KEY = 'txid';
const docsCounter = (collection: string) => `docs/${collection}`;
/** Archived documents of a collection, also counted in its `docs/` counter: collection queries leave them out. */
export const archivedCounter = (collection: string) => `archived/${collection}`;

/** Where a unit of work started: lengths of the undo logs, so a savepoint costs no copying. */
interface Snapshot {
  etag: number;
  recorded: number;
  undoDeltas: number;
  undoCollections: number;
  changes: number;
}

/**
 * One SQLite write transaction of the merger, and the document operations that
 * run inside it. Counter changes and new collections are kept here and written
 * once at commit; the shared state is only touched after the commit succeeded.
 */
export class WriteTransaction implements MergeableTransaction {
  readonly changes: DocumentChange[] = [];
  /** Set by a commit that wrote something: this transaction's number and its recorded operations. */
  committed: { txid: number; ops: RecordedOps } | null = null;
  private etag: number;
  private readonly deltas = new Map<string, number>();
  private readonly newCollections = new Map<string, string>();
  private snapshot: Snapshot | null = null;
  /** Every counter adjustment and new collection in order, to undo those of a unit rolled back to its savepoint. */
  private readonly undoDeltas: Array<[string, number]> = [];
  private readonly undoCollections: string[] = [];
  /** `now` as ISO-8601, formatted once per transaction rather than once per document. */
  private readonly nowIso: string;

  constructor(
    private readonly s: Statements,
    private readonly state: DatabaseState,
    readonly now: number,
  ) {
    this.etag = state.lastEtag;
    this.nowIso = new Date(now).toISOString();
  }

  begin(): void {
    this.s.recorder.clear();
    this.s.begin.run();
  }

  savepoint(): void {
    this.s.savepoint.run();
    this.snapshot = {
      etag: this.etag,
      recorded: this.s.recorder.mark(),
      undoDeltas: this.undoDeltas.length,
      undoCollections: this.undoCollections.length,
      changes: this.changes.length,
    };
  }

  release(): void {
    this.s.release.run();
  }

  rollbackToSavepoint(): void {
    this.s.rollbackToSavepoint.run();
    this.s.release.run();
    const snap = this.snapshot!;
    this.etag = snap.etag;
    this.s.recorder.rollbackTo(snap.recorded);
    for (const [key, delta] of this.undoDeltas.splice(snap.undoDeltas)) {
      this.deltas.set(key, this.deltas.get(key)! - delta);
    }
    for (const key of this.undoCollections.splice(snap.undoCollections)) this.newCollections.delete(key);
    this.changes.length = snap.changes;
  }

  commit(): void {
    for (const [key, delta] of this.deltas) if (delta !== 0) this.s.addCounter.run(key, delta);
    if (!this.s.recorder.isEmpty) {
      // A transaction that wrote nothing (every unit failed, or deleted missing documents) gets no number.
      const txid = this.state.txid + 1;
      this.s.setMeta.run(TXID_META_KEY, String(txid));
      this.committed = { txid, ops: this.s.recorder.take() };
    }
    this.s.commit.run();
  }

  rollback(): void {
    this.s.rollback.run();
  }

  /** Publishes what this (committed) transaction changed into the shared state. */
  publish(): void {
    this.state.lastEtag = Math.max(this.state.lastEtag, this.etag);
    if (this.committed) this.state.txid = this.committed.txid;
    for (const [key, name] of this.newCollections) this.state.collections.set(key, name);
    for (const [key, delta] of this.deltas)
      this.state.counters.set(key, (this.state.counters.get(key) ?? 0) + delta);
  }

  put(id: string, input: DocumentInput, expected: ExpectedChangeVector): CommandResult {
    return this.putDocument(id, (finalId) => prepareDocument(finalId, input), expected);
  }

  /**
   * A PUT of a document already split by prepareDocument (bulk insert parses on another thread).
   * Most bulk-inserted documents are new: they are inserted straight away, and only an id that
   * exists takes the path of an update.
   */
  putPrepared(id: string, prepared: PreparedDocument): CommandResult {
    const request = classifyId(id);
    if (request.kind === 'exact' && !prepared.archived) {
      const inserted = this.insertIfNew(request.id, idKey(request.id), prepared);
      if (inserted) return inserted;
    }
    return this.putDocument(id, () => prepared, undefined);
  }

  /** write()'s path for a new document, taken only if the id is free; null (and nothing written) if it is not. */
  private insertIfNew(id: string, key: string, prepared: PreparedDocument): CommandResult | null {
    const collection = this.resolveCollection(id, prepared.collection, undefined);
    const { body, flags } = storedBody(prepared, this.state.compressionThresholdBytes);
    const etag = this.etag + 1;
    const row = this.documentInsert(etag, key, id, collection, flags, prepared, body);
    if (this.s.insertDocumentIfNew.run(...row).changes === 0) return null;
    this.etag = etag;
    this.supersedeTombstone(key);
    this.adjust(docsCounter(collection), 1);
    return this.putResult(id, collection, etag);
  }

  /** `prepare` gets the final id (a server-generated one for `users/` or `users|`) for its error messages. */
  private putDocument(
    id: string,
    prepare: (finalId: string) => PreparedDocument,
    expected: ExpectedChangeVector,
  ): CommandResult {
    const request = classifyId(id);
    let finalId: string;
    if (request.kind === 'exact') {
      finalId = request.id;
    } else {
      const n = this.nextSequence(request.kind, request.tag, 1);
      finalId = request.kind === 'hilo' ? `${request.prefix}${n}-${NODE_TAG}` : `${request.prefix}${n}`;
    }
    const key = idKey(finalId);
    const existing = this.s.headByKey.get(key);
    this.checkExpected(finalId, existing?.etag, expected);
    return this.write(finalId, key, prepare(finalId), existing);
  }

  delete(id: string, expected: ExpectedChangeVector): CommandResult {
    const key = idKey(id);
    const existing = this.s.headByKey.get(key);
    this.checkExpected(id, existing?.etag, expected);
    if (!existing) {
      return {
        Type: 'DELETE',
        Id: id,
        ChangeVector: null,
        Collection: null,
        LastModified: null,
        Deleted: false,
      };
    }
    const etag = ++this.etag;
    this.s.deleteDocument.run(existing.etag);
    this.s.insertTombstone.run(etag, key, existing.id, existing.collection, this.now);
    this.adjust(docsCounter(existing.collection), -1);
    if (isArchived(existing.flags)) this.adjust(archivedCounter(existing.collection), -1);
    this.adjust(TOMBSTONES, 1);
    const changeVector = changeVectorOf(etag, this.state.databaseId);
    this.changes.push({
      type: 'delete',
      id: existing.id,
      collection: existing.collection,
      etag,
      changeVector,
    });
    return {
      Type: 'DELETE',
      Id: existing.id,
      ChangeVector: changeVector,
      Collection: existing.collection,
      LastModified: this.nowIso,
      Deleted: true,
    };
  }

  patch(id: string, patch: Patch, expected: ExpectedChangeVector): CommandResult {
    const key = idKey(id);
    const row = this.s.documentByKey.get(key);
    if (!row) {
      throw new RookeryError(
        'DocumentNotFound',
        `Cannot patch ${id}: no such document. Create it with PUT first.`,
        {
          id,
        },
      );
    }
    this.checkExpected(id, row.etag, expected);
    const patched = applyPatch(row.id, this.current(row), patch);
    const result = this.write(row.id, key, prepareDocument(row.id, patched), row);
    return { ...result, Type: 'PATCH' };
  }

  /**
   * Archives a document (the sweep does this once its `@archive-at` has passed): it is written again
   * with `@archived: true`, the same path as a client storing it so, which compresses the body, drops
   * `@archive-at` and gives it a new etag, so indexers see the change. Missing or already archived: nothing.
   */
  archive(id: string): void {
    const key = idKey(id);
    const row = this.s.documentByKey.get(key);
    if (!row || isArchived(row.flags)) return;
    const doc = this.current(row);
    (doc['@metadata'] as Record<string, unknown>)['@archived'] = true;
    this.write(row.id, key, prepareDocument(row.id, doc), row);
  }

  /** Stores an index's definition (the index file is rebuilt from it after a restore). */
  putIndexDefinition(definition: IndexDefinition): void {
    this.s.putIndexDefinition.run(definition.Name.toLowerCase(), JSON.stringify(definition));
  }

  deleteIndexDefinition(name: string): boolean {
    return this.s.deleteIndexDefinition.run(name.toLowerCase()).changes > 0;
  }

  /**
   * Stores a new subscription. `Now` starts it after every change written before it, including those of
   * earlier units of this same transaction: it is ordered with document writes like any other write.
   */
  createSubscription(subscription: NewSubscription): SubscriptionRecord {
    const key = subscription.name.toLowerCase();
    if (this.s.subscriptionByName.get(key)) {
      throw new RookeryError(
        'SubscriptionAlreadyExists',
        `A subscription named ${subscription.name} already exists; delete it first or pick another name`,
        { subscription: subscription.name },
      );
    }
    const lastEtag = subscription.startFrom === 'Now' ? this.etag : 0;
    const { name, query, parameters = {} } = subscription;
    this.s.insertSubscription.run(key, name, query, storedParameters(parameters), lastEtag, this.now);
    return { name, query, parameters, lastEtag, createdAt: this.now, lastAcknowledgedAt: null };
  }

  /**
   * Moves a subscription's progress to `etag` (never back). Not a document change: no etag is taken, so
   * indexes, the changes feed and cached query results do not see it. False when there is no such subscription.
   */
  recordSubscriptionProgress(name: string, etag: number, acknowledged: boolean): boolean {
    const key = name.toLowerCase();
    // Checked first so that progress of a deleted subscription writes (and mirrors) nothing.
    if (!this.s.subscriptionByName.get(key)) return false;
    this.s.setSubscriptionProgress.run(etag, acknowledged ? this.now : null, key);
    return true;
  }

  deleteSubscription(name: string): boolean {
    return this.s.deleteSubscription.run(name.toLowerCase()).changes > 0;
  }

  /** Reserves `size` numbers of a HiLo or identity sequence; returns the last one reserved. */
  nextSequence(kind: 'hilo' | 'identity', tag: string, size: number): number {
    const current = this.s.sequence.get(kind, tag)?.value ?? 0;
    const next = current + size;
    this.s.setSequence.run(kind, tag, next);
    return next;
  }

  /** A stored document as a client would send it back, `@metadata` included. */
  private current(row: DocumentRow): DocumentInput {
    return documentOf(row, this.state.databaseId) as DocumentInput;
  }

  private write(
    id: string,
    key: string,
    prepared: PreparedDocument,
    existing: Head | undefined,
  ): CommandResult {
    const collection = this.resolveCollection(id, prepared.collection, existing?.collection);
    const { body, flags } = storedBody(prepared, this.state.compressionThresholdBytes);
    const wasArchived = existing !== undefined && isArchived(existing.flags);
    if (prepared.archived !== wasArchived)
      this.adjust(archivedCounter(collection), prepared.archived ? 1 : -1);
    const etag = ++this.etag;
    const { expiresAt, archiveAt, metadataJson } = prepared;
    if (existing) {
      this.s.updateDocument.run(
        etag,
        this.now,
        flags,
        expiresAt,
        archiveAt,
        metadataJson,
        body,
        existing.etag,
      );
    } else {
      this.supersedeTombstone(key);
      this.s.insertDocument.run(...this.documentInsert(etag, key, id, collection, flags, prepared, body));
      this.adjust(docsCounter(collection), 1);
    }
    return this.putResult(existing?.id ?? id, collection, etag);
  }

  /** The parameters of insertDocument and insertDocumentIfNew, in their order. */
  private documentInsert(
    etag: number,
    key: string,
    id: string,
    collection: string,
    flags: number,
    prepared: PreparedDocument,
    body: string | Buffer,
  ): DocumentInsert {
    const { expiresAt, archiveAt, metadataJson } = prepared;
    return [etag, key, id, collection, this.now, flags, expiresAt, archiveAt, metadataJson, body];
  }

  /** A re-created document supersedes its tombstone: consumers behind it see the new version instead. */
  private supersedeTombstone(key: string): void {
    if ((this.state.counters.get(TOMBSTONES) ?? 0) + (this.deltas.get(TOMBSTONES) ?? 0) === 0) return;
    if (this.s.deleteTombstone.run(key).changes > 0) this.adjust(TOMBSTONES, -1);
  }

  private putResult(storedId: string, collection: string, etag: number): CommandResult {
    const changeVector = changeVectorOf(etag, this.state.databaseId);
    this.changes.push({ type: 'put', id: storedId, collection, etag, changeVector });
    return {
      Type: 'PUT',
      Id: storedId,
      ChangeVector: changeVector,
      Collection: collection,
      LastModified: this.nowIso,
    };
  }

  /** Maps `@collection` to its canonical spelling; a document never changes collection by an update. */
  private resolveCollection(id: string, requested: string | undefined, current: string | undefined): string {
    if (requested === undefined) return current ?? EMPTY_COLLECTION;
    const key = requested.toLowerCase();
    const canonical = this.state.collections.get(key) ?? this.newCollections.get(key) ?? requested;
    if (current !== undefined && current.toLowerCase() !== key) {
      throw new RookeryError(
        'CollectionChangeNotAllowed',
        `Document ${id} belongs to collection ${current} and cannot move to ${requested}; delete it and create it again`,
        { id, currentCollection: current, requestedCollection: requested },
      );
    }
    if (!this.state.collections.has(key) && !this.newCollections.has(key)) {
      this.newCollections.set(key, canonical);
      this.undoCollections.push(key);
    }
    return canonical;
  }

  private checkExpected(id: string, currentEtag: number | undefined, expected: ExpectedChangeVector): void {
    if (expected === undefined || expected === null) return;
    const actual = currentEtag === undefined ? null : changeVectorOf(currentEtag, this.state.databaseId);
    if (expected === '' ? actual === null : actual === expected) return;
    const detail =
      actual === null
        ? `Document ${id} does not exist, but the command expected change vector ${expected}.`
        : expected === ''
          ? `Document ${id} already exists (change vector ${actual}), but the command expected it not to.`
          : `Document ${id} has change vector ${actual}, but the command expected ${expected}.`;
    throw new RookeryError(
      'ConcurrencyConflict',
      `${detail} Someone else changed it: load it again, reapply your change and retry.`,
      { id, expectedChangeVector: expected, actualChangeVector: actual },
    );
  }

  private adjust(key: string, delta: number): void {
    this.deltas.set(key, (this.deltas.get(key) ?? 0) + delta);
    this.undoDeltas.push([key, delta]);
  }
}
