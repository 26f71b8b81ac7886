// Index files are derived data, so the indexer writes them with
// synchronous=OFF: no fsync at commits or checkpoints. On 1,000,000 documents
// that built a five-field index 35% faster than synchronous=NORMAL (whose
// checkpoints fsync), which bigger caches and rarer checkpoints did not.
//
// The price: if the operating system (not just our process) goes down while
// the file is being written, the file may be torn. A process crash is
// harmless — the OS still holds every write — so what matters is telling the
// two apart. While a writer has the index open, a marker beside it holds the
// machine's boot id and the definition. On the next open, a marker from
// another boot means the OS went down mid-write: the index is rebuilt from its
// definition (kept in the marker, since the file itself cannot be trusted).
import fs from 'node:fs';
import path from 'node:path';
import { type IndexDefinition, IndexDefinitionSchema } from '@rookery/protocol';

const MARKER_SUFFIX = '.writer';
const BOOT_ID_FILE = '/proc/sys/kernel/random/boot_id';

/** The id of this boot of the machine, or null where the OS does not tell (then writes stay synced). */
export function currentBootId(): string | null {
  try {
    const id = fs.readFileSync(BOOT_ID_FILE, 'utf8').trim();
    return id === '' ? null : id;
  } catch {
    return null;
  }
}

export function markerFileOf(indexFile: string): string {
  return indexFile + MARKER_SUFFIX;
}

/**
 * Records, durably, that a writer holds the file in this boot; must precede any
 * unsynced write. Written aside and renamed, so a crash never leaves half a marker.
 */
export function markWriterOpen(indexFile: string, bootId: string, definition: IndexDefinition): void {
  const marker = markerFileOf(indexFile);
  const fd = fs.openSync(`${marker}.tmp`, 'w');
  try {
    fs.writeSync(fd, JSON.stringify({ bootId, definition }));
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
  fs.renameSync(`${marker}.tmp`, marker);
  syncDirectory(path.dirname(marker));
}

export function markWriterClosed(indexFile: string): void {
  fs.rmSync(markerFileOf(indexFile), { force: true });
}

/**
 * The definition to rebuild the index from when its last writer was cut off by
 * the OS going down (a marker from another boot); null when the file can be trusted.
 * An unreadable marker from another boot cannot be trusted either: it throws.
 */
export function definitionToRebuild(indexFile: string, bootId: string | null): IndexDefinition | null {
  let text: string;
  try {
    text = fs.readFileSync(markerFileOf(indexFile), 'utf8');
  } catch {
    return null; // closed cleanly, or never written unsynced
  }
  const marker = safeJson(text) as { bootId?: unknown; definition?: unknown } | null;
  const definition = IndexDefinitionSchema.safeParse(marker?.definition);
  if (typeof marker?.bootId !== 'string' || !definition.success) {
    throw new Error(`the writer marker of ${path.basename(indexFile)} is unreadable`);
  }
  return marker.bootId === bootId ? null : definition.data;
}

function safeJson(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return null;
  }
}

function syncDirectory(directory: string): void {
  const fd = fs.openSync(directory, 'r');
  try {
    fs.fsyncSync(fd);
  } finally {
    fs.closeSync(fd);
  }
}
