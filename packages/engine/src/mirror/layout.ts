// Where the mirror keeps a database's history, and the names that order it:
//
//   <directory>/generations/<generation>/snapshots/<txid>-<taken at>.db
//   <directory>/generations/<generation>/segments/<first txid>.seg
//   <directory>/deleted                      the database was deleted (kept for point-in-time restores)
//
// A generation is one unbroken chain: a snapshot, then every transaction after it. A new one starts
// whenever the chain cannot be proven unbroken (first start, a crash that lost unshipped
// transactions, a local file that went back in time, a schema upgrade). Generation names start with
// their creation time, so name order is time order. Numbers are zero-padded for the same reason.
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { z } from 'zod';

export const GENERATIONS_DIR = 'generations';
export const SNAPSHOTS_DIR = 'snapshots';
export const SEGMENTS_DIR = 'segments';
const DELETED_MARKER = 'deleted';
/** Beside docs.db: which generation the local file continues (written when one starts, and by a restore). */
const LOCAL_STATE_FILE = 'mirror.json';

const GenerationSchema = z.string().regex(/^\d{15}-[0-9a-f]{8}$/);
const SnapshotNameSchema = z
  .string()
  .regex(/^(\d{16})-(\d{15})\.db$/)
  .transform((name) => ({
    file: name,
    txid: Number(name.slice(0, 16)),
    takenAt: Number(name.slice(17, 32)),
  }));
const SegmentNameSchema = z
  .string()
  .regex(/^\d{16}\.seg$/)
  .transform((name) => ({ file: name, firstTxid: Number(name.slice(0, 16)) }));
const LocalStateSchema = z.object({ generation: GenerationSchema });

export interface SnapshotEntry {
  file: string;
  txid: number;
  takenAt: number;
}

export interface SegmentEntry {
  file: string;
  firstTxid: number;
}

const pad = (n: number, width: number) => String(n).padStart(width, '0');

export function newGenerationName(now: number): string {
  return `${pad(now, 15)}-${randomBytes(4).toString('hex')}`;
}

export const generationDir = (directory: string, generation: string) =>
  path.join(directory, GENERATIONS_DIR, generation);
export const snapshotFileName = (txid: number, takenAt: number) => `${pad(txid, 16)}-${pad(takenAt, 15)}.db`;
export const segmentFileName = (firstTxid: number) => `${pad(firstTxid, 16)}.seg`;

/** Generations of a mirrored database, oldest first; names that are not ours are ignored. */
export function listGenerations(directory: string): string[] {
  return listNames(path.join(directory, GENERATIONS_DIR))
    .filter((name) => GenerationSchema.safeParse(name).success)
    .sort();
}

/** Complete snapshots of a generation, by transaction number (temporary files of one being taken are skipped). */
export function listSnapshots(generationDirectory: string): SnapshotEntry[] {
  return parseNames(path.join(generationDirectory, SNAPSHOTS_DIR), SnapshotNameSchema).sort(
    (a, b) => a.txid - b.txid || a.takenAt - b.takenAt,
  );
}

export function listSegments(generationDirectory: string): SegmentEntry[] {
  return parseNames(path.join(generationDirectory, SEGMENTS_DIR), SegmentNameSchema).sort(
    (a, b) => a.firstTxid - b.firstTxid,
  );
}

function parseNames<T>(directory: string, schema: z.ZodType<T, string>): T[] {
  const found: T[] = [];
  for (const name of listNames(directory)) {
    const parsed = schema.safeParse(name);
    if (parsed.success) found.push(parsed.data);
  }
  return found;
}

function listNames(directory: string): string[] {
  try {
    return fs.readdirSync(directory);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return [];
    throw error;
  }
}

/** True when the directory holds a mirrored database (at least one generation). */
export function hasMirror(directory: string): boolean {
  return listGenerations(directory).length > 0;
}

export function isDeleted(directory: string): boolean {
  return fs.existsSync(path.join(directory, DELETED_MARKER));
}

/** Marks a mirrored database deleted: not restored automatically, still restorable by hand within retention. */
export function markDeleted(directory: string, at: number): void {
  if (!fs.existsSync(directory)) return;
  writeFileDurably(
    path.join(directory, DELETED_MARKER),
    JSON.stringify({ deletedAt: new Date(at).toISOString() }),
  );
}

export function clearDeleted(directory: string): void {
  fs.rmSync(path.join(directory, DELETED_MARKER), { force: true });
}

/** The generation the local docs.db continues, or null (never mirrored, or its marker was lost). */
export function readLocalState(databaseDirectory: string): { generation: string } | null {
  let text: string;
  try {
    text = fs.readFileSync(path.join(databaseDirectory, LOCAL_STATE_FILE), 'utf8');
  } catch {
    return null;
  }
  try {
    const parsed = LocalStateSchema.safeParse(JSON.parse(text));
    return parsed.success ? parsed.data : null;
  } catch {
    return null; // torn or foreign: as if absent, which only costs a new generation
  }
}

export function writeLocalState(databaseDirectory: string, state: { generation: string }): void {
  writeFileDurably(path.join(databaseDirectory, LOCAL_STATE_FILE), JSON.stringify(state));
}

/** Writes aside, fsyncs, renames over and fsyncs the directory: the file is either old or new, never torn. */
export function writeFileDurably(file: string, text: string): void {
  const temporary = `${file}.tmp`;
  const fd = fs.openSync(temporary, 'w');
  try {
    fs.writeSync(fd, text);
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(temporary, file);
  syncDirectory(path.dirname(file));
}

/** fsync of a directory: makes the creation, rename or removal of its entries durable. */
export function syncDirectory(directory: string): void {
  const fd = fs.openSync(directory, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}

export function fsyncFile(file: string): void {
  const fd = fs.openSync(file, 'r+');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
