// Adopting an index a worker built from the mirror (mirror/index-build.ts). The indexer, the index
// file's only writer, looks for a snapshot of the index's definition that the database's current
// state may use, with exactly restore's choice rules (restoreIndexSnapshots: the lineage of the
// generation the local docs.db continues up to its transaction now, the same definition hash,
// SHA-256 and the copy's own definition and etag checked), placed in a staging directory. It is
// caught up there with what was written since the worker's restored state, and only then swapped
// in: the index never goes backwards, and a snapshot of another definition, a damaged one or a
// half-written one is never taken.
import { randomUUID } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import type { IndexDefinition } from '@rookery/protocol';
import type BetterSqlite3 from 'better-sqlite3';
import { lineageOf, restoreIndexSnapshots, type SkippedIndexSnapshot } from '../mirror/index-snapshots.js';
import { readLocalState } from '../mirror/layout.js';
import { BatchPreparer } from './batch-preparer.js';
import type { DocumentSource } from './document-source.js';
import { INDEXES_DIRECTORY, indexFileName, openIndexFile } from './index-file.js';
import { IndexWriter } from './index-writer.js';
import type { SandboxLimits } from './sandbox/index.js';

/** Where a snapshot waits, in the database's directory, until it has caught up. */
export const ADOPTING_DIRECTORY = '.adopting';

export interface StagedIndex {
  file: string;
  /** The etag the snapshot covers (where its catching up starts). */
  etag: number;
  skipped: SkippedIndexSnapshot[];
}

/**
 * Places the newest snapshot of `definition` the database's current state may use in the staging
 * directory; null when there is none (the build is not finished, or the database is not mirrored).
 * Only the snapshot of the build asked for is taken (never an older copy of a reset index).
 */
export function stageIndexSnapshot(
  mirrorDirectory: string,
  databaseDirectory: string,
  definition: IndexDefinition,
  docsTxid: number,
  build: string,
): StagedIndex | null {
  const local = readLocalState(databaseDirectory);
  if (!local) return null;
  const staging = path.join(databaseDirectory, ADOPTING_DIRECTORY);
  fs.rmSync(staging, { recursive: true, force: true });
  const outcome = restoreIndexSnapshots(
    mirrorDirectory,
    lineageOf(mirrorDirectory, local.generation, docsTxid),
    staging,
    [definition],
    { build },
  );
  const restored = outcome.restored[0];
  if (!restored) {
    fs.rmSync(staging, { recursive: true, force: true });
    return null;
  }
  return {
    file: path.join(staging, INDEXES_DIRECTORY, indexFileName(definition.Name)),
    etag: restored.etag,
    skipped: outcome.skipped,
  };
}

/**
 * Brings a staged index file up to the database's last etag now, with the indexer's own batch code
 * (on this thread: what is left after a worker's build is the writes of the build's minutes).
 */
export function catchUpStaged(
  file: string,
  definition: IndexDefinition,
  source: DocumentSource,
  batchSize: number,
  sandbox?: Partial<SandboxLimits>,
): number {
  const db = openIndexFile(file);
  const writer = new IndexWriter(db, definition, sandbox);
  const preparer = new BatchPreparer(definition, sandbox);
  try {
    for (;;) {
      const from = writer.lastEtag;
      if (from >= source.lastEtag()) return from;
      const batch = source.readBatch(preparer.collections, from, batchSize, {
        includeArchived: definition.IncludeArchived === true,
      });
      writer.write(preparer.prepare(batch));
      if (writer.lastEtag <= from) return from; // nothing more to read (cannot happen with a consistent source)
    }
  } finally {
    preparer.dispose();
    writer.close();
    db.close();
  }
}

/** The index file's meta key that says a worker builds it (kept across restarts; the adopted file has none). */
const WORKER_BUILD_KEY = 'worker_build';

/** Records in the index file that a worker builds it, under a new build label. */
export function markAwaitingBuild(db: BetterSqlite3.Database): string {
  const build = randomUUID();
  db.prepare('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)').run(WORKER_BUILD_KEY, build);
  return build;
}

/** The worker build an index file awaits (its label), or null: built here (also what stats read). */
export function awaitedBuildOf(db: BetterSqlite3.Database): string | null {
  const row = db.prepare('SELECT value FROM meta WHERE key = ?').get(WORKER_BUILD_KEY) as
    | { value: string }
    | undefined;
  return row === undefined ? null : String(row.value);
}
