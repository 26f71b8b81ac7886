import fs from 'node:fs';
import path from 'node:path';
import { type IndexDefinition, IndexDefinitionSchema, RookeryError } from '@rookery/protocol';
import BetterSqlite3 from 'better-sqlite3';
import { walkChain } from './chain.js';
import { type IndexRestoreOutcome, lineageOf, restoreIndexSnapshots } from './index-snapshots.js';
import {
  fsyncFile,
  generationDir,
  listGenerations,
  listSnapshots,
  readParent,
  SNAPSHOTS_DIR,
  type SnapshotEntry,
  syncDirectory,
  writeLocalState,
} from './layout.js';
import { Replayer } from './replay.js';
import { readTxid } from './snapshot.js';

export interface RestoreOptions {
  /** Restore the state as of this time (ms since the epoch): the last transaction committed at or before it. Default: the latest. */
  until?: number;
  /**
   * Restore index files from the mirror's index snapshots (default true): each index from the newest
   * snapshot of its current definition the restored state can use (index-snapshots.ts); the others
   * are rebuilt by the tenant from their definitions. False: every index is rebuilt.
   */
  indexes?: boolean;
}

export interface RestoreResult {
  generation: string;
  snapshotTxid: number;
  /** The restored database's last transaction. */
  txid: number;
  /** When that transaction committed (null when the snapshot itself is the restored state). */
  committedAt: number | null;
  transactionsReplayed: number;
  /** Snapshot and segment bytes read from the mirror. */
  bytesRead: number;
  /** `end`: everything mirrored; `until`: stopped at the requested time; `gap`: a transaction is missing from the mirror, so nothing after it could be applied. */
  stoppedBy: 'end' | 'until' | 'gap';
  /** Which index files came from snapshots and which are left to be rebuilt. */
  indexes: IndexRestoreOutcome;
}

const DOCS_FILE = 'docs.db';
/** Replayed transactions per SQLite transaction: the restore is all-or-nothing anyway (written aside, then renamed). */
const REPLAY_BATCH = 1_000;

/**
 * Rebuilds a database from its mirror into `targetDirectory` (which must not hold one): the newest
 * snapshot at or before the requested time, in the highest placement epoch's lineage (see findBase),
 * then every mirrored transaction after it, in order, up to that time. Each transaction is replayed whole, so the result is the state right after one
 * committed transaction — a state that existed. The file is built aside and renamed into place
 * only when complete; mirror.json records which generation it continues.
 */
