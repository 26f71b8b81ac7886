/**
 * Side by side (database-indexer.ts): the indexes of changed definitions, each built in
 * `indexes/.replacing/<name>.db` beside the index of the same name, which keeps answering until its
 * replacement has caught up. This file holds where replacements live, resuming them after a restart,
 * calling one off, and promoting one into its old index's place. Deciding whether a change is built
 * side by side (the sandbox budget) and running the batches stay with the DatabaseIndexer.
 */

import fs from 'node:fs';
import path from 'node:path';
import {
  indexFileName,
  REPLACING_DIRECTORY,
  removeIndexFiles,
  removeIndexSidecars,
  replacementFileOf,
} from './index-file.js';
import { markerFileOf } from './writer-marker.js';

/** What a replacement needs to know of a loaded index (the DatabaseIndexer's LoadedIndex). */
export interface ReplaceableIndex {
  name: string;
  file: string;
  /** The worker build it awaits: such a replacement is promoted by adoption, not by catching up here. */
  awaitingBuild: string | null;
  writer: { readonly lastEtag: number };
}

/** The DatabaseIndexer's side of a promotion or a calling off. */
export interface ReplacementHost<L extends ReplaceableIndex> {
  /** The indexes directory (`indexes/`). */
  readonly directory: string;
  /** The answering indexes by key: a promotion takes the old one out and files the new one. */
  readonly answering: Map<string, L>;
  /** Opens an index file; returns its key and the loaded index. */
  load(file: string): [string, L];
  /** Closes a loaded index cleanly (its file stays). */
  unload(loaded: L): void;
  /** Ends the indexer's quiet: something changed here. */
  lookAgain(): void;
}

/** The replacements of one database's indexes, by the key (lower-cased name) of the index each replaces. */
export class IndexReplacements<L extends ReplaceableIndex> {
  private readonly byKey = new Map<string, L>();

  constructor(private readonly host: ReplacementHost<L>) {}

  get size(): number {
    return this.byKey.size;
  }

  get(key: string): L | undefined {
    return this.byKey.get(key);
  }

  values(): L[] {
    return [...this.byKey.values()];
  }

  /** The file a changed definition of `name` is built in. */
  fileFor(name: string): string {
    return replacementFileOf(this.host.directory, name);
  }

  /** Files a replacement loaded from `fileFor` (the one it supersedes was called off first). */
  add(key: string, loaded: L): void {
    this.byKey.set(key, loaded);
  }

  /**
   * After a restart, replacements resume where they were (their files are ordinary index files). One whose
   * old index is gone — a crash between the old file's removal and the rename in `promote` — takes its place.
   */
  resume(): void {
    const directory = path.join(this.host.directory, REPLACING_DIRECTORY);
    if (!fs.existsSync(directory)) return;
    for (const file of fs.readdirSync(directory)) {
      if (!file.endsWith('.db')) continue;
      try {
        const [key, loaded] = this.host.load(path.join(directory, file));
        this.byKey.set(key, loaded);
        if (!this.host.answering.has(key)) this.promote(key);
      } catch {
        removeIndexFiles(path.join(directory, file));
      }
    }
  }

  /** Calls off the replacement of an index (a newer change supersedes it, or the index goes). */
  drop(key: string): void {
    const replacement = this.byKey.get(key);
    if (!replacement) return;
    this.byKey.delete(key);
    this.host.unload(replacement);
    removeIndexFiles(replacement.file);
    this.host.lookAgain();
  }

  /** Swaps in every replacement built here that has caught up with the documents' `lastEtag`. */
  promoteCaughtUp(lastEtag: number): void {
    for (const [key, replacement] of [...this.byKey]) {
      if (replacement.awaitingBuild === null && replacement.writer.lastEtag >= lastEtag) this.promote(key);
    }
  }

  /**
   * Swaps a caught-up replacement in (or, with `staged`, a worker's build of it, caught up in staging).
   * The old file goes first, then the new one is renamed into its place: a crash between the two leaves
   * the replacement alone in `.replacing/`, which the next start promotes (`resume`); a crash
   * before leaves the old index answering and the replacement resuming. Readers notice the new file
   * by its inode (IndexCatalog) and reopen it.
   */
  promote(key: string, staged?: string): void {
    const replacement = this.byKey.get(key);
    const old = this.host.answering.get(key);
    const target = path.join(this.host.directory, indexFileName((replacement ?? old)?.name ?? key));
    if (replacement) {
      this.byKey.delete(key);
      this.host.unload(replacement);
    }
    if (old) {
      this.host.answering.delete(key);
      this.host.unload(old);
    }
    const incoming = staged ?? replacement?.file;
    if (incoming === undefined) {
      removeIndexFiles(target);
    } else {
      // Renamed over the old file, not after removing it: queries open the file by its name at any moment,
      // and a rename replaces it at once, so they find the old index or the new one, never none (removed
      // first, a query in between answered 404 IndexNotFound: a flood of changed definitions showed it).
      removeIndexSidecars(target);
      if (staged !== undefined && replacement) removeIndexFiles(replacement.file);
      if (staged === undefined && replacement) fs.rmSync(markerFileOf(replacement.file), { force: true });
      fs.renameSync(incoming, target);
    }
    this.host.answering.set(...this.host.load(target));
  }

  /** Forgets every replacement (the indexer closes, having unloaded them). */
  clear(): void {
    this.byKey.clear();
  }
}
