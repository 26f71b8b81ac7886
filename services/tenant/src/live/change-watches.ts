import type { DocumentChange } from '@rookery/engine';
import type { ChangesCommand } from '@rookery/protocol';

/** Most watches one changes connection may hold: each is a few bytes, but a client must not add them forever. */
export const MAX_WATCHES_PER_CONNECTION = 10_000;

/**
 * What one changes connection watches. Ids, prefixes, collections and index names compare
 * case-insensitively, as they do everywhere else, so every key is lower-cased once when the watch is added.
 */
export class ChangeWatches {
  private allDocuments = false;
  private allIndexes = false;
  private readonly documents = new Set<string>();
  private readonly collections = new Set<string>();
  private readonly prefixes = new Set<string>();
  private readonly indexes = new Set<string>();

  get size(): number {
    return this.documents.size + this.collections.size + this.prefixes.size + this.indexes.size;
  }

  /** Applies a command. False when it would add a watch past MAX_WATCHES_PER_CONNECTION (nothing changed). */
  apply(command: ChangesCommand): boolean {
    switch (command.Command) {
      case 'watch-all-docs':
      case 'unwatch-all-docs':
      case 'watch-docs':
      case 'unwatch-docs':
        this.allDocuments = command.Command === 'watch-all-docs' || command.Command === 'watch-docs';
        return true;
      case 'watch-all-indexes':
      case 'unwatch-all-indexes':
      case 'watch-indexes':
      case 'unwatch-indexes':
        this.allIndexes = command.Command === 'watch-all-indexes' || command.Command === 'watch-indexes';
        return true;
      case 'watch-doc':
      case 'unwatch-doc':
        return this.toggle(this.documents, command.Command === 'watch-doc', command.Param);
      case 'watch-collection':
      case 'unwatch-collection':
        return this.toggle(this.collections, command.Command === 'watch-collection', command.Param);
      case 'watch-prefix':
      case 'unwatch-prefix':
        return this.toggle(this.prefixes, command.Command === 'watch-prefix', command.Param);
      case 'watch-index':
      case 'unwatch-index':
        return this.toggle(this.indexes, command.Command === 'watch-index', command.Param);
    }
  }

  /** Whether any watch matches the change: a connection gets each change once, however many match. */
  matchesDocument(change: DocumentChange): boolean {
    if (this.allDocuments) return true;
    const id = change.id.toLowerCase();
    if (this.documents.has(id) || this.collections.has(change.collection.toLowerCase())) return true;
    for (const prefix of this.prefixes) if (id.startsWith(prefix)) return true;
    return false;
  }

  matchesIndex(name: string): boolean {
    return this.allIndexes || this.indexes.has(name.toLowerCase());
  }

  private toggle(set: Set<string>, watch: boolean, param: string): boolean {
    const key = param.toLowerCase();
    if (!watch) {
      set.delete(key);
      return true;
    }
    if (!set.has(key) && this.size >= MAX_WATCHES_PER_CONNECTION) return false;
    set.add(key);
    return true;
  }
}
