// Placement epochs on one shared mirror directory: two (or more) owners of the same database, the
// newer one taking over from the mirror as a failover does. Real files, real databases, no mocks.
import fs from 'node:fs';
import path from 'node:path';
import { makeTempDir } from '@rookery/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Database } from '../database.js';
import { dumpDatabase } from '../test-fixtures/docs-dump.js';
import { seededRandom } from '../test-fixtures/mixed-workload.js';
import {
  epochOfGeneration,
  generationDir,
  listGenerations,
  listSegments,
  listSnapshots,
  newGenerationName,
  SEGMENTS_DIR,
  SNAPSHOTS_DIR,
} from './layout.js';
import { restoreDatabase } from './restore.js';
import { scanSegment } from './segment-reader.js';

let tmp: ReturnType<typeof makeTempDir>;
let mirror: string;
let dirs = 0;
const open: Database[] = [];

beforeEach(() => {
  tmp = makeTempDir('rookery-epochs-');
  mirror = path.join(tmp.dir, 'mirror');
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((db) => db.close()));
  tmp.cleanup();
});

const newDir = () => path.join(tmp.dir, `host-${dirs++}`);

/** An owner of epoch `epoch` serving the database from `directory` (created, or restored beforehand). */
function owner(directory: string, epoch: number, clock: () => number = Date.now): Database {
  const options = { clock, mirror: { directory: mirror, mode: 'sync' as const, epoch, flushIntervalMs: 5 } };
  const db = Database.exists(directory)
    ? Database.open(directory, options)
    : Database.create(directory, 'shop', options);
  open.push(db);
  return db;
}

/** A new owner takes over: restores the database from the mirror onto its own disk and opens it with its epoch. */
async function takeOver(epoch: number, clock?: () => number): Promise<Database> {
  const directory = newDir();
  restoreDatabase(mirror, directory);
  const db = owner(directory, epoch, clock);
  await db.mirror!.flushed(); // its generation has its first snapshot
  return db;
}

const put = (db: Database, id: string) => db.batch([{ Type: 'PUT', Id: id, Document: { Id: id } }]);
const idsIn = (directory: string) =>
  dumpDatabase(directory)
    .docs!.map((d) => (d as { id: string }).id)
    .sort();
function restoredIds(): { ids: string[]; generation: string } {
  const target = newDir();
  const result = restoreDatabase(mirror, target);
  return { ids: idsIn(target), generation: result.generation };
}
/** Every transaction number written to a generation's segments. */
function txidsIn(generation: string): number[] {
  const directory = generationDir(mirror, generation);
  const txids: number[] = [];
  for (const segment of listSegments(directory)) {
    scanSegment(path.join(directory, SEGMENTS_DIR, segment.file), ({ header }) => {
      txids.push(header.txid);
      return true;
    });
  }
  return txids;
}

describe('generation names', () => {
  it('order by epoch first, then time; epoch 0 keeps the names mirrors had before epochs', () => {
    const names = [
      newGenerationName(2_000_000_000_000, 1),
      newGenerationName(1_000_000_000_000, 2),
      newGenerationName(3_000_000_000_000, 0),
      newGenerationName(1_500_000_000_000, 10),
    ];
    expect(names[2]).toMatch(/^\d{15}-[0-9a-f]{8}$/);
    expect([...names].sort().map(epochOfGeneration)).toEqual([0, 1, 2, 10]);
  });
});

