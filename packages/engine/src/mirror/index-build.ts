// Building an index away from the host (issue [10]): a worker restores the database from the mirror
// into its own scratch directory — it reads the mirror, never the host's disk — builds the index file
// there with the same engine code the tenant's indexer runs, and writes it to the mirror as an index
// snapshot (index-snapshots.ts: the same format, labels and atomic write as the indexer's copies).
// The tenant's indexer then adopts it (indexing/index-adoption.ts) and catches up with what was
// written after the restored transaction.
//
// Nothing half-built can reach the mirror: the snapshot is taken only once the build reached the
// restored state's last etag, and a snapshot directory appears only by a rename of a complete one.
// A worker that dies mid-build leaves its scratch directory (removed by the next build there) and at
// most an unfinished dot-directory on the mirror, which listings skip and pruning removes.
import fs from 'node:fs';
import path from 'node:path';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { type IndexDefinition, RookeryError } from '@rookery/protocol';
import { DatabaseIndexer } from '../indexing/database-indexer.js';
import { INDEXES_DIRECTORY, indexFileName, openIndexFile } from '../indexing/index-file.js';
import type { SandboxLimits } from '../indexing/sandbox/index.js';
import { type IndexSnapshotEntry, takeIndexSnapshot } from './index-snapshots.js';
import { generationDir } from './layout.js';
import { restoreDatabase } from './restore.js';

export interface IndexBuildProgress {
  phase: 'restore' | 'index' | 'snapshot';
  /** The restored database's last etag: the build is done when `lastEtag` reaches it. */
  targetEtag: number;
  lastEtag: number;
  documents: number;
}

export interface BuildIndexOptions {
  /** The database's directory on the mirror (`<ROOKERY_MIRROR>/<tenant>/<database>`): read, and the snapshot written there. */
  mirrorDirectory: string;
  /** The worker's own room for the restored database; a directory per build is made (and removed) in it. */
  scratchDirectory: string;
  definition: IndexDefinition;
  /** The build's label (the indexer asked for this one and adopts only it). */
  build: string;
  batchSize?: number;
  sandbox?: Partial<SandboxLimits>;
  /** Called after every batch; awaited, so a caller can report it or slow the build down. */
  onProgress?: (progress: IndexBuildProgress) => void | Promise<void>;
  signal?: AbortSignal;
  now?: () => number;
}

export interface IndexBuildOutcome {
  snapshot: IndexSnapshotEntry;
  generation: string;
  documents: number;
}

/** Restores, builds and writes the snapshot; rejects (leaving no snapshot) if anything fails or `signal` aborts. */
export async function buildIndexOnMirror(options: BuildIndexOptions): Promise<IndexBuildOutcome> {
  const { definition } = options;
  fs.mkdirSync(options.scratchDirectory, { recursive: true });
  // One directory per index of a database: a retry after a killed attempt clears that attempt's leftovers.
  const scratch = path.join(
    options.scratchDirectory,
    `index-build-${indexFileName(definition.Name).slice(0, -'.db'.length)}-${path.basename(options.mirrorDirectory)}`,
  );
  fs.rmSync(scratch, { recursive: true, force: true });
  try {
    await options.onProgress?.({ phase: 'restore', targetEtag: 0, lastEtag: 0, documents: 0 });
    // The build reads the restored docs.db, never an index copy: `indexes: false`.
    const restored = restoreDatabase(options.mirrorDirectory, scratch, { indexes: false });
    const indexer = new DatabaseIndexer(scratch, {
      ...(options.batchSize === undefined ? {} : { batchSize: options.batchSize }),
      ...(options.sandbox === undefined ? {} : { sandbox: options.sandbox }),
    });
    let documents = 0;
    let targetEtag = 0;
    try {
      indexer.put(definition);
      targetEtag = indexer.documentsLastEtag();
      for (;;) {
        if (options.signal?.aborted) throw abortedError(definition.Name);
        const progress = indexer.runOnce();
        if (progress.length === 0) break;
        const step = progress[0]!;
        if (step.errors > 0 && step.documents === 0) {
          throw new RookeryError(
            'IndexBuildFailed',
            `The build of index ${definition.Name} stopped at etag ${step.lastEtag}: a batch failed ` +
              `(${indexer.stats(definition.Name)?.Errors[0]?.Error ?? 'no detail'}); fix the definition and put it again`,
          );
        }
        documents += step.documents;
        await options.onProgress?.({ phase: 'index', targetEtag, lastEtag: step.lastEtag, documents });
        await nextTurn(); // lets an abort or a lease's end through between batches
      }
    } finally {
      indexer.close();
    }
    await options.onProgress?.({ phase: 'snapshot', targetEtag, lastEtag: targetEtag, documents });
    const file = path.join(scratch, INDEXES_DIRECTORY, indexFileName(definition.Name));
    const db = openIndexFile(file);
    try {
      const snapshot = await takeIndexSnapshot(db, {
        generationDirectory: generationDir(options.mirrorDirectory, restored.generation),
        // The restored state's own transaction: every batch was read from it (see index-snapshots.ts).
        docsTxid: () => restored.txid,
        now: options.now ?? Date.now,
        build: options.build,
      });
      return { snapshot, generation: restored.generation, documents };
    } finally {
      db.close();
    }
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

function abortedError(name: string): RookeryError {
  return new RookeryError(
    'IndexBuildFailed',
    `The build of index ${name} was stopped before it was complete`,
  );
}
