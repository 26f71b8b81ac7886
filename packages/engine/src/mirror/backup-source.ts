// The mirror as backups see it. Backups are made from the mirror (so they never compete with the
// tenant's own disk) by the worker fleet, which knows nothing of the mirror's layout: it asks this
// module for a database's newest snapshot and for the transactions after a position, and, to
// restore, for a directory laid out as a mirror that `restoreDatabase` reads back.
import fs from 'node:fs';
import path from 'node:path';
import { RookeryError } from '@rookery/protocol';
import { walkChain } from './chain.js';
import { type IndexSnapshotManifest, stageIndexSnapshot } from './index-snapshots.js';
import {
  generationDir,
  listGenerations,
  listSegments,
  listSnapshots,
  SEGMENTS_DIR,
  SNAPSHOTS_DIR,
  segmentFileName,
  snapshotFileName,
} from './layout.js';
import { RECORD_HEADER_BYTES } from './record.js';

/** A snapshot on the mirror: the file and the transaction it holds the database up to. */
export interface MirrorSnapshot {
  generation: string;
  file: string;
  txid: number;
  takenAt: number;
  bytes: number;
}

/** The newest snapshot of the newest generation that has one, or null when nothing is mirrored yet. */
export function newestMirrorSnapshot(mirrorDirectory: string): MirrorSnapshot | null {
  const generations = listGenerations(mirrorDirectory);
  for (let i = generations.length - 1; i >= 0; i--) {
    const directory = generationDir(mirrorDirectory, generations[i]!);
    const snapshot = listSnapshots(directory).at(-1);
    if (!snapshot) continue;
    const file = path.join(directory, SNAPSHOTS_DIR, snapshot.file);
    return {
      generation: generations[i]!,
      file,
      txid: snapshot.txid,
      takenAt: snapshot.takenAt,
      bytes: size(file),
    };
  }
  return null;
}

/** The newest generation of a mirrored database (null: none), so a backup chain knows when it was broken. */
export function newestMirrorGeneration(mirrorDirectory: string): string | null {
  return listGenerations(mirrorDirectory).at(-1) ?? null;
}

/** A run of consecutive transactions read from a generation's segments. */
export interface TransactionRun {
  /** Whole records (header and payload) in transaction order, exactly as the segments hold them. */
  records: Buffer[];
  /** The last transaction of the run (the starting position when it is empty). */
  lastTxid: number;
  /** When that transaction committed (null when the run is empty). */
  lastCommittedAt: number | null;
  /** Sum of the records' lengths. */
  bytes: number;
  /**
   * Bytes of the records read: those returned and the one a run stopped before (read again by the
   * next run). The chain walker's own count is whole segment files, which over-counts a segment a
   * run only looked into.
   */
  bytesRead: number;
  /** `end`: nothing more is mirrored yet; `gap`: the next transaction is not on the mirror; `full`: `maxBytes` reached, read on. */
  stoppedBy: 'end' | 'gap' | 'full';
}

/**
 * Transactions of a generation after `afterTxid`, in order, unbroken, until at least `maxBytes`
 * were collected and a segment ends. Call again from `lastTxid` for the next run: a caller streams
 * a generation of any size in memory bounded by `maxBytes` plus a segment, yielding between runs.
 * Runs end where a segment starts because the chain walker reads a segment from its beginning:
 * a run that stopped mid-segment would make the next one read that segment's first part again.
 */
export function readTransactionRun(
  mirrorDirectory: string,
  generation: string,
  afterTxid: number,
  maxBytes: number,
): TransactionRun {
  const records: Buffer[] = [];
  let bytes = 0;
  let lastCommittedAt: number | null = null;
  const directory = generationDir(mirrorDirectory, generation);
  const segmentStarts = new Set(listSegments(directory).map((segment) => segment.firstTxid));
  let bytesRead = 0;
  const walk = walkChain(directory, afterTxid, ({ header, payload }) => {
    bytesRead += RECORD_HEADER_BYTES + payload.length;
    if (bytes >= maxBytes && segmentStarts.has(header.txid)) return false;
    // The segment reader reads each record whole into one buffer and hands out its payload as a
    // view of it: the header sits right before, in the same memory.
    const record = Buffer.from(
      payload.buffer,
      payload.byteOffset - RECORD_HEADER_BYTES,
      RECORD_HEADER_BYTES + payload.length,
    );
    records.push(record);
    bytes += record.length;
    lastCommittedAt = header.committedAt;
    return true;
  });
  return {
    records,
    lastTxid: walk.lastTxid,
    lastCommittedAt,
    bytes,
    bytesRead,
    stoppedBy: walk.stoppedBy === 'stopped' ? 'full' : walk.stoppedBy,
  };
}

/** Bytes of the segment files that may hold transactions after `afterTxid` (what a backup will read, about). */
export function segmentBytesAfter(mirrorDirectory: string, generation: string, afterTxid: number): number {
  const directory = generationDir(mirrorDirectory, generation);
  const segments = listSegments(directory);
  let total = 0;
  segments.forEach((segment, i) => {
    const next = segments[i + 1];
    if (!next || next.firstTxid > afterTxid + 1)
      total += size(path.join(directory, SEGMENTS_DIR, segment.file));
  });
  return total;
}

/**
 * A directory laid out as a mirror holding one generation, for files coming back from a backup:
 * its snapshot and runs of transactions (each run a segment named by its first transaction).
 * `restoreDatabase(directory, …)` then restores from it as from the real mirror.
 */
export class StagedMirror {
  private readonly generationDirectory: string;

  constructor(
    readonly directory: string,
    generation: string,
  ) {
    if (path.basename(generation) !== generation || generation.startsWith('.')) {
      throw new RookeryError('MirrorCorrupt', `"${generation}" cannot name a mirror generation`);
    }
    this.generationDirectory = generationDir(directory, generation);
    fs.mkdirSync(path.join(this.generationDirectory, SNAPSHOTS_DIR), { recursive: true });
    fs.mkdirSync(path.join(this.generationDirectory, SEGMENTS_DIR), { recursive: true });
    if (!listGenerations(directory).includes(generation)) {
      throw new RookeryError('MirrorCorrupt', `"${generation}" is not the name of a mirror generation`);
    }
  }

  snapshotPath(txid: number, takenAt: number): string {
    return path.join(this.generationDirectory, SNAPSHOTS_DIR, snapshotFileName(txid, takenAt));
  }

  /** Where an index snapshot from a backup goes (its manifest is written here; the restore verifies its checksum). */
  indexSnapshotPath(manifest: IndexSnapshotManifest): string {
    return stageIndexSnapshot(this.generationDirectory, manifest);
  }

  segmentPath(firstTxid: number): string {
    return path.join(this.generationDirectory, SEGMENTS_DIR, segmentFileName(firstTxid));
  }
}

function size(file: string): number {
  try {
    return fs.statSync(file).size;
  } catch {
    return 0; // pruned meanwhile
  }
}
