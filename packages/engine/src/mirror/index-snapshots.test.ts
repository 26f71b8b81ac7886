// Index snapshots on the mirror: a restore takes each index from the newest copy it can trust and the
// indexer catches up from there, which must answer exactly as a rebuild from the definition would.
// Real files throughout: a mirrored database, its indexer, the mirror directory, restores.
import fs from 'node:fs';
import path from 'node:path';
import type { IndexDefinition } from '@rookery/protocol';
import { makeTempDir } from '@rookery/testkit';
import BetterSqlite3 from 'better-sqlite3';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Database } from '../database.js';
import { DatabaseIndexer } from '../indexing/database-indexer.js';
import { INDEXES_DIRECTORY, indexFileName } from '../indexing/index-file.js';
import { dumpIndex } from '../test-fixtures/index-dump.js';
import { listIndexSnapshots, pruneIndexSnapshots, takeIndexSnapshot } from './index-snapshots.js';
import { epochOfGeneration, generationDir, listGenerations, readParent } from './layout.js';
import { restoreDatabase } from './restore.js';

const BY_OWNER: IndexDefinition = {
  Name: 'Packages/ByOwner',
  Maps: [{ Collection: 'Packages', Fields: { Owner: 'Owner', Downloads: 'Downloads' } }],
};
const DOWNLOADS_BY_OWNER: IndexDefinition = {
  Name: 'Packages/DownloadsByOwner',
  Maps: [{ Collection: 'Packages', Fields: { Owner: 'Owner', Downloads: 'Downloads' } }],
  Reduce: { GroupBy: ['Owner'], Aggregate: { Total: { Sum: 'Downloads' }, Count: { Count: true } } },
};
const WITH_ARCHIVED: IndexDefinition = {
  Name: 'Packages/All',
  Maps: [{ Collection: 'Packages', Fields: { Owner: 'Owner' } }],
  IncludeArchived: true,
};
const DEFINITIONS = [BY_OWNER, DOWNLOADS_BY_OWNER, WITH_ARCHIVED];

let tmp: ReturnType<typeof makeTempDir>;
let dirs = 0;
const cleanups: (() => void | Promise<void>)[] = [];
beforeEach(() => {
  tmp = makeTempDir('rookery-index-snapshots-');
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  tmp.cleanup();
});
const newDir = (name = 'db') => path.join(tmp.dir, `${name}-${dirs++}`);

/** The clock every write, mirror record and index snapshot reads: moved only by the test. */
let now = 1_700_000_000_000;
const clock = () => now;

interface Source {
  db: Database;
  indexer: DatabaseIndexer;
  mirror: string;
  directory: string;
}

/** A mirrored database (sync mode) and its indexer, which copies a caught-up index whenever asked. */
function mirroredDatabase(definitions: IndexDefinition[] = DEFINITIONS, epoch = 0): Promise<Source> {
  const directory = newDir();
  const mirror = newDir('mirror');
  const db = Database.create(directory, 'shop', {
    clock,
    mirror: { directory: mirror, mode: 'sync', flushIntervalMs: 0, epoch },
  });
  const indexer = new DatabaseIndexer(directory, {
    batchSize: 7, // several batches even for a few documents
    snapshots: { mirrorDirectory: mirror, everyEtags: 1, everyMs: 1_000, now: clock },
  });
  cleanups.push(
    () => db.close(),
    () => indexer.close(),
  );
  return (async () => {
    for (const definition of definitions) {
      indexer.put(definition);
      await db.putIndexDefinition(definition);
    }
    await db.mirror!.flushed();
    return { db, indexer, mirror, directory };
  })();
}

type Op =
  | { kind: 'put'; id: number; owner: string; downloads: number }
  | { kind: 'delete'; id: number }
  | { kind: 'archive'; id: number };

const operation: fc.Arbitrary<Op> = fc.oneof(
  fc.record({
    kind: fc.constant('put' as const),
    id: fc.integer({ min: 0, max: 20 }),
    owner: fc.constantFrom('ann', 'bo', 'cy'),
    downloads: fc.integer({ min: 0, max: 1000 }),
  }),
  fc.record({ kind: fc.constant('delete' as const), id: fc.integer({ min: 0, max: 20 }) }),
  fc.record({ kind: fc.constant('archive' as const), id: fc.integer({ min: 0, max: 20 }) }),
);

