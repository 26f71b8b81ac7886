// Index files on the mirror. An index is derived data: a restore could always rebuild it from the
// definition stored in docs.db, but at 15–26k documents/s per index that leaves a large database
// answering stale queries for minutes. So the indexer copies each index file to the mirror now and
// then, and a restore takes the newest copy it can trust and lets the indexer catch up from there.
//
//   <generation>/indexes/<encoded index name>/<txid>-<etag>-<taken at>/index.db
//   <generation>/indexes/<encoded index name>/<txid>-<etag>-<taken at>/manifest.json
//
// A snapshot says which index definition it was built from (a hash of the canonical definition),
// the document etag it covers (its `last_etag`: where the indexer catches up from) and `txid`,
// the docs.db transaction number read once the copy was complete. Every batch the copy holds was
// read from docs.db at or before that transaction, and docs.db's history is linear within a
// generation, so the copy is the index of a state on the way to any state of that generation at or
// after `txid` — catching up from its etag then gives exactly what a rebuild would. A state that
// is not after `txid` (a point-in-time restore to before it, or the branch point of a new owner)
// must not use it: a document the index read may since have been deleted or moved there.
//
// Written whole or not at all: the two files are built in a dot-directory, fsynced, and the
// directory is renamed into place. The manifest carries the SHA-256 of index.db; a copy whose
// bytes do not match is never adopted.
import { createHash, randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { type IndexDefinition, IndexDefinitionSchema } from '@rookery/protocol';
import BetterSqlite3 from 'better-sqlite3';
import { z } from 'zod';
import { indexFileName } from '../indexing/index-file.js';
import { fsyncFile, generationDir, readParent, syncDirectory } from './layout.js';

export const INDEX_SNAPSHOTS_DIR = 'indexes';
const SNAPSHOT_FILE = 'index.db';
const MANIFEST_FILE = 'manifest.json';
/** An unfinished snapshot directory older than this was left by a crash (a copy takes seconds). */
const LEFTOVER_AFTER_MS = 60 * 60_000;
const pad = (n: number, width: number) => String(n).padStart(width, '0');

const SnapshotDirSchema = z
  .string()
  .regex(/^(\d{16})-(\d{16})-(\d{15})$/)
  .transform((name) => ({
    dir: name,
    txid: Number(name.slice(0, 16)),
    etag: Number(name.slice(17, 33)),
    takenAt: Number(name.slice(34, 49)),
  }));

const ManifestSchema = z.object({
  name: z.string().min(1),
  definitionHash: z.string().regex(/^[0-9a-f]{64}$/),
  etag: z.number().int().min(0),
  txid: z.number().int().min(0),
  takenAt: z.number().int().min(0),
  bytes: z.number().int().min(0),
  sha256: z.string().regex(/^[0-9a-f]{64}$/),
  /** The worker build this snapshot is (mirror/index-build.ts); absent on the indexer's own copies. */
  build: z
    .string()
    .regex(/^[0-9a-z-]{1,64}$/)
    .optional(),
});
export type IndexSnapshotManifest = z.infer<typeof ManifestSchema>;

export interface IndexSnapshotEntry extends IndexSnapshotManifest {
  /** The snapshot's directory. */
  directory: string;
}

/**
 * The hash that tells whether a snapshot was built from the definition a database holds now: of the
 * definition as the protocol's schema parses it (defaults filled, keys in the schema's order), so
 * the same definition stored by docs.db and by the index file hashes the same.
 */
export function definitionHash(definition: IndexDefinition): string {
  return createHash('sha256')
    .update(JSON.stringify(IndexDefinitionSchema.parse(definition)))
    .digest('hex');
}

/** Where one index's snapshots live in a generation (index names are case-insensitive, as their files). */
export function indexSnapshotsDir(generationDirectory: string, indexName: string): string {
  return path.join(
    generationDirectory,
    INDEX_SNAPSHOTS_DIR,
    indexFileName(indexName).slice(0, -'.db'.length),
  );
}

export interface TakeIndexSnapshotOptions {
  /** The generation directory the snapshot goes into (the one the local docs.db continues). */
  generationDirectory: string;
  /** docs.db's transaction number now (read after the copy is complete; see the header comment). */
  docsTxid: () => number;
  now: () => number;
  /** Labels a worker's build, which only the indexer that asked for it adopts. */
  build?: string;
}

/**
 * Copies a live index into a generation with SQLite's online backup from the index writer's own
 * connection: it runs in steps between the event loop's turns, and a batch the writer commits
 * meanwhile is carried into the copy, so the copy is consistent; its etag and definition are read
 * from the copy itself. Rejects (leaving nothing behind) if the connection closes meanwhile.
 */
export async function takeIndexSnapshot(
  index: BetterSqlite3.Database,
  options: TakeIndexSnapshotOptions,
): Promise<IndexSnapshotEntry> {
  const root = path.join(options.generationDirectory, INDEX_SNAPSHOTS_DIR);
  fs.mkdirSync(root, { recursive: true });
  const building = path.join(root, `.${randomBytes(6).toString('hex')}.tmp`);
  fs.mkdirSync(building);
  try {
    const file = path.join(building, SNAPSHOT_FILE);
    await index.backup(file);
    const txid = options.docsTxid();
    const copy = new BetterSqlite3(file, { fileMustExist: true });
    let definition: IndexDefinition;
    let etag: number;
    try {
      // A single self-contained file: a restore copies one file and leaves no -wal beside it.
      copy.pragma('journal_mode = DELETE');
      const meta = new Map(
        (copy.prepare('SELECT key, value FROM meta').all() as { key: string; value: unknown }[]).map((r) => [
          r.key,
          r.value,
        ]),
      );
      definition = IndexDefinitionSchema.parse(JSON.parse(String(meta.get('definition'))));
      etag = Number(meta.get('last_etag') ?? 0);
    } finally {
      copy.close();
    }
    fsyncFile(file);
    const manifest: IndexSnapshotManifest = {
      name: definition.Name,
      definitionHash: definitionHash(definition),
      etag,
      txid,
      takenAt: options.now(),
      bytes: fs.statSync(file).size,
      sha256: sha256Of(file),
      ...(options.build === undefined ? {} : { build: options.build }),
    };
    writeSynced(path.join(building, MANIFEST_FILE), JSON.stringify(manifest));
    syncDirectory(building);
    const parent = indexSnapshotsDir(options.generationDirectory, definition.Name);
    fs.mkdirSync(parent, { recursive: true });
    const directory = path.join(
      parent,
      `${pad(manifest.txid, 16)}-${pad(manifest.etag, 16)}-${pad(manifest.takenAt, 15)}`,
    );
    fs.renameSync(building, directory);
    syncDirectory(parent);
    syncDirectory(root);
    return { ...manifest, directory };
  } finally {
    fs.rmSync(building, { recursive: true, force: true });
  }
}

/** The index file of a snapshot (what a backup carries). */
export const indexSnapshotFile = (snapshot: IndexSnapshotEntry) =>
  path.join(snapshot.directory, SNAPSHOT_FILE);

/**
 * Lays out, in a generation directory, the place of a snapshot coming back from a backup: writes its
 * manifest and answers where its index file goes. It is verified like any other when restored.
 */
export function stageIndexSnapshot(generationDirectory: string, manifest: IndexSnapshotManifest): string {
  const checked = ManifestSchema.parse(manifest);
  const directory = path.join(
    indexSnapshotsDir(generationDirectory, checked.name),
    `${pad(checked.txid, 16)}-${pad(checked.etag, 16)}-${pad(checked.takenAt, 15)}`,
  );
  fs.mkdirSync(directory, { recursive: true });
  fs.writeFileSync(path.join(directory, MANIFEST_FILE), JSON.stringify(checked));
  return path.join(directory, SNAPSHOT_FILE);
}

/** The index snapshots a backup of `generation` up to `upToTxid` holds: of each index, the newest taken at or before it. */
export function indexSnapshotsForBackup(
  mirrorDirectory: string,
  generation: string,
  upToTxid: number,
): IndexSnapshotEntry[] {
  const newest = new Map<string, IndexSnapshotEntry>();
  for (const snapshot of listIndexSnapshots(generationDir(mirrorDirectory, generation))) {
    if (snapshot.txid > upToTxid) continue;
    const key = path.dirname(snapshot.directory);
    const known = newest.get(key);
    if (!known || snapshot.etag > known.etag || (snapshot.etag === known.etag && snapshot.txid >= known.txid))
      newest.set(key, snapshot);
  }
  return [...newest.values()].sort((a, b) => a.name.localeCompare(b.name));
}

/**
 * Every complete snapshot of a generation, oldest first; `indexName` narrows it to one index.
 * Unfinished (dot) directories, foreign names and unreadable manifests are skipped: such a
 * snapshot can only be rebuilt, never adopted.
 */
export function listIndexSnapshots(generationDirectory: string, indexName?: string): IndexSnapshotEntry[] {
  const root = path.join(generationDirectory, INDEX_SNAPSHOTS_DIR);
  const indexDirs =
    indexName === undefined
      ? namesIn(root)
          .filter((n) => !n.startsWith('.'))
          .map((n) => path.join(root, n))
      : [indexSnapshotsDir(generationDirectory, indexName)];
  const found: IndexSnapshotEntry[] = [];
  for (const indexDir of indexDirs) {
    for (const name of namesIn(indexDir)) {
      const parsed = SnapshotDirSchema.safeParse(name);
      if (!parsed.success) continue;
      const directory = path.join(indexDir, name);
      const manifest = readManifest(directory);
      // The directory's name is what listings sort by; a manifest that disagrees with it is not trusted.
      if (!manifest || manifest.txid !== parsed.data.txid || manifest.etag !== parsed.data.etag) continue;
      found.push({ ...manifest, directory });
    }
  }
  return found.sort((a, b) => a.txid - b.txid || a.etag - b.etag || a.takenAt - b.takenAt);
}

function readManifest(directory: string): IndexSnapshotManifest | null {
  try {
    const parsed = ManifestSchema.safeParse(
      JSON.parse(fs.readFileSync(path.join(directory, MANIFEST_FILE), 'utf8')),
    );
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
}

/** One generation of a restored state's history and the last transaction of it that history holds. */
export interface LineageStep {
  generation: string;
  maxTxid: number;
}

/**
 * The generations whose snapshots describe a state restored from `generation` up to `txid`: that
 * generation up to `txid`, then — for a new owner's generation — its parent up to the branch point,
 * and so on.
 */
export function lineageOf(mirrorDirectory: string, generation: string, txid: number): LineageStep[] {
  const steps: LineageStep[] = [{ generation, maxTxid: txid }];
  const seen = new Set([generation]);
  for (;;) {
    const last = steps[steps.length - 1]!;
    const parent = readParent(generationDir(mirrorDirectory, last.generation));
    if (!parent || seen.has(parent.generation)) return steps;
    seen.add(parent.generation);
    steps.push({ generation: parent.generation, maxTxid: Math.min(parent.txid, last.maxTxid) });
  }
}

export interface RestoredIndex {
  name: string;
  etag: number;
  txid: number;
  generation: string;
}

export interface SkippedIndexSnapshot {
  name: string;
  /** Why this snapshot was passed over (the next older one, or a rebuild, followed). */
  reason: 'checksum' | 'unreadable';
  directory: string;
}

export interface IndexRestoreOutcome {
  /** Indexes whose file came from a snapshot: the indexer catches them up from `etag`. */
  restored: RestoredIndex[];
  /** Indexes with no usable snapshot: the tenant rebuilds them from their definitions, as without snapshots. */
  rebuilt: string[];
  /** Snapshots that matched but could not be trusted. */
  skipped: SkippedIndexSnapshot[];
}

/**
 * Places, in `databaseDirectory/indexes/`, the newest trustworthy snapshot of every definition in
 * `definitions`: taken in the restored state's lineage at or before its transaction (hence at or
 * below its etag), from the same definition (hash), with intact bytes (SHA-256, then the copy's own
 * definition and etag read back). Anything else is left to be rebuilt.
 */
export function restoreIndexSnapshots(
  mirrorDirectory: string,
  lineage: readonly LineageStep[],
  databaseDirectory: string,
  definitions: readonly IndexDefinition[],
  /** `build`: only that worker build (an index adopting the build it asked for, never an older copy of itself). */
  { build }: { build?: string } = {},
): IndexRestoreOutcome {
  const outcome: IndexRestoreOutcome = { restored: [], rebuilt: [], skipped: [] };
  const target = path.join(databaseDirectory, 'indexes');
  for (const definition of definitions) {
    const hash = definitionHash(definition);
    const candidates = lineage
      .flatMap((step) =>
        listIndexSnapshots(generationDir(mirrorDirectory, step.generation), definition.Name)
          .filter(
            (s) =>
              s.txid <= step.maxTxid &&
              s.definitionHash === hash &&
              (build === undefined || s.build === build),
          )
          .map((s) => ({ ...s, generation: step.generation })),
      )
      // Newest first: the highest etag needs the least catching up.
      .sort((a, b) => b.etag - a.etag || b.txid - a.txid || b.takenAt - a.takenAt);
    let placed = false;
    for (const candidate of candidates) {
      const file = path.join(target, indexFileName(definition.Name));
      const problem = copyVerified(candidate, file, hash);
      if (problem) {
        outcome.skipped.push({ name: definition.Name, reason: problem, directory: candidate.directory });
        continue;
      }
      outcome.restored.push({
        name: definition.Name,
        etag: candidate.etag,
        txid: candidate.txid,
        generation: candidate.generation,
      });
      placed = true;
      break;
    }
    if (!placed) outcome.rebuilt.push(definition.Name);
  }
  return outcome;
}

/**
 * Copies a snapshot to `file` (aside, then renamed), hashing what it reads; on a checksum mismatch
 * or a copy whose own definition or etag is not the manifest's, removes the copy and says why.
 */
function copyVerified(
  snapshot: IndexSnapshotEntry,
  file: string,
  hash: string,
): 'checksum' | 'unreadable' | null {
  fs.mkdirSync(path.dirname(file), { recursive: true });
  const building = `${file}.restoring`;
  const clear = () => {
    for (const suffix of ['', '-journal', '-wal', '-shm']) fs.rmSync(building + suffix, { force: true });
  };
  clear();
  try {
    if (sha256Of(path.join(snapshot.directory, SNAPSHOT_FILE), building) !== snapshot.sha256) {
      clear();
      return 'checksum';
    }
    const copy = new BetterSqlite3(building, { fileMustExist: true });
    try {
      const row = (key: string) =>
        (copy.prepare('SELECT value FROM meta WHERE key = ?').get(key) as { value: unknown } | undefined)
          ?.value;
      const definition = IndexDefinitionSchema.parse(JSON.parse(String(row('definition'))));
      if (definitionHash(definition) !== hash || Number(row('last_etag')) !== snapshot.etag) {
        clear();
        return 'unreadable';
      }
      // The indexer writes it in WAL mode, as every index file (see index-file.ts).
      copy.pragma('journal_mode = WAL');
    } finally {
      copy.close();
    }
  } catch {
    clear();
    return 'unreadable';
  }
  fsyncFile(building);
  for (const suffix of ['-wal', '-shm', '-journal']) fs.rmSync(file + suffix, { force: true });
  fs.renameSync(building, file);
  return null;
}

/**
 * Keeps what a restore within the retention window can use: for each index, the newest snapshot
 * taken at or before the horizon and every later one; older ones go. Runs with the database's own
 * pruning, in the generation that is being pruned.
 */
export function pruneIndexSnapshots(
  generationDirectory: string,
  horizon: number,
  now: number,
  remove: (file: string) => void,
): void {
  const byIndex = new Map<string, IndexSnapshotEntry[]>();
  for (const snapshot of listIndexSnapshots(generationDirectory)) {
    const key = path.dirname(snapshot.directory);
    byIndex.set(key, [...(byIndex.get(key) ?? []), snapshot]);
  }
  for (const [indexDir, snapshots] of byIndex) {
    const base = snapshots
      .filter((s) => s.takenAt <= horizon)
      .sort((a, b) => a.takenAt - b.takenAt)
      .at(-1);
    if (!base) continue;
    for (const snapshot of snapshots) if (snapshot.takenAt < base.takenAt) remove(snapshot.directory);
    syncDirectory(indexDir);
  }
  // Dot-directories are snapshots a crash interrupted, or one the indexer is taking right now: only
  // those untouched for an hour are leftovers.
  const root = path.join(generationDirectory, INDEX_SNAPSHOTS_DIR);
  for (const name of namesIn(root)) {
    if (!name.startsWith('.')) continue;
    const leftover = path.join(root, name);
    try {
      if (fs.statSync(leftover).mtimeMs < now - LEFTOVER_AFTER_MS) remove(leftover);
    } catch {
      // Renamed into place or removed meanwhile.
    }
  }
}

/** SHA-256 of a file, read in 1 MiB chunks; with `copyTo`, the bytes read are also written there. */
function sha256Of(file: string, copyTo?: string): string {
  const hash = createHash('sha256');
  const input = fs.openSync(file, 'r');
  const output = copyTo === undefined ? null : fs.openSync(copyTo, 'w');
  try {
    const buffer = Buffer.allocUnsafe(1024 * 1024);
    for (;;) {
      const n = fs.readSync(input, buffer, 0, buffer.length, null);
      if (n === 0) break;
      const chunk = buffer.subarray(0, n);
      hash.update(chunk);
      if (output !== null) fs.writeSync(output, chunk);
    }
  } finally {
    fs.closeSync(input);
    if (output !== null) fs.closeSync(output);
  }
  return hash.digest('hex');
}

function writeSynced(file: string, text: string): void {
  const fd = fs.openSync(file, 'w');
  try {
    fs.writeSync(fd, text);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

function namesIn(directory: string): string[] {
  try {
    return fs.readdirSync(directory);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}
