// Makes one backup of one database from its mirror (never from the tenant's own files):
//
// - full: the newest snapshot on the mirror and every transaction after it;
// - incremental: the transactions since the latest backup's position, chained to that backup by
//   its id and the hash of its manifest. It is made full instead when it cannot continue the
//   chain: no earlier backup, a new mirror generation (the chain of transactions was broken), the
//   mirror no longer holding the next transaction, or the chain already long enough.
//
// Files are streamed: read from the mirror (at a capped rate), compressed, encrypted, written; the
// manifest is written last, so a backup interrupted anywhere is simply incomplete, and the next
// attempt deletes it and starts over.
import fs from 'node:fs';
import { setImmediate as yieldToLoop } from 'node:timers/promises';
import {
  indexSnapshotFile,
  indexSnapshotsForBackup,
  newestMirrorGeneration,
  newestMirrorSnapshot,
  readTransactionRun,
  segmentBytesAfter,
  type TransactionRun,
} from '@rookery/engine';
import { type BackupKind, RookeryError } from '@rookery/protocol';
import type { BackupStorage } from '../storage/backup-storage.js';
import { BackupCatalog, type DatabaseBackups, MANIFEST_FILE, newBackupId } from './backup-catalog.js';
import type { BackupKey } from './backup-key.js';
import {
  type BackupFileName,
  type BackupManifest,
  indexBackupFileName,
  type ManifestFile,
  sealManifest,
  type VerifiedManifest,
} from './manifest.js';
import { ReadRateLimit } from './rate-limit.js';
import { CHUNK_BYTES, sealFile } from './sealed-file.js';

/** Transactions read from the mirror per step (and held in memory at once). */
const RUN_BYTES = 4 << 20;

export interface BackupSettings {
  /** zstd level, 1–19. */
  compressionLevel: number;
  /** Cap on reading the mirror, bytes per second (0: none). */
  readBytesPerSecond: number;
  /** Incremental backups after a full one before the next backup is made full. */
  maxChainLength: number;
}

export const DEFAULT_BACKUP_SETTINGS: BackupSettings = {
  compressionLevel: 3,
  readBytesPerSecond: 0,
  maxChainLength: 30,
};

export interface BackupProgress {
  backupId: string;
  kind: BackupKind;
  phase: 'snapshot' | 'transactions' | 'indexes' | 'manifest';
  /** Bytes read from the mirror so far, and about how many this backup will read. */
  bytesRead: number;
  bytesToRead: number;
  /** Bytes written to the backup storage. */
  bytesWritten: number;
  transactions: number;
}

export interface BackupRequest {
  tenantId: string;
  database: string;
  kind: BackupKind;
  /** The database's directory on the mirror: `<mirror>/<tenant>/<database in lower case>`. */
  mirrorDirectory: string;
  storage: BackupStorage;
  key: BackupKey;
  settings?: Partial<BackupSettings>;
  now?: () => number;
  signal?: AbortSignal;
  onProgress?: (progress: Readonly<BackupProgress>) => void;
  /**
   * Carry the index snapshots the mirror holds (default true): a database restored from the backup
   * then gets its indexes from them instead of rebuilding every one (docs/mirror.md, "Index snapshots").
   */
  indexes?: boolean;
}

export interface BackupOutcome {
  /** Null when nothing was written: the database had no transaction since its latest backup. */
  backupId: string | null;
  kind: BackupKind;
  /** Why it is this kind (or why it was skipped). */
  reason: string;
  manifest: BackupManifest | null;
  bytesRead: number;
  bytesWritten: number;
  transactions: number;
}

type Plan =
  | { kind: 'full'; reason: string }
  | { kind: 'incremental'; reason: string; parent: VerifiedManifest; firstRun: TransactionRun }
  | { kind: 'skip'; reason: string };

