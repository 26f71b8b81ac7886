import type { IndexChangeNotification } from '@rookery/protocol';

export type IndexChange = IndexChangeNotification['Value'];
type IndexChangeListener = (change: IndexChange) => void;

/**
 * Index events per database, from where the tenant learns them (the indexer's progress reports, index
 * creation and deletion in TenantIndexing) to the changes connections that watch them. Kept apart from
 * TenantIndexing so that a changes connection does not start the indexer process just by listening.
 */
export class IndexChangeFeed {
  private readonly listeners = new Map<string, Set<IndexChangeListener>>();
  /** Events of indexes being defined, held back until the definition is answered (see hold). */
  private readonly held = new Map<string, { holders: number; changes: IndexChange[] }>();

  /** `database`: its name, in any case. */
  subscribe(database: string, listener: IndexChangeListener): () => void {
    const key = database.toLowerCase();
    let set = this.listeners.get(key);
    if (!set) {
      set = new Set();
      this.listeners.set(key, set);
    }
    set.add(listener);
    return () => {
      set.delete(listener);
      if (set.size === 0 && this.listeners.get(key) === set) this.listeners.delete(key);
    };
  }

  /**
   * Holds an index's events while it is being defined, until `release`, which publishes `first` (its
   * IndexAdded) ahead of them. The indexer process may report the index's first batch before the tenant
   * has read its answer to the definition, and a consumer must hear that an index exists before it hears
   * of its batches.
   */
  hold(database: string, index: string): { release(first?: IndexChange): void } {
    const key = heldKey(database, index);
    const entry = this.held.get(key) ?? { holders: 0, changes: [] };
    entry.holders++;
    this.held.set(key, entry);
    let released = false;
    return {
      release: (first) => {
        if (released) return;
        released = true;
        if (first) this.deliver(database, first);
        if (--entry.holders > 0) return;
        this.held.delete(key);
        for (const change of entry.changes) this.deliver(database, change);
      },
    };
  }

  publish(database: string, change: IndexChange): void {
    const held = this.held.get(heldKey(database, change.Name));
    if (held) held.changes.push(change);
    else this.deliver(database, change);
  }

  private deliver(database: string, change: IndexChange): void {
    for (const listener of this.listeners.get(database.toLowerCase()) ?? []) {
      try {
        listener(change);
      } catch {
        // One consumer's failure is its own: the others still hear about the index.
      }
    }
  }
}

function heldKey(database: string, index: string): string {
  return `${database.toLowerCase()}\u0000${index.toLowerCase()}`;
}
