// Where the mirror keeps a database's history, and the names that order it:
//
//   <directory>/generations/<generation>/snapshots/<txid>-<taken at>.db
//   <directory>/generations/<generation>/segments/<first txid>.seg
//   <directory>/generations/<generation>/parent.json   where a new owner's generation branched off (optional)
//   <directory>/deleted                      the database was deleted (kept for point-in-time restores)
//
// A generation is one unbroken chain: a snapshot, then every transaction after it. A new one starts
// whenever the chain cannot be proven unbroken (first start, a crash that lost unshipped
// transactions, a local file that went back in time, a schema upgrade), and whenever a new owner
// (a higher placement epoch) takes the database over. A generation's name starts with its owner's
// epoch, then its creation time: `e<epoch>-<created at>-<random>`, or `<created at>-<random>` for
// epoch 0 (one machine, and every mirror written before epochs existed). Numbers are zero-padded
// and "e" sorts after every digit, so name order is (epoch, time) order: the last name is the
// newest generation of the highest epoch, which is what a restore wants.
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
/** In a generation started by a new owner: the generation and transaction its first state came from. */
const PARENT_FILE = 'parent.json';
/** Highest placement epoch a generation name can carry (10 digits). */
export const MAX_EPOCH = 9_999_999_999;

const GenerationSchema = z.string().regex(/^(?:e\d{10}-)?\d{15}-[0-9a-f]{8}$/);
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
/** `txid`: written by a restore, the transaction the file was restored to (a new owner branches off there). */
const LocalStateSchema = z.object({ generation: GenerationSchema, txid: z.number().int().min(0).optional() });
export type LocalState = z.infer<typeof LocalStateSchema>;
const ParentSchema = z.object({ generation: GenerationSchema, txid: z.number().int().min(0) });

/** Where a new owner's generation branched off: the older generation and the last transaction taken from it. */
export type GenerationParent = z.infer<typeof ParentSchema>;

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

export function newGenerationName(now: number, epoch = 0): string {
  const name = `${pad(now, 15)}-${randomBytes(4).toString('hex')}`;
  return epoch === 0 ? name : `e${pad(epoch, 10)}-${name}`;
}

/** The placement epoch of the owner that wrote a generation (0 for names without one). */
export function epochOfGeneration(generation: string): number {
  return generation.startsWith('e') ? Number(generation.slice(1, 11)) : 0;
}

/** The highest placement epoch that has written this database's mirror (0: none, or only epoch 0). */
export function newestEpoch(directory: string): number {
  const newest = listGenerations(directory).at(-1);
  return newest === undefined ? 0 : epochOfGeneration(newest);
}

/**
 * Creates a generation whole: its directories (and parent record) are made under a temporary name
 * and renamed into place, so a generation is either absent or has its parent record. A crash
 * leaves only a dot-name, which no listing takes for a generation.
 */
export function createGeneration(
  directory: string,
  generation: string,
  parent: GenerationParent | null,
): void {
  const root = path.join(directory, GENERATIONS_DIR);
  fs.mkdirSync(root, { recursive: true });
  const building = path.join(root, `.${generation}.tmp`);
  fs.rmSync(building, { recursive: true, force: true });
  fs.mkdirSync(path.join(building, SEGMENTS_DIR), { recursive: true });
  fs.mkdirSync(path.join(building, SNAPSHOTS_DIR));
  if (parent) writeFileDurably(path.join(building, PARENT_FILE), JSON.stringify(parent));
  syncDirectory(path.join(building, SEGMENTS_DIR));
  syncDirectory(path.join(building, SNAPSHOTS_DIR));
  syncDirectory(building);
  fs.renameSync(building, generationDir(directory, generation));
  for (let dir = root; dir.length >= directory.length; dir = path.dirname(dir)) syncDirectory(dir);
}

/** The parent record of a generation, or null (none, or unreadable: then it is not a restorable branch). */
export function readParent(generationDirectory: string): GenerationParent | null {
  try {
    const parsed = ParentSchema.safeParse(
      JSON.parse(fs.readFileSync(path.join(generationDirectory, PARENT_FILE), 'utf8')),
    );
    return parsed.success ? parsed.data : null;
  } catch {
    return null;
  }
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
export function readLocalState(databaseDirectory: string): LocalState | null {
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

export function writeLocalState(databaseDirectory: string, state: LocalState): void {
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