export async function makeBackup(request: BackupRequest): Promise<BackupOutcome> {
  const settings = { ...DEFAULT_BACKUP_SETTINGS, ...request.settings };
  const now = request.now ?? Date.now;
  const catalog = new BackupCatalog(request.storage, request.tenantId, request.database);
  const backups = await catalog.list();
  // Per-tenant concurrency 1 means no other backup of this database is running: what is
  // incomplete was left by an attempt that died.
  await catalog.removeIncomplete(backups.incomplete);

  const plan = await planBackup(request, catalog, backups, settings);
  if (plan.kind === 'skip') {
    return {
      backupId: null,
      kind: 'incremental',
      reason: plan.reason,
      manifest: null,
      bytesRead: 0,
      bytesWritten: 0,
      transactions: 0,
    };
  }
  const writer = new BackupWriter(request, catalog, settings, newBackupId(now(), plan.kind), plan.kind);
  const manifest =
    plan.kind === 'full' ? await writer.full() : await writer.incremental(plan.parent, plan.firstRun);
  return {
    backupId: manifest.id,
    kind: manifest.kind,
    reason: plan.reason,
    manifest,
    bytesRead: writer.progress.bytesRead,
    bytesWritten: writer.progress.bytesWritten,
    transactions: writer.progress.transactions,
  };
}

async function planBackup(
  request: BackupRequest,
  catalog: BackupCatalog,
  backups: DatabaseBackups,
  settings: BackupSettings,
): Promise<Plan> {
  if (request.kind === 'full') return { kind: 'full', reason: 'a full backup was asked for' };
  const latest = backups.complete.at(-1);
  if (!latest) return { kind: 'full', reason: 'there is no earlier backup to continue' };
  const lastFull = backups.complete.findLastIndex((b) => b.kind === 'full');
  if (lastFull < 0) return { kind: 'full', reason: 'there is no full backup to build on' };
  const chainLength = backups.complete.length - 1 - lastFull;
  if (chainLength >= settings.maxChainLength) {
    return { kind: 'full', reason: `the chain already has ${chainLength} incremental backups` };
  }
  let parent: VerifiedManifest;
  try {
    parent = await catalog.manifest(latest.id, request.key);
  } catch (error) {
    if (!(error instanceof RookeryError)) throw error;
    return {
      kind: 'full',
      reason: `the latest backup cannot be continued (${error.code}: ${error.message})`,
    };
  }
  const generation = newestMirrorGeneration(request.mirrorDirectory);
  if (generation !== parent.manifest.generation) {
    return { kind: 'full', reason: 'the mirror started a new generation since the latest backup' };
  }
  const after = parent.manifest.position.txid;
  const firstRun = readTransactionRun(request.mirrorDirectory, generation, after, RUN_BYTES);
  if (firstRun.records.length === 0) {
    if (firstRun.stoppedBy === 'gap') {
      return { kind: 'full', reason: `the mirror no longer holds transaction ${after + 1}` };
    }
    return { kind: 'skip', reason: `nothing was written since backup ${latest.id}` };
  }
  return { kind: 'incremental', reason: `continues backup ${latest.id}`, parent, firstRun };
}

/** Writes one backup's files and then its manifest, keeping the progress up to date. */
class BackupWriter {
  readonly progress: BackupProgress;
  private readonly limit: ReadRateLimit;
  private readonly files: ManifestFile[] = [];

  constructor(
    private readonly request: BackupRequest,
    private readonly catalog: BackupCatalog,
    private readonly settings: BackupSettings,
    private readonly id: string,
    kind: BackupKind,
  ) {
    this.limit = new ReadRateLimit(settings.readBytesPerSecond);
    this.progress = {
      backupId: id,
      kind,
      phase: 'snapshot',
      bytesRead: 0,
      bytesToRead: 0,
      bytesWritten: 0,
      transactions: 0,
    };
  }

