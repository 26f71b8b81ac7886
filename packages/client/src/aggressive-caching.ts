// Aggressive caching: reads answered from the HTTP cache without any request while the entry is younger
// than the chosen duration and nothing changed since. "Nothing changed" is known from the store's changes
// connection (watch-all-docs + watch-all-indexes): every notification marks the cache suspect, so older
// entries are revalidated with If-None-Match on their next use; a lost connection empties the cache
// (changes made meanwhile were never notified), and until the watches are confirmed again every read
// revalidates.
import { type AggressiveCacheHandle, disposable } from './aggressive-cache-handle.js';
import type { HttpCache } from './http/http-cache.js';
import type { ChangesObservable } from './live/changes-observable.js';
import type { DatabaseChanges } from './live/database-changes.js';
import type { DocumentChange, IndexChange } from './live/frames.js';

export class AggressiveCaching {
  /** Durations enabled on the store, innermost last; disposing one removes it wherever it is. */
  private readonly periods: { ms: number }[] = [];
  private watches: {
    documents: ChangesObservable<DocumentChange>;
    indexes: ChangesObservable<IndexChange>;
  } | null = null;

  constructor(
    private readonly cache: HttpCache,
    private readonly changes: () => DatabaseChanges,
  ) {}

  /** The store-wide duration in force, if any. */
  get durationMs(): number | undefined {
    return this.periods.at(-1)?.ms;
  }

  /** Whether a fresh entry may be served without a request now: both watches confirmed on a live connection. */
  get ready(): boolean {
    return (this.watches?.documents.isSubscribed ?? false) && (this.watches?.indexes.isSubscribed ?? false);
  }

  enable(ms: number): AggressiveCacheHandle {
    const period = { ms };
    this.periods.push(period);
    void this.start().catch(() => undefined);
    return disposable(
      () => {
        const index = this.periods.indexOf(period);
        if (index !== -1) this.periods.splice(index, 1);
      },
      () => this.start(),
    );
  }

  /** Opens the watches (once) and resolves when they are confirmed on the current connection. */
  async start(): Promise<void> {
    if (this.watches === null) {
      const changes = this.changes();
      const documents = changes.forAllDocuments();
      const indexes = changes.forAllIndexes();
      documents.subscribe(() => this.cache.markSuspect());
      indexes.subscribe(() => this.cache.markSuspect());
      changes.on('connectionStatus', (status) => {
        if (!status.connected) this.cache.clear();
      });
      this.watches = { documents, indexes };
    }
    await Promise.all([
      this.watches.documents.ensureSubscribedNow(),
      this.watches.indexes.ensureSubscribedNow(),
    ]);
  }
}