async function apply(db: Database, ops: readonly Op[]): Promise<void> {
  for (const op of ops) {
    now += 10;
    const id = `packages/${op.id}`;
    if (op.kind === 'delete') await db.batch([{ Type: 'DELETE', Id: id }]);
    else if (op.kind === 'put') {
      await db.batch([
        {
          Type: 'PUT',
          Id: id,
          Document: {
            Owner: op.owner,
            Downloads: op.downloads,
            '@metadata': { '@collection': 'Packages' },
          },
        },
      ]);
    } else if (db.get(id)) {
      // Archived by the sweep, as in production: its @archive-at has passed.
      const current = JSON.parse(db.get(id)!.json) as Record<string, unknown>;
      const metadata = { '@collection': 'Packages', '@archive-at': new Date(now - 1).toISOString() };
      await db.batch([{ Type: 'PUT', Id: id, Document: { ...current, '@metadata': metadata } }]);
      await db.sweepDue(now);
    }
  }
}

/** Restores the mirror into a new directory and brings its indexes up to date: from snapshots, or rebuilt. */
function restoreAndIndex(mirror: string, options: { until?: number; indexes: boolean }) {
  const directory = newDir('restored');
  const result = restoreDatabase(mirror, directory, options);
  const indexer = new DatabaseIndexer(directory, { batchSize: 5 });
  try {
    const restoredDb = new BetterSqlite3(path.join(directory, 'docs.db'), { readonly: true });
    const definitions = (
      restoredDb.prepare('SELECT definition FROM index_definitions').all() as { definition: string }[]
    ).map((r) => JSON.parse(r.definition) as IndexDefinition);
    restoredDb.close();
    // What the tenant does at start (TenantIndexing.reconcileDefinitions): a definition without its file is built.
    for (const definition of definitions)
      if (!indexer.names.includes(definition.Name)) indexer.put(definition);
    indexer.runUntilIdle();
  } finally {
    indexer.close();
  }
  return { directory, result };
}