  async full(): Promise<BackupManifest> {
    const { mirrorDirectory } = this.request;
    const snapshot = newestMirrorSnapshot(mirrorDirectory);
    if (!snapshot) {
      throw new RookeryError(
        'MirrorNotFound',
        `Nothing of ${this.request.tenantId}/${this.request.database} is on the mirror yet (no snapshot); back it up once it is mirrored.`,
      );
    }
    // Opened first: pruning may delete the file once a newer snapshot exists; what is open stays readable.
    const handle = await fs.promises.open(snapshot.file, 'r');
    try {
      this.progress.bytesToRead =
        snapshot.bytes + segmentBytesAfter(mirrorDirectory, snapshot.generation, snapshot.txid);
      this.report();
      const source = handle.createReadStream({ highWaterMark: CHUNK_BYTES, autoClose: false });
      await this.writeFile('snapshot.rkb', this.countReads(source));
    } finally {
      await handle.close();
    }
    const firstRun = readTransactionRun(mirrorDirectory, snapshot.generation, snapshot.txid, RUN_BYTES);
    return this.finish({
      kind: 'full',
      parent: null,
      generation: snapshot.generation,
      snapshot: { txid: snapshot.txid, takenAt: snapshot.takenAt },
      afterTxid: snapshot.txid,
      firstRun,
    });
  }

  async incremental(parent: VerifiedManifest, firstRun: TransactionRun): Promise<BackupManifest> {
    const { manifest } = parent;
    this.progress.bytesToRead = segmentBytesAfter(
      this.request.mirrorDirectory,
      manifest.generation,
      manifest.position.txid,
    );
    return this.finish({
      kind: 'incremental',
      parent: { id: manifest.id, manifestSha256: parent.manifestSha256 },
      generation: manifest.generation,
      snapshot: manifest.snapshot,
      afterTxid: manifest.position.txid,
      firstRun,
      parentIndexes: manifest.indexes.map((entry) => ({ ...entry, in: entry.in ?? manifest.id })),
    });
  }

  private async finish(chain: {
    kind: BackupKind;
    parent: BackupManifest['parent'];
    generation: string;
    snapshot: BackupManifest['snapshot'];
    afterTxid: number;
    firstRun: TransactionRun;
    /** The index snapshots the chain already stores, each with the backup holding its file. */
    parentIndexes?: BackupManifest['indexes'];
  }): Promise<BackupManifest> {
    this.progress.phase = 'transactions';
    let stoppedBy = chain.firstRun.stoppedBy;
    if (chain.firstRun.records.length > 0) {
      const runs = this.transactions(chain.generation, chain.firstRun, (run) => {
        stoppedBy = run.stoppedBy;
      });
      await this.writeFile('transactions.rkb', runs);
    }
    const position = this.lastWritten ?? { txid: chain.afterTxid, committedAt: null };
    const indexes =
      this.request.indexes === false
        ? []
        : await this.indexSnapshots(chain.generation, position.txid, chain.parentIndexes);
    this.progress.phase = 'manifest';
    this.report();
    const manifest: BackupManifest = {
      format: 'rookery-backup',
      version: 1,
      id: this.id,
      tenantId: this.request.tenantId,
      database: this.catalog.database,
      kind: chain.kind,
      createdAt: Number(this.id.slice(0, 15)),
      parent: chain.parent,
      generation: chain.generation,
      snapshot: chain.snapshot,
      afterTxid: chain.afterTxid,
      position,
      stoppedBy: stoppedBy === 'gap' ? 'gap' : 'end',
      compression: 'zstd',
      encryption: { algorithm: 'AES-256-GCM', keyVersion: this.request.key.version, chunkBytes: CHUNK_BYTES },
      files: this.files,
      indexes,
    };
    const sealed = sealManifest(manifest, this.request.key);
    const bytes = await this.request.storage.write(
      this.catalog.keyOf(this.id, MANIFEST_FILE),
      once(sealed.text),
    );
    this.progress.bytesWritten += bytes;
    this.report();
    return manifest;
  }

  /** The last transaction written into this backup, once there is one. */
  private lastWritten: BackupManifest['position'] | null = null;

