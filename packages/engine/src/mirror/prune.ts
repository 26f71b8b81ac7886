import fs from 'node:fs';
import path from 'node:path';
import { pruneIndexSnapshots } from './index-snapshots.js';
import {
  generationDir,
  listGenerations,
  listSegments,
  listSnapshots,
  SEGMENTS_DIR,
  SNAPSHOTS_DIR,
  syncDirectory,
} from './layout.js';

/**
 * Deletes what no restore within the retention window can need. A restore to a time T starts from
 * the newest snapshot taken at or before T, so the newest snapshot taken at or before `now -
 * retention` (the base) is kept, with everything after it; older snapshots, segments holding only
 * transactions the base already has, and — once the current generation reaches back past the
 * window — older generations go. Older generations without any snapshot (a start cut short)
 * restore nothing and go too. Newer ones — a higher placement epoch's, when this owner was just
 * fenced — are never touched. The current generation's newest segment is never touched.
 */
export function pruneMirror(
  directory: string,
  current: string,
  retentionMs: number,
  now: number,
): { files: number; bytes: number } {
  const removed = { files: 0, bytes: 0 };
  const remove = (file: string) => {
    removed.bytes += sizeOf(file);
    removed.files++;
    fs.rmSync(file, { recursive: true, force: true });
  };
  const currentDir = generationDir(directory, current);
  const snapshots = listSnapshots(currentDir);
  const horizon = now - retentionMs;
  let base = null;
  for (const snapshot of snapshots) if (snapshot.takenAt <= horizon) base = snapshot;
  if (base) {
    for (const snapshot of snapshots) {
      if (snapshot.txid < base.txid || (snapshot.txid === base.txid && snapshot.takenAt < base.takenAt))
        remove(path.join(currentDir, SNAPSHOTS_DIR, snapshot.file));
    }
    const segments = listSegments(currentDir);
    for (let i = 0; i + 1 < segments.length; i++) {
      if (segments[i + 1]!.firstTxid <= base.txid + 1)
        remove(path.join(currentDir, SEGMENTS_DIR, segments[i]!.file));
    }
    syncDirectory(path.join(currentDir, SNAPSHOTS_DIR));
    syncDirectory(path.join(currentDir, SEGMENTS_DIR));
  }
  // Index snapshots by the same rule, per index; an older generation takes its own with it below.
  pruneIndexSnapshots(currentDir, horizon, now, remove);
  for (const generation of listGenerations(directory)) {
    // Name order is (epoch, time) order (see layout.ts).
    if (generation >= current) continue;
    const dir = generationDir(directory, generation);
    if (base || listSnapshots(dir).length === 0) remove(dir);
  }
  return removed;
}

function sizeOf(file: string): number {
  try {
    const stat = fs.statSync(file);
    if (!stat.isDirectory()) return stat.size;
    return fs.readdirSync(file).reduce((sum, name) => sum + sizeOf(path.join(file, name)), 0);
  } catch {
    return 0;
  }
}
