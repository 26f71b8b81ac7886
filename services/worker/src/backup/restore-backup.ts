// Restores a database from a backup chain (a full backup and the incremental ones after it, up to
// the one asked for) into a new database directory:
//
// 1. every manifest of the chain is authenticated and linked to the one before it (id, manifest
//    hash, generation, transaction positions);
// 2. every file's stored SHA-256 is checked — all of them, before anything is decrypted;
// 3. the files are decrypted (each chunk authenticated) and decompressed into a scratch directory
//    laid out as a mirror, their plaintext SHA-256 checked again;
// 4. the engine's own restore replays it (`restoreDatabase`, point in time with `until`), which
//    builds the file aside and renames it into place only when complete.
//
// A tampered or truncated backup is refused with BackupCorrupt, one sealed under another key with
// BackupKeyMismatch; in both cases the target directory is left without a database.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Database, restoreDatabase, StagedMirror } from '@rookery/engine';
import { RookeryError } from '@rookery/protocol';
import type { BackupStorage } from '../storage/backup-storage.js';
import { BackupCatalog } from './backup-catalog.js';
import type { BackupKey } from './backup-key.js';
import { type BackupManifest, corrupt, type ManifestFile } from './manifest.js';
import { digestStream, openFile } from './sealed-file.js';

export interface RestoreProgress {
  phase: 'verifying' | 'decrypting' | 'replaying';
  /** Bytes read from the backup storage (every file is read twice: checked, then decrypted). */
  bytesRead: number;
  bytesToRead: number;
}

export interface RestoreRequest {
  tenantId: string;
  /** The backed-up database. */
  database: string;
  /** Default: the database's latest backup. */
  backupId?: string | undefined;
  /** Restore the state as of this time (ms since the epoch); default: the end of the backup. */
  until?: number | undefined;
  storage: BackupStorage;
  key: BackupKey;
  /** The new database's directory; it must not hold a database. */
  targetDirectory: string;
  /** Where the decrypted files are laid out meanwhile (removed afterwards). */
  scratchDirectory: string;
  signal?: AbortSignal;
  onProgress?: (progress: Readonly<RestoreProgress>) => void;
}

export interface RestoreOutcome {
  /** The backups replayed, the full one first. */
  chain: string[];
  /** The restored database's last transaction and when it committed (null: the snapshot's state). */
  txid: number;
  committedAt: number | null;
  transactionsReplayed: number;
  stoppedBy: 'end' | 'until' | 'gap';
  /** Indexes placed from the backup's index snapshots, and those left for the tenant to rebuild. */
  indexes: { restored: string[]; rebuilt: string[] };
  bytesRead: number;
}