  /** The generation's transactions from `first` on, one run at a time; `onRun` sees each run read. */
  private async *transactions(
    generation: string,
    first: TransactionRun,
    onRun: (run: TransactionRun) => void,
  ): AsyncGenerator<Buffer> {
    let run = first;
    for (;;) {
      this.request.signal?.throwIfAborted();
      onRun(run);
      if (run.records.length > 0) this.lastWritten = { txid: run.lastTxid, committedAt: run.lastCommittedAt };
      this.progress.bytesRead += run.bytesRead;
      this.progress.transactions += run.records.length;
      await this.limit.take(run.bytesRead, this.request.signal);
      this.report();
      if (run.records.length > 0) yield Buffer.concat(run.records, run.bytes);
      if (run.stoppedBy !== 'full') return;
      await yieldToLoop(); // reading a run is synchronous: let the rest of the worker breathe between runs
      run = readTransactionRun(this.request.mirrorDirectory, generation, run.lastTxid, RUN_BYTES);
    }
  }

  /**
   * Lists the index snapshots of the database at this backup's position (indexSnapshotsForBackup: the
   * newest of each index at or before it) and writes those the chain does not store yet; the others
   * are listed with the backup that holds them. A snapshot pruned from the mirror before it was
   * opened is left out: the restore rebuilds that index.
   */
  private async indexSnapshots(
    generation: string,
    upToTxid: number,
    stored: BackupManifest['indexes'] = [],
  ): Promise<BackupManifest['indexes']> {
    this.progress.phase = 'indexes';
    const carried: BackupManifest['indexes'] = [];
    const same = (
      a: BackupManifest['indexes'][number],
      b: { sha256: string; txid: number; etag: number; name: string },
    ) => a.sha256 === b.sha256 && a.txid === b.txid && a.etag === b.etag && a.name === b.name;
    let files = 0;
    for (const snapshot of indexSnapshotsForBackup(this.request.mirrorDirectory, generation, upToTxid)) {
      const known = stored.find((entry) => same(entry, snapshot));
      if (known) {
        carried.push(known);
        continue;
      }
      let handle: fs.promises.FileHandle;
      try {
        // Opened first: what is open stays readable if the mirror prunes it meanwhile.
        handle = await fs.promises.open(indexSnapshotFile(snapshot), 'r');
      } catch (error) {
        if ((error as NodeJS.ErrnoException).code === 'ENOENT') continue;
        throw error;
      }
      const file = indexBackupFileName(files++);
      try {
        this.progress.bytesToRead += snapshot.bytes;
        const source = handle.createReadStream({ highWaterMark: CHUNK_BYTES, autoClose: false });
        await this.writeFile(file, this.countReads(source));
      } finally {
        await handle.close();
      }
      const { name, definitionHash, etag, txid, takenAt, bytes, sha256 } = snapshot;
      carried.push({ file, name, definitionHash, etag, txid, takenAt, bytes, sha256 });
    }
    return carried;
  }

  private async *countReads(source: AsyncIterable<Buffer>): AsyncGenerator<Buffer> {
    for await (const piece of source) {
      this.request.signal?.throwIfAborted();
      this.progress.bytesRead += piece.length;
      await this.limit.take(piece.length, this.request.signal);
      this.report();
      yield piece;
    }
  }

  private async writeFile(name: BackupFileName, plaintext: AsyncIterable<Buffer>): Promise<void> {
    const sealed = sealFile(plaintext, {
      key: this.request.key,
      place: `${this.id}/${name}`,
      level: this.settings.compressionLevel,
    });
    const progress = this.progress;
    async function* counted(): AsyncGenerator<Buffer> {
      for await (const piece of sealed.stream) {
        progress.bytesWritten += piece.length;
        yield piece;
      }
    }
    await this.request.storage.write(this.catalog.keyOf(this.id, name), counted());
    this.files.push({ name, ...sealed.summary });
  }

  private report(): void {
    this.request.onProgress?.(this.progress);
  }
}

async function* once(text: string): AsyncGenerator<Buffer> {
  yield Buffer.from(text, 'utf8');
}