export function restoreDatabase(
  mirrorDirectory: string,
  targetDirectory: string,
  options: RestoreOptions = {},
): RestoreResult {
  const target = path.join(targetDirectory, DOCS_FILE);
  if (fs.existsSync(target)) {
    throw new RookeryError(
      'DatabaseAlreadyExists',
      `${targetDirectory} already holds a database; restore into an empty directory`,
    );
  }
  const until = options.until ?? Number.POSITIVE_INFINITY;
  const base = findBase(mirrorDirectory, until);
  const generationDirectory = generationDir(mirrorDirectory, base.generation);
  fs.mkdirSync(targetDirectory, { recursive: true });
  const building = `${target}.restoring`;
  for (const suffix of ['', '-journal', '-wal', '-shm']) fs.rmSync(building + suffix, { force: true });
  fs.copyFileSync(path.join(generationDirectory, SNAPSHOTS_DIR, base.snapshot.file), building);
  let bytesRead = fs.statSync(building).size;

  const sqlite = new BetterSqlite3(building, { fileMustExist: true });
  let result: Omit<RestoreResult, 'indexes'>;
  let definitions: IndexDefinition[];
  try {
    // Nothing here needs to survive a crash: an interrupted restore is started again from scratch.
    sqlite.pragma('journal_mode = OFF');
    sqlite.pragma('synchronous = OFF');
    const schema = sqlite.pragma('user_version', { simple: true }) as number;
    const snapshotTxid = readTxid(sqlite);
    if (snapshotTxid !== base.snapshot.txid) {
      throw new RookeryError(
        'MirrorCorrupt',
        `Snapshot ${base.snapshot.file} holds transaction ${snapshotTxid}, not the ${base.snapshot.txid} its name says`,
      );
    }
    const replayer = new Replayer(sqlite);
    let replayed = 0;
    let committedAt: number | null = null;
    sqlite.exec('BEGIN');
    const walk = walkChain(generationDirectory, snapshotTxid, ({ header, payload }) => {
      if (header.txid > base.maxTxid) return false;
      if (header.committedAt > until) return false;
      if (header.schema !== schema) {
        throw new RookeryError(
          'MirrorCorrupt',
          `Transaction ${header.txid} was written with schema ${header.schema} but its snapshot has ${schema}`,
        );
      }
      replayer.apply(payload);
      replayed++;
      committedAt = header.committedAt;
      if (replayed % REPLAY_BATCH === 0) sqlite.exec('COMMIT; BEGIN');
      return true;
    });
    sqlite.exec('COMMIT');
    bytesRead += walk.bytesRead;
    const txid = readTxid(sqlite);
    if (txid !== walk.lastTxid) {
      throw new RookeryError(
        'MirrorCorrupt',
        `After replaying up to transaction ${walk.lastTxid} the database says it is at ${txid}`,
      );
    }
    definitions = (
      sqlite.prepare('SELECT definition FROM index_definitions ORDER BY name_lower').all() as {
        definition: string;
      }[]
    ).map((row) => IndexDefinitionSchema.parse(JSON.parse(row.definition)));
    result = {
      generation: base.generation,
      snapshotTxid,
      txid,
      committedAt,
      transactionsReplayed: replayed,
      bytesRead,
      // Stopping at the branch point of a newer owner is the end of this lineage, not a time limit.
      stoppedBy: walk.stoppedBy !== 'stopped' ? walk.stoppedBy : txid === base.maxTxid ? 'end' : 'until',
    };
  } catch (error) {
    sqlite.close();
    fs.rmSync(building, { force: true });
    throw error;
  }
  sqlite.close();
  fsyncFile(building);
  // Index files first: docs.db renamed into place is what marks the restore complete, so a crash
  // before it starts the whole restore again and index files are placed again.
  const indexes: IndexRestoreOutcome =
    options.indexes === false
      ? { restored: [], rebuilt: definitions.map((d) => d.Name), skipped: [] }
      : restoreIndexSnapshots(
          mirrorDirectory,
          lineageOf(mirrorDirectory, base.generation, result.txid),
          targetDirectory,
          definitions,
        );
  // The txid tells a new owner where it branches off this generation (see MirrorShipper.startOrContinue).
  writeLocalState(targetDirectory, { generation: base.generation, txid: result.txid });
  fs.renameSync(building, target);
  syncDirectory(targetDirectory);
  return { ...result, indexes };
}

/**
 * Where a restore starts: the newest snapshot taken at or before `until`, searching generations
 * newest first — and names order generations by placement epoch first, so the highest epoch's
 * lineage wins whatever the clocks say. A generation a new owner started but has no usable
 * snapshot yet stands for its parent's state at the branch point: the search goes on in the parent
 * generation only, and only up to that transaction, so what an older (fenced) owner appended after
 * the new owner took over is never restored. `maxTxid` is that limit (infinite without a branch).
 */
function findBase(
  mirrorDirectory: string,
  until: number,
): { generation: string; snapshot: SnapshotEntry; maxTxid: number } {
  const generations = listGenerations(mirrorDirectory);
  let anySnapshot = false;
  let branch: { generation: string; txid: number } | null = null;
  for (let i = generations.length - 1; i >= 0; i--) {
    const generation = generations[i]!;
    if (branch && generation !== branch.generation) continue;
    const maxTxid = branch?.txid ?? Number.POSITIVE_INFINITY;
    const directory = generationDir(mirrorDirectory, generation);
    const snapshots = listSnapshots(directory);
    anySnapshot ||= snapshots.length > 0;
    const usable = snapshots.filter((s) => s.takenAt <= until && s.txid <= maxTxid);
    const snapshot = usable[usable.length - 1];
    if (snapshot) return { generation, snapshot, maxTxid };
    branch = readParent(directory);
  }
  if (!anySnapshot) {
    throw new RookeryError(
      'MirrorNotFound',
      `${mirrorDirectory} holds no snapshot of a database to restore from`,
    );
  }
  throw new RookeryError(
    'RestorePointUnavailable',
    `The mirror has no snapshot taken at or before ${new Date(until).toISOString()}; the earliest restorable point is later (older history was pruned)`,
  );
}
