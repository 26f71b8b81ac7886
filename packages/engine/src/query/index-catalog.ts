import fs from 'node:fs';
import path from 'node:path';
import type { IndexDefinition } from '@rookery/protocol';
import { INDEXES_DIRECTORY, indexFileName, replacementFileOf } from '../indexing/index-file.js';
import { IndexReader } from './index-reader.js';

/**
 * The query side's view of a database's indexes: one read-only connection
 * per index file, opened on first use and reopened when the indexer
 * replaced the file (a changed definition or a reset).
 */
export class IndexCatalog {
  private readonly readers = new Map<string, IndexReader>();
  private readonly directory: string;

  constructor(databaseDirectory: string) {
    this.directory = path.join(databaseDirectory, INDEXES_DIRECTORY);
  }

  reader(name: string): IndexReader | null {
    const key = name.toLowerCase();
    const cached = this.readers.get(key);
    if (cached?.isCurrent()) return cached;
    cached?.close();
    this.readers.delete(key);
    const file = path.join(this.directory, indexFileName(name));
    if (!fs.existsSync(file)) return null;
    try {
      const reader = new IndexReader(file);
      this.readers.set(key, reader);
      return reader;
    } catch {
      // Being created or deleted right now: as good as absent.
      return null;
    }
  }

  /**
   * True while a changed definition of the index is being built beside it: the index answers from its old
   * definition meanwhile, so its answers are stale until the replacement takes its place.
   */
  isReplacing(name: string): boolean {
    return fs.existsSync(replacementFileOf(this.directory, name));
  }

  /** The definition being built beside the index (`isReplacing`): the one that will answer; null if none. */
  replacementDefinition(name: string): IndexDefinition | null {
    return this.withReplacement(name, (reader) => reader.definition);
  }

  /**
   * Reads the replacement being built beside the index (its stats, for one) through a connection opened for
   * this read only: the indexer renames the file on promotion, so a cached reader would outlive it. Null if none.
   */
  withReplacement<T>(name: string, read: (reader: IndexReader) => T): T | null {
    const file = replacementFileOf(this.directory, name);
    if (!fs.existsSync(file)) return null;
    let reader: IndexReader | null = null;
    try {
      reader = new IndexReader(file);
    } catch {
      return null; // promoted or called off meanwhile
    }
    try {
      return read(reader);
    } finally {
      reader.close();
    }
  }

  /** Every index's definition (the automatic-index planner matches queries against them). */
  definitions(): IndexDefinition[] {
    let files: string[];
    try {
      files = fs.readdirSync(this.directory).filter((f) => f.endsWith('.db'));
    } catch {
      return [];
    }
    const found: IndexDefinition[] = [];
    for (const file of files) {
      const name = decodeURIComponent(file.slice(0, -3));
      const reader = this.reader(name);
      if (reader) found.push(reader.definition);
    }
    return found;
  }

  close(): void {
    for (const reader of this.readers.values()) reader.close();
    this.readers.clear();
  }
}