describe('two owners of one database on a shared mirror', () => {
  it('fences the old owner once the new epoch exists: its writes fail 503 and nothing more reaches the mirror', async () => {
    const a = owner(newDir(), 1);
    for (const id of ['a/1', 'a/2', 'a/3']) await put(a, id);
    const aGeneration = a.stats().Mirror!.Generation!;
    const aTxids = txidsIn(aGeneration);

    const b = await takeOver(2);
    const bGeneration = b.stats().Mirror!.Generation!;
    expect(epochOfGeneration(bGeneration)).toBe(2);
    await put(b, 'b/1');

    // The old owner (a paused host that woke up) tries to write: committed on its own disk, never
    // shipped, never acknowledged.
    await expect(put(a, 'a/4')).rejects.toMatchObject({ code: 'MirrorFenced', status: 503 });
    expect(a.stats().Mirror!.State).toBe('fenced');
    expect(txidsIn(aGeneration)).toEqual(aTxids);
    // From now on it is refused before it commits: the old owner's file does not move either.
    const txid = a.stats().Mirror!.Txid;
    await expect(put(a, 'a/5')).rejects.toMatchObject({ code: 'MirrorFenced' });
    expect(a.stats().Mirror!.Txid).toBe(txid);
    // Closing the fenced owner writes nothing to the mirror either.
    const before = fs.readdirSync(path.join(generationDir(mirror, aGeneration), SNAPSHOTS_DIR));
    open.splice(open.indexOf(a), 1);
    await a.close();
    expect(fs.readdirSync(path.join(generationDir(mirror, aGeneration), SNAPSHOTS_DIR))).toEqual(before);
    expect(txidsIn(aGeneration)).toEqual(aTxids);

    const restored = restoredIds();
    expect(restored.generation).toBe(bGeneration);
    expect(restored.ids).toEqual(['a/1', 'a/2', 'a/3', 'b/1']);
  });

  it("restores epoch 2's state even when epoch 1 wrote later by every clock", async () => {
    // The old owner's clock runs a year ahead, so its generation and its records all look newer.
    const aheadBy = 365 * 24 * 3_600_000;
    const a = owner(newDir(), 1, () => Date.now() + aheadBy);
    await put(a, 'a/1');
    // The new owner restores while the old one, paused and not yet aware, still ships one more
    // write (acknowledged only because this test has no lease: the lease deadline is what stops it
    // in production).
    const bDirectory = newDir();
    restoreDatabase(mirror, bDirectory);
    await put(a, 'a/late');
    const b = owner(bDirectory, 2);
    await b.mirror!.flushed();
    await put(b, 'b/1');

    const restored = restoredIds();
    expect(epochOfGeneration(restored.generation)).toBe(2);
    expect(restored.ids).toEqual(['a/1', 'b/1']);
  });

  it('before the new owner has a snapshot, a restore stops where it branched off, without what the old owner appended since', async () => {
    const a = owner(newDir(), 1);
    await put(a, 'a/1');
    await put(a, 'a/2');
    const bDirectory = newDir();
    restoreDatabase(mirror, bDirectory);
    await put(a, 'a/late'); // the paused old owner, before it could see the new epoch
    const b = owner(bDirectory, 2);
    await b.mirror!.flushed();
    const bGeneration = b.stats().Mirror!.Generation!;
    open.splice(open.indexOf(b), 1);
    await b.close();
    // The new owner dies before its first snapshot reached the mirror (emulated: its snapshot removed).
    for (const snapshot of listSnapshots(generationDir(mirror, bGeneration)))
      fs.rmSync(path.join(generationDir(mirror, bGeneration), SNAPSHOTS_DIR, snapshot.file));

    const restored = restoredIds();
    expect(epochOfGeneration(restored.generation)).toBe(1);
    expect(restored.ids).toEqual(['a/1', 'a/2']);

    // A third owner takes over from there; its own lineage then wins.
    const c = await takeOver(3);
    await put(c, 'c/1');
    const final = restoredIds();
    expect(epochOfGeneration(final.generation)).toBe(3);
    expect(final.ids).toEqual(['a/1', 'a/2', 'c/1']);
    expect(listGenerations(mirror).map(epochOfGeneration)).toContain(3);
  });

  it('an owner whose epoch is older than the mirror refuses to start writing it', async () => {
    const a = owner(newDir(), 2);
    await put(a, 'a/1');
    const stale = newDir();
    restoreDatabase(mirror, stale);
    const old = owner(stale, 1);
    await expect(put(old, 'old/1')).rejects.toMatchObject({ code: 'MirrorFenced' });
    expect(listGenerations(mirror).map(epochOfGeneration)).toEqual([2]);
  });
});

describe('property: owners taking over one after another', () => {
  it('the mirror always restores to the newest owner: every acknowledged write, no refused one', async () => {
    for (const seed of [1, 2, 3, 4, 5]) {
      mirror = path.join(tmp.dir, `mirror-${seed}`);
      const random = seededRandom(seed);
      const acknowledged = new Set<string>();
      const refused = new Set<string>();
      let epoch = 1;
      const owners = [owner(newDir(), epoch)];
      for (let step = 0; step < 40; step++) {
        const roll = random();
        if (roll < 0.15) {
          owners.push(await takeOver(++epoch));
          continue;
        }
        // Any owner may write, the current one most often; older ones are fenced.
        const writer = roll < 0.7 ? owners.length - 1 : Math.floor(random() * owners.length);
        const id = `s${seed}/e${writer + 1}/${step}`;
        try {
          await put(owners[writer]!, id);
          acknowledged.add(id);
        } catch (error) {
          expect(error, id).toMatchObject({ code: 'MirrorFenced' });
          expect(writer, id).toBeLessThan(owners.length - 1);
          refused.add(id);
        }
      }
      const restored = restoredIds();
      expect(epochOfGeneration(restored.generation), `seed ${seed}`).toBe(epoch);
      expect(restored.ids, `seed ${seed}`).toEqual([...acknowledged].sort());
      expect(restored.ids).toEqual(idsIn(owners.at(-1)!.directory));
      for (const id of refused) expect(restored.ids).not.toContain(id);
      await Promise.all(owners.map((db) => db.close()));
      open.splice(0);
    }
  });
});
