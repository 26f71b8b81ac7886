import { setImmediate as nextTurn } from 'node:timers/promises';
import type { Database, LoadedDocument } from '../database.js';
import type { DocumentChange } from '../write-transaction.js';
import { matches } from './matches.js';
import type { SubscriptionQuery } from './query.js';

export interface BatchOptions {
  /** Most documents in a batch. */
  batchSize: number;
  /** How long a partial batch is held, once the scan has caught up, for more matches to arrive (0: not at all). */
  maxWaitMs: number;
  /** A batch ends once its documents add up to this many characters of JSON; it always holds at least one. */
  maxBatchChars?: number;
  /** Aborted: `next` resolves with null (the consumer left, or the database is closing). */
  signal: AbortSignal;
  /**
   * The scan reached the last write with nothing to send, and is about to wait for new documents: every
   * document up to `etag` was either acknowledged before or did not match, so `etag` is safe to record.
   */
  onIdle?: (etag: number) => void;
}

export interface SubscriptionBatch {
  documents: LoadedDocument[];
  /** The etag of the last document scanned for this batch (matching or not): the progress its ack records. */
  lastEtag: number;
}

/** A batch is closed at 4 MiB of documents: the consumer's memory, and the frame the gateway carries, stay bounded. */
export const DEFAULT_MAX_BATCH_CHARS = 4 * 1024 * 1024;
/** Rows read per synchronous step when a `where` filters them (each step holds the event loop for one page). */
const FILTERED_PAGE_ROWS = 128;
const UNFILTERED_PAGE_ROWS = 256;
/** A long scan (rare matches far apart) sends what it found after this long rather than at its end. */
const SCAN_HOLD_MS = 100;

/**
 * Reads a subscription's documents in etag order after a position, in keyset pages (better-sqlite3 cannot
 * keep an iterator open across awaits), filters them with the `where` clause and cuts them into batches.
 * When it has caught up with the last write it waits for a commit that wrote a document of its collection
 * (no polling), so an idle subscription costs nothing. Deleted documents are skipped (tombstones are not
 * documents), so are archived ones.
 */
export class SubscriptionCursor {
  private readonly collectionKey: string | null;

  constructor(
    private readonly db: Database,
    private readonly query: SubscriptionQuery,
    /** Everything up to this etag has been scanned (or acknowledged before this cursor started). */
    public position: number,
  ) {
    this.collectionKey = query.collection?.toLowerCase() ?? null;
  }

  /** The next non-empty batch after `position`, which it moves past; null once the signal is aborted. */
  async next(options: BatchOptions): Promise<SubscriptionBatch | null> {
    const { batchSize, maxWaitMs, signal } = options;
    const maxChars = options.maxBatchChars ?? DEFAULT_MAX_BATCH_CHARS;
    const documents: LoadedDocument[] = [];
    let chars = 0;
    let firstMatchAt = 0;
    const batch = () => ({ documents, lastEtag: this.position });
    for (;;) {
      if (signal.aborted) return null;
      const rows = this.query.where
        ? FILTERED_PAGE_ROWS
        : Math.min(UNFILTERED_PAGE_ROWS, batchSize - documents.length);
      const page = this.db.documentsAfter(this.query.collection, this.position, rows);
      for (const doc of page.documents) {
        this.position = doc.etag;
        if (this.query.where && !matches(this.query.where, JSON.parse(doc.json) as Record<string, unknown>))
          continue;
        if (documents.length === 0) firstMatchAt = Date.now();
        documents.push(doc);
        chars += doc.json.length;
        if (documents.length >= batchSize || chars >= maxChars) return batch();
      }
      this.position = page.scannedTo;
      const caughtUp = page.documents.length < rows;
      if (!caughtUp) {
        if (documents.length > 0 && Date.now() - firstMatchAt >= Math.max(maxWaitMs, SCAN_HOLD_MS))
          return batch();
        await nextTurn(); // other requests run between pages of a long scan
        continue;
      }
      if (documents.length === 0) {
        options.onIdle?.(this.position);
        await this.nextWrite(signal, null);
        continue;
      }
      const deadline = firstMatchAt + maxWaitMs;
      if (Date.now() >= deadline) return batch();
      await this.nextWrite(signal, deadline);
    }
  }

  /** Resolves at the next commit that wrote a document this cursor reads, at `deadline`, or on abort. */
  private nextWrite(signal: AbortSignal, deadline: number | null): Promise<void> {
    return new Promise((resolve) => {
      const done = () => {
        stopListening();
        clearTimeout(timer);
        signal.removeEventListener('abort', done);
        resolve();
      };
      // Registered in the same turn as the scan that found nothing more: no commit can fall in between.
      const stopListening = this.db.onCommit((changes) => {
        if (changes.some((change) => this.reads(change))) done();
      });
      const timer = deadline === null ? undefined : setTimeout(done, Math.max(0, deadline - Date.now()));
      signal.addEventListener('abort', done, { once: true });
      if (signal.aborted) done();
    });
  }

  private reads(change: DocumentChange): boolean {
    return (
      change.type === 'put' &&
      (this.collectionKey === null || change.collection.toLowerCase() === this.collectionKey)
    );
  }
}