describe('restoring indexes from the mirror', () => {
  it('answers as a rebuild does after random writes, deletes and archivals around the snapshots (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.array(operation, { minLength: 1, maxLength: 15 }),
        fc.array(operation, { maxLength: 15 }),
        fc.boolean(),
        async (before, after, indexAfter) => {
          const source = await mirroredDatabase();
          await apply(source.db, before);
          source.indexer.runUntilIdle();
          now += 2_000;
          const copied = await source.indexer.snapshotDue();
          // A copy of every index, unless nothing was ever written (an empty index is rebuilt for free).
          expect(copied.length).toBe(source.db.lastEtag > 0 ? DEFINITIONS.length : 0);
          // Written after the copy: the restored indexes must catch up with these.
          await apply(source.db, after);
          if (indexAfter) source.indexer.runUntilIdle();
          await source.db.mirror!.flushed();

          const fromSnapshots = restoreAndIndex(source.mirror, { indexes: true });
          const rebuilt = restoreAndIndex(source.mirror, { indexes: false });
          expect(fromSnapshots.result.indexes.restored.map((r) => r.name).sort()).toEqual(
            copied.map((c) => c.name).sort(),
          );
          for (const definition of DEFINITIONS) {
            expect(dumpIndex(fromSnapshots.directory, definition.Name)).toEqual(
              dumpIndex(rebuilt.directory, definition.Name),
            );
          }
          for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
        },
      ),
      { numRuns: 8 },
    );
  });

  it('does not use a snapshot of a definition that changed since: that index is rebuilt', async () => {
    const source = await mirroredDatabase([BY_OWNER, DOWNLOADS_BY_OWNER]);
    await apply(source.db, [
      { kind: 'put', id: 1, owner: 'ann', downloads: 3 },
      { kind: 'put', id: 2, owner: 'bo', downloads: 5 },
    ]);
    source.indexer.runUntilIdle();
    now += 2_000;
    expect((await source.indexer.snapshotDue()).length).toBe(2);
    const changed: IndexDefinition = {
      ...BY_OWNER,
      Maps: [{ Collection: 'Packages', Fields: { Owner: 'Owner' } }],
    };
    source.indexer.put(changed);
    await source.db.putIndexDefinition(changed);
    await source.db.mirror!.flushed();

    const { result, directory } = restoreAndIndex(source.mirror, { indexes: true });
    expect(result.indexes.restored.map((r) => r.name)).toEqual([DOWNLOADS_BY_OWNER.Name]);
    expect(result.indexes.rebuilt).toEqual([BY_OWNER.Name]);
    const rebuilt = restoreAndIndex(source.mirror, { indexes: false });
    expect(dumpIndex(directory, BY_OWNER.Name)).toEqual(dumpIndex(rebuilt.directory, BY_OWNER.Name));
  });

  it('does not use a snapshot whose bytes do not match its checksum: the older intact one is used', async () => {
    const source = await mirroredDatabase([BY_OWNER]);
    await apply(source.db, [{ kind: 'put', id: 1, owner: 'ann', downloads: 3 }]);
    source.indexer.runUntilIdle();
    now += 2_000;
    const [older] = await source.indexer.snapshotDue();
    await apply(source.db, [{ kind: 'put', id: 2, owner: 'bo', downloads: 5 }]);
    source.indexer.runUntilIdle();
    now += 2_000;
    const [newer] = await source.indexer.snapshotDue();
    expect(newer!.etag).toBeGreaterThan(older!.etag);
    // One byte flipped in the middle of the newest copy (a torn upload, a bad disk).
    const file = path.join(newer!.directory, 'index.db');
    const bytes = fs.readFileSync(file);
    bytes[Math.floor(bytes.length / 2)]! ^= 0xff;
    fs.writeFileSync(file, bytes);
    await source.db.mirror!.flushed();

    const { result, directory } = restoreAndIndex(source.mirror, { indexes: true });
    expect(result.indexes.skipped).toEqual([
      { name: BY_OWNER.Name, reason: 'checksum', directory: newer!.directory },
    ]);
    expect(result.indexes.restored).toMatchObject([{ name: BY_OWNER.Name, etag: older!.etag }]);
    const rebuilt = restoreAndIndex(source.mirror, { indexes: false });
    expect(dumpIndex(directory, BY_OWNER.Name)).toEqual(dumpIndex(rebuilt.directory, BY_OWNER.Name));
  });

  it('a point-in-time restore uses the newest snapshot at or below the restored state, never a later one', async () => {
    const source = await mirroredDatabase([BY_OWNER]);
    const copies = [];
    const times = [];
    for (let round = 0; round < 3; round++) {
      await apply(source.db, [
        { kind: 'put', id: round, owner: 'ann', downloads: round },
        { kind: 'delete', id: round - 1 },
      ]);
      source.indexer.runUntilIdle();
      now += 2_000;
      copies.push((await source.indexer.snapshotDue())[0]!);
      times.push(now);
      now += 2_000;
    }
    await source.db.mirror!.flushed();
    // Between the second and the third copy: the third one read a state this restore does not reach
    // (document 1 deleted), so it must not be used.
    const { result, directory } = restoreAndIndex(source.mirror, { until: times[1]!, indexes: true });
    expect(result.indexes.restored).toMatchObject([{ name: BY_OWNER.Name, etag: copies[1]!.etag }]);
    const rebuilt = restoreAndIndex(source.mirror, { until: times[1]!, indexes: false });
    expect(dumpIndex(directory, BY_OWNER.Name)).toEqual(dumpIndex(rebuilt.directory, BY_OWNER.Name));
  });

  it("after a failover, uses the old owner's copies up to the branch point, never one it took of writes after it", async () => {
    // Owner A (epoch 1) with its indexer; a copy of the index.
    const a = await mirroredDatabase([BY_OWNER], 1);
    await apply(a.db, [
      { kind: 'put', id: 1, owner: 'ann', downloads: 3 },
      { kind: 'put', id: 2, owner: 'ann', downloads: 5 },
    ]);
    a.indexer.runUntilIdle();
    now += 2_000;
    const [beforeTakeover] = await a.indexer.snapshotDue();
    const oldGeneration = listGenerations(a.mirror).at(-1)!;

    // B (epoch 2) takes over: restored from the mirror, it starts its own generation branching off A's.
    const bDirectory = newDir('owner-b');
    const takeover = restoreDatabase(a.mirror, bDirectory);
    expect(takeover.indexes.restored).toMatchObject([{ name: BY_OWNER.Name, etag: beforeTakeover!.etag }]);

    // A, not knowing yet, commits a delete after the state B was restored from and indexes it, and a copy
    // of that lands in its old generation — as a write racing the takeover could. (Made before B opens its
    // epoch: once it has, A's shipper may learn of the fence on its own timer, under load before this
    // write, and refuse it before it commits — a race that made this test fail when A's write came after.)
    await a.db.batch([{ Type: 'DELETE', Id: 'packages/1' }]);
    const b = Database.open(bDirectory, {
      clock,
      mirror: { directory: a.mirror, mode: 'sync', epoch: 2, flushIntervalMs: 0 },
    });
    cleanups.push(() => b.close());
    await b.mirror!.flushed();
    const newGeneration = listGenerations(a.mirror).at(-1)!;
    expect(epochOfGeneration(newGeneration)).toBe(2);
    expect(readParent(generationDir(a.mirror, newGeneration))).toEqual({
      generation: oldGeneration,
      txid: takeover.txid,
    });
    // From here A is fenced: its next write is refused.
    await expect(a.db.batch([{ Type: 'DELETE', Id: 'packages/2' }])).rejects.toThrow();
    a.indexer.runUntilIdle();
    const aIndex = new BetterSqlite3(path.join(a.directory, INDEXES_DIRECTORY, indexFileName(BY_OWNER.Name)));
    const aDocs = new BetterSqlite3(path.join(a.directory, 'docs.db'), { readonly: true });
    now += 2_000;
    const late = await takeIndexSnapshot(aIndex, {
      generationDirectory: generationDir(a.mirror, oldGeneration),
      docsTxid: () =>
        Number((aDocs.prepare("SELECT value FROM meta WHERE key = 'txid'").get() as { value: string }).value),
      now: clock,
    });
    aIndex.close();
    aDocs.close();
    expect(late.txid).toBeGreaterThan(takeover.txid);
    expect(late.etag).toBeGreaterThan(beforeTakeover!.etag);

    // B writes on; a restore now takes B's lineage: A's copy from before the branch point, not the late one.
    await apply(b, [{ kind: 'put', id: 3, owner: 'bo', downloads: 7 }]);
    await b.mirror!.flushed();
    const { result, directory } = restoreAndIndex(a.mirror, { indexes: true });
    expect(result.generation).toBe(newGeneration);
    expect(result.indexes.restored).toMatchObject([
      { name: BY_OWNER.Name, etag: beforeTakeover!.etag, generation: oldGeneration },
    ]);
    const rebuilt = restoreAndIndex(a.mirror, { indexes: false });
    expect(dumpIndex(directory, BY_OWNER.Name)).toEqual(dumpIndex(rebuilt.directory, BY_OWNER.Name));
  });

  it('prunes with the database: per index, the newest copy at or before the horizon and every later one stay', async () => {
    const source = await mirroredDatabase([BY_OWNER, DOWNLOADS_BY_OWNER]);
    const taken = [];
    for (let round = 0; round < 3; round++) {
      await apply(source.db, [{ kind: 'put', id: round, owner: 'ann', downloads: round }]);
      source.indexer.runUntilIdle();
      now += 2_000;
      taken.push(await source.indexer.snapshotDue());
    }
    const generationDirectory = generationDir(source.mirror, listGenerations(source.mirror).at(-1)!);
    // A copy a crash interrupted, long ago.
    const leftover = path.join(generationDirectory, 'indexes', '.abandoned.tmp');
    fs.mkdirSync(leftover);
    fs.utimesSync(leftover, new Date(now - 2 * 3_600_000), new Date(now - 2 * 3_600_000));
    const removed: string[] = [];
    // The horizon falls between the second and the third round's copies.
    pruneIndexSnapshots(generationDirectory, taken[1]![0]!.takenAt, now, (file) => {
      removed.push(file);
      fs.rmSync(file, { recursive: true, force: true });
    });
    expect(removed.sort()).toEqual([...taken[0]!.map((c) => c.directory), leftover].sort());
    expect(
      listIndexSnapshots(generationDirectory)
        .map((c) => c.directory)
        .sort(),
    ).toEqual([...taken[1]!, ...taken[2]!].map((c) => c.directory).sort());
  });

  it('takes a copy only of a caught-up index, into the generation the local file continues', async () => {
    const source = await mirroredDatabase([BY_OWNER]);
    await apply(source.db, [{ kind: 'put', id: 1, owner: 'ann', downloads: 3 }]);
    now += 2_000;
    expect(await source.indexer.snapshotDue()).toEqual([]); // not indexed yet
    source.indexer.runUntilIdle();
    const [copy] = await source.indexer.snapshotDue();
    const generation = listGenerations(source.mirror).at(-1)!;
    expect(listIndexSnapshots(generationDir(source.mirror, generation))).toMatchObject([
      { name: BY_OWNER.Name, etag: copy!.etag, txid: copy!.txid },
    ]);
    expect(await source.indexer.snapshotDue()).toEqual([]); // nothing new since
  });
});