export async function restoreBackup(request: RestoreRequest): Promise<RestoreOutcome> {
  if (Database.exists(request.targetDirectory)) {
    throw new RookeryError(
      'DatabaseAlreadyExists',
      `A database "${path.basename(request.targetDirectory)}" already exists; restore into a new database.`,
    );
  }
  const catalog = new BackupCatalog(request.storage, request.tenantId, request.database);
  const chain = await loadChain(catalog, request.key, request.backupId);
  const files = chain.flatMap((manifest) => manifest.files.map((file) => ({ manifest, file })));
  const progress: RestoreProgress = {
    phase: 'verifying',
    bytesRead: 0,
    bytesToRead: 2 * files.reduce((sum, { file }) => sum + file.storedBytes, 0),
  };
  const counted = (source: AsyncIterable<Buffer>) => countReads(source, progress, request);

  for (const { manifest, file } of files) {
    const where = `${catalog.describe(manifest.id)}, file ${file.name}`;
    const stored = await digestStream(counted(readListed(catalog, manifest, file)));
    if (stored.bytes !== file.storedBytes || stored.sha256 !== file.storedSha256) {
      throw corrupt(where, "its checksum does not match the manifest's (it was altered or cut short)");
    }
  }

  progress.phase = 'decrypting';
  const scratch = path.join(request.scratchDirectory, `restore-${randomBytes(6).toString('hex')}`);
  try {
    const full = chain[0]!;
    const staged = new StagedMirror(scratch, full.generation);
    for (const { manifest, file } of files) {
      const index = manifest.indexes.find((i) => i.in === undefined && i.file === file.name);
      const destination = index
        ? staged.indexSnapshotPath(index)
        : file.name === 'snapshot.rkb'
          ? staged.snapshotPath(full.snapshot.txid, full.snapshot.takenAt)
          : staged.segmentPath(manifest.afterTxid + 1);
      await decryptTo(catalog, manifest, file, destination, request.key, counted);
    }
    progress.phase = 'replaying';
    request.onProgress?.(progress);
    request.signal?.throwIfAborted();
    const restored = restoreDatabase(scratch, request.targetDirectory, { until: request.until });
    const last = chain.at(-1)!;
    if (request.until === undefined && restored.txid !== last.position.txid) {
      fs.rmSync(request.targetDirectory, { recursive: true, force: true });
      throw corrupt(
        catalog.describe(last.id),
        `it should end at transaction ${last.position.txid} but replays to ${restored.txid}`,
      );
    }
    return {
      chain: chain.map((m) => m.id),
      txid: restored.txid,
      committedAt: restored.committedAt,
      transactionsReplayed: restored.transactionsReplayed,
      stoppedBy: restored.stoppedBy,
      indexes: {
        restored: restored.indexes.restored.map((i) => i.name),
        rebuilt: restored.indexes.rebuilt,
      },
      bytesRead: progress.bytesRead,
    };
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

/** The chain ending at `backupId` (default: the latest), full backup first, every link checked. */
async function loadChain(
  catalog: BackupCatalog,
  key: BackupKey,
  backupId?: string,
): Promise<BackupManifest[]> {
  const { complete } = await catalog.list();
  const id = backupId ?? complete.at(-1)?.id;
  if (!id || !complete.some((b) => b.id === id)) {
    throw new RookeryError(
      'BackupNotFound',
      id
        ? `There is no complete backup ${id} of ${catalog.tenantId}/${catalog.database}; list the backups and pick one that completed.`
        : `There is no backup of ${catalog.tenantId}/${catalog.database}; back it up before restoring it.`,
      { database: catalog.database, ...(id ? { backupId: id } : {}) },
    );
  }
  let current = await catalog.manifest(id, key);
  const chain = [current.manifest];
  while (current.manifest.parent) {
    const child = current.manifest;
    const reference = child.parent!;
    const where = catalog.describe(child.id);
    // Ids grow with time and a parent is always older: this also rules out loops.
    if (reference.id >= child.id || !complete.some((b) => b.id === reference.id)) {
      throw corrupt(where, `it continues backup ${reference.id}, which is missing`);
    }
    current = await catalog.manifest(reference.id, key);
    const parent = current.manifest;
    if (current.manifestSha256 !== reference.manifestSha256) {
      throw corrupt(where, `it continues backup ${reference.id}, but that backup was replaced since`);
    }
    if (
      parent.generation !== child.generation ||
      parent.position.txid !== child.afterTxid ||
      parent.snapshot.txid !== child.snapshot.txid
    ) {
      throw corrupt(where, `it does not continue where backup ${reference.id} ends`);
    }
    chain.unshift(parent);
  }
  return chain;
}

function readListed(
  catalog: BackupCatalog,
  manifest: BackupManifest,
  file: ManifestFile,
): AsyncIterable<Buffer> {
  const where = `${catalog.describe(manifest.id)}, file ${file.name}`;
  const source = catalog.storage.read(catalog.keyOf(manifest.id, file.name));
  return (async function* () {
    try {
      yield* source;
    } catch (error) {
      if (error instanceof RookeryError && error.code === 'BackupNotFound') {
        throw corrupt(where, 'the manifest lists it but it is missing');
      }
      throw error;
    }
  })();
}

async function decryptTo(
  catalog: BackupCatalog,
  manifest: BackupManifest,
  file: ManifestFile,
  destination: string,
  key: BackupKey,
  counted: (source: AsyncIterable<Buffer>) => AsyncIterable<Buffer>,
): Promise<void> {
  const where = `${catalog.describe(manifest.id)}, file ${file.name}`;
  const plaintext = openFile(counted(readListed(catalog, manifest, file)), {
    key,
    place: `${manifest.id}/${file.name}`,
    describe: where,
  });
  const handle = await fs.promises.open(destination, 'w');
  let digest: { sha256: string; bytes: number };
  try {
    digest = await digestStream(
      (async function* () {
        for await (const piece of plaintext) {
          await handle.write(piece);
          yield piece;
        }
      })(),
    );
  } finally {
    await handle.close();
  }
  if (digest.bytes !== file.plainBytes || digest.sha256 !== file.plainSha256) {
    throw corrupt(where, 'its contents do not match the checksum the backup recorded');
  }
}

async function* countReads(
  source: AsyncIterable<Buffer>,
  progress: RestoreProgress,
  request: RestoreRequest,
): AsyncGenerator<Buffer> {
  for await (const piece of source) {
    request.signal?.throwIfAborted();
    progress.bytesRead += piece.length;
    request.onProgress?.(progress);
    yield piece;
  }
}
