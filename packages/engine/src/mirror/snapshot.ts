import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { RookeryError } from '@rookery/protocol';
import BetterSqlite3 from 'better-sqlite3';
import { TXID_META_KEY } from '../write-transaction.js';
import { fsyncFile, SNAPSHOTS_DIR, type SnapshotEntry, snapshotFileName, syncDirectory } from './layout.js';

/**
 * Copies the live database into `file` (SQLite's online backup from the writer's own connection);
 * gives up when `aborted()` turns true (the database is closing).
 */
export type BackupTo = (file: string, aborted: () => boolean) => Promise<void>;

/**
 * Takes a snapshot into a generation: an online backup of the live database (which stays
 * writable: the backup runs in steps between transactions, and a write on the same connection is
 * carried into the copy), then, once complete, its position is read from the copy itself — the
 * transaction number every transaction stores in docs.db — so a snapshot always says exactly which
 * transactions it holds. Written aside and renamed: a snapshot file is complete or absent.
 */
export async function takeSnapshot(
  backupTo: (file: string) => Promise<void>,
  generationDirectory: string,
  now: () => number,
): Promise<SnapshotEntry & { bytes: number }> {
  const directory = path.join(generationDirectory, SNAPSHOTS_DIR);
  fs.mkdirSync(directory, { recursive: true });
  const temporary = path.join(directory, `.${randomBytes(6).toString('hex')}.tmp`);
  try {
    await backupTo(temporary);
    const txid = sealSnapshotFile(temporary);
    fsyncFile(temporary);
    const takenAt = now();
    const file = snapshotFileName(txid, takenAt);
    fs.renameSync(temporary, path.join(directory, file));
    syncDirectory(directory);
    return { file, txid, takenAt, bytes: fs.statSync(path.join(directory, file)).size };
  } finally {
    for (const suffix of ['', '-journal', '-wal', '-shm']) fs.rmSync(temporary + suffix, { force: true });
  }
}

/**
 * Reads the snapshot's transaction number and turns it into a self-contained single file
 * (rollback journal mode): a restore copies one file, and reading it leaves no -wal beside it.
 */
export function sealSnapshotFile(file: string): number {
  const sqlite = new BetterSqlite3(file, { fileMustExist: true });
  try {
    const txid = readTxid(sqlite);
    sqlite.pragma('journal_mode = DELETE');
    return txid;
  } finally {
    sqlite.close();
  }
}

export function readTxid(sqlite: BetterSqlite3.Database): number {
  const row = sqlite.prepare('SELECT value FROM meta WHERE key = ?').get(TXID_META_KEY) as
    | { value: string }
    | undefined;
  const txid = Number(row?.value ?? 0);
  if (!Number.isSafeInteger(txid) || txid < 0)
    throw new RookeryError('MirrorCorrupt', `The snapshot's transaction number "${row?.value}" is not valid`);
  return txid;
}

/** Removes temporary files of snapshots a crash interrupted. */
export function removeUnfinishedSnapshots(generationDirectory: string): void {
  const directory = path.join(generationDirectory, SNAPSHOTS_DIR);
  let names: string[];
  try {
    names = fs.readdirSync(directory);
  } catch {
    return;
  }
  for (const name of names) if (name.startsWith('.')) fs.rmSync(path.join(directory, name), { force: true });
}
