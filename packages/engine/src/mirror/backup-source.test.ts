import fs from 'node:fs';
import path from 'node:path';
import { makeTempDir } from '@rookery/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Database } from '../database.js';
import {
  newestMirrorGeneration,
  newestMirrorSnapshot,
  readTransactionRun,
  StagedMirror,
  segmentBytesAfter,
} from './backup-source.js';
import { generationDir, listSegments, SEGMENTS_DIR } from './layout.js';
import { readRecordHeader } from './record.js';
import { restoreDatabase } from './restore.js';

let tmp: ReturnType<typeof makeTempDir>;
let mirror: string;
let db: Database;

beforeEach(() => {
  tmp = makeTempDir('rookery-backup-source-');
  mirror = path.join(tmp.dir, 'mirror');
  // Small segments, so a generation has many of them.
  db = Database.create(path.join(tmp.dir, 'local'), 'shop', {
    mirror: { directory: mirror, mode: 'sync', segmentBytes: 4096 },
  });
});
afterEach(async () => {
  await db.close();
  tmp.cleanup();
});

async function write(from: number, count: number): Promise<void> {
  for (let i = from; i < from + count; i++) {
    await db.batch([{ Type: 'PUT', Id: `things/${i}`, Document: { N: i, Text: 'x'.repeat(300) } }]);
  }
}

describe('the mirror as backups read it', () => {
  it('reads every transaction after a position in runs that end at segment starts, reading each segment once', async () => {
    await write(0, 5);
    await db.mirror!.snapshotNow();
    await write(5, 60);
    const snapshot = newestMirrorSnapshot(mirror)!;
    expect(snapshot.generation).toBe(newestMirrorGeneration(mirror));
    const directory = generationDir(mirror, snapshot.generation);
    const segments = listSegments(directory);
    expect(segments.length).toBeGreaterThan(5);
    const starts = new Set(segments.map((s) => s.firstTxid));

    const txids: number[] = [];
    let bytesRead = 0;
    let readTwice = 0; // the record a run stopped before is read again by the next run
    let position = snapshot.txid;
    for (;;) {
      const run = readTransactionRun(mirror, snapshot.generation, position, 1);
      bytesRead += run.bytesRead;
      if (txids.length > 0) readTwice += run.records[0]?.length ?? 0;
      for (const record of run.records) txids.push(readRecordHeader(record, 0)!.txid);
      position = run.lastTxid;
      if (run.stoppedBy !== 'full') {
        expect(run.stoppedBy).toBe('end');
        break;
      }
      expect(starts.has(run.lastTxid + 1)).toBe(true);
    }
    expect(txids).toEqual(Array.from({ length: txids.length }, (_, i) => snapshot.txid + 1 + i));
    expect(txids).toHaveLength(60); // one transaction per batch written after the snapshot
    const segmentBytes = segments
      .filter((s) => s.firstTxid > snapshot.txid)
      .reduce((sum, s) => sum + fs.statSync(path.join(directory, SEGMENTS_DIR, s.file)).size, 0);
    expect(bytesRead).toBe(segmentBytes + readTwice);
    expect(segmentBytesAfter(mirror, snapshot.generation, snapshot.txid)).toBe(segmentBytes);
  });

  it('lays the records out again as a mirror that restores to the same database', async () => {
    await write(0, 3);
    await db.mirror!.snapshotNow();
    await write(3, 20);
    const snapshot = newestMirrorSnapshot(mirror)!;
    const run = readTransactionRun(mirror, snapshot.generation, snapshot.txid, 1 << 30);
    expect(run.stoppedBy).toBe('end');

    const staged = new StagedMirror(path.join(tmp.dir, 'staged'), snapshot.generation);
    fs.copyFileSync(snapshot.file, staged.snapshotPath(snapshot.txid, snapshot.takenAt));
    fs.writeFileSync(staged.segmentPath(snapshot.txid + 1), Buffer.concat(run.records));
    const restored = restoreDatabase(staged.directory, path.join(tmp.dir, 'restored'));
    expect(restored).toMatchObject({ txid: run.lastTxid, stoppedBy: 'end', transactionsReplayed: 20 });
    expect(() => new StagedMirror(path.join(tmp.dir, 'staged'), '../elsewhere')).toThrow(
      expect.objectContaining({ code: 'MirrorCorrupt' }),
    );
  });
});
