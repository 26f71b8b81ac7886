// Indexes built away from the host: a "worker" (buildIndexOnMirror, reading only the mirror) builds
// the index while the database keeps taking writes, and the indexer adopts the snapshot and catches
// up. The adopted index must answer exactly as one built here from zero; a snapshot of another
// definition, or an old copy of a reset index, must never be adopted. Real files throughout.
import path from 'node:path';
import type { IndexDefinition } from '@rookery/protocol';
import { makeTempDir } from '@rookery/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Database } from '../database.js';
import { DatabaseIndexer } from '../indexing/database-indexer.js';
import { IndexCatalog } from '../query/index-catalog.js';
import { dumpIndex } from '../test-fixtures/index-dump.js';
import { buildIndexOnMirror } from './index-build.js';
import { listIndexSnapshots } from './index-snapshots.js';
import { generationDir, listGenerations } from './layout.js';
import { restoreDatabase } from './restore.js';

const BY_OWNER: IndexDefinition = {
  Name: 'Packages/ByOwner',
  Maps: [{ Collection: 'Packages', Fields: { Owner: 'Owner', Downloads: 'Downloads' } }],
};

/** The same documents' downloads per owner: a map/reduce index. */
const OWNER_TOTALS: IndexDefinition = {
  Name: 'Packages/DownloadsByOwner',
  Maps: [{ Collection: 'Packages', Fields: { Owner: 'Owner', Downloads: 'Downloads' } }],
  Reduce: { GroupBy: ['Owner'], Aggregate: { Downloads: { Sum: 'Downloads' } } },
};

let tmp: ReturnType<typeof makeTempDir>;
const cleanups: (() => void | Promise<void>)[] = [];
beforeEach(() => {
  tmp = makeTempDir('rookery-index-build-');
});
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
  tmp.cleanup();
});

interface Setup {
  db: Database;
  indexer: DatabaseIndexer;
  directory: string;
  mirror: string;
  requests: { name: string; build: string }[];
}

async function mirroredDatabase(documents: number): Promise<Setup> {
  const directory = path.join(tmp.dir, 'db');
  const mirror = path.join(tmp.dir, 'mirror');
  const db = Database.create(directory, 'shop', {
    mirror: { directory: mirror, mode: 'sync', flushIntervalMs: 0 },
  });
  cleanups.push(() => db.close());
  await writePackages(db, 0, documents);
  const requests: Setup['requests'] = [];
  const indexer = new DatabaseIndexer(directory, {
    batchSize: 16,
    snapshots: { mirrorDirectory: mirror, everyEtags: 1, everyMs: 1 },
    workerBuilds: {
      mirrorDirectory: mirror,
      threshold: 10,
      request: (definition, build) => requests.push({ name: definition.Name, build }),
    },
  });
  cleanups.push(() => indexer.close());
  return { db, indexer, directory, mirror, requests };
}

async function writePackages(db: Database, from: number, count: number): Promise<void> {
  await db.batch(
    Array.from({ length: count }, (_, i) => ({
      Type: 'PUT' as const,
      Id: `packages/${from + i}`,
      Document: {
        Owner: `owner-${(from + i) % 7}`,
        Downloads: from + i,
        '@metadata': { '@collection': 'Packages' },
      },
    })),
  );
  await db.mirror!.flushed();
}

/** The same database built from zero, here: what the adopted index must equal. */
function builtFromZero(mirror: string, definition: IndexDefinition): string {
  const directory = path.join(tmp.dir, `local-${Math.random().toString(36).slice(2)}`);
  restoreDatabase(mirror, directory, { indexes: false });
  const indexer = new DatabaseIndexer(directory, { batchSize: 16 });
  try {
    indexer.put(definition);
    indexer.runUntilIdle();
  } finally {
    indexer.close();
  }
  return directory;
}

describe('an index built by a worker from the mirror', () => {
  // A map/reduce index's first build maps, then reduces its groups (indexing/bulk-build.ts): the worker
  // builds it through the same indexer, so its reduce phase runs there too, before the snapshot is taken.
  it.each([
    ['map', BY_OWNER],
    ['map/reduce', OWNER_TOTALS],
  ] as const)(
    '%s: is not built here meanwhile, and adopted while writes continue it misses nothing',
    async (kind, definition) => {
      const { db, indexer, directory, mirror, requests } = await mirroredDatabase(200);
      indexer.put(definition);
      await db.putIndexDefinition(definition);
      await db.mirror!.flushed();
      expect(requests).toEqual([{ name: definition.Name, build: expect.any(String) }]);
      indexer.runUntilIdle();
      expect(indexer.stats(definition.Name)).toMatchObject({ LastIndexedEtag: 0, IsStale: true });
      expect(await indexer.snapshotDue()).toEqual([]); // an awaited index is never copied as if built

      let written = 200;
      let steps = 0;
      const outcome = await buildIndexOnMirror({
        mirrorDirectory: mirror,
        scratchDirectory: path.join(tmp.dir, 'scratch'),
        definition: definition,
        build: requests[0]!.build,
        batchSize: 16,
        // Writes, updates and deletes land while the worker builds (after its restore).
        onProgress: async (progress) => {
          if (progress.phase !== 'index') return;
          steps += 1;
          await writePackages(db, written, 3);
          await db.batch([{ Type: 'DELETE', Id: `packages/${written - 100}` }]);
          await writePackages(db, written - 50, 1); // an update of a document the build already read
          written += 3;
        },
      });
      expect(outcome.documents).toBe(200);
      // 13 batches of 16 documents; a map/reduce build's reduce phase takes at least one more step.
      if (kind === 'map/reduce') expect(steps).toBeGreaterThan(13);
      else expect(steps).toBe(13);
      await writePackages(db, written, 5);
      await db.batch([{ Type: 'DELETE', Id: 'packages/3' }]);
      await db.mirror!.flushed();

      expect(indexer.adoptBuilt()).toEqual([definition.Name]);
      expect(indexer.awaitingBuilds).toEqual([]);
      indexer.runUntilIdle();
      expect(indexer.stats(definition.Name)).toMatchObject({ IsStale: false });
      expect(dumpIndex(directory, definition.Name)).toEqual(
        dumpIndex(builtFromZero(mirror, definition), definition.Name),
      );
    },
  );

  it('is not adopted when its definition hash differs from the index the database holds', async () => {
    const { db, indexer, mirror, requests } = await mirroredDatabase(50);
    indexer.put(BY_OWNER);
    await db.putIndexDefinition(BY_OWNER);
    await db.mirror!.flushed();
    const other: IndexDefinition = {
      ...BY_OWNER,
      Maps: [{ Collection: 'Packages', Fields: { Owner: 'Owner' } }],
    };
    await buildIndexOnMirror({
      mirrorDirectory: mirror,
      scratchDirectory: path.join(tmp.dir, 'scratch'),
      definition: other,
      build: requests[0]!.build,
    });
    const generation = generationDir(mirror, listGenerations(mirror).at(-1)!);
    expect(listIndexSnapshots(generation, BY_OWNER.Name)).toHaveLength(1); // it is there…
    expect(indexer.adoptBuilt()).toEqual([]); // …and not taken
    expect(indexer.awaitingBuilds).toEqual([BY_OWNER.Name]);
    expect(indexer.stats(BY_OWNER.Name)).toMatchObject({ LastIndexedEtag: 0 });
  });

  it('on a reset, the old index answers until the build arrives, and its own older copy is never adopted', async () => {
    const { db, directory, mirror } = await mirroredDatabase(50);
    // Built here first (no worker policy), and copied to the mirror by the indexer.
    const local = new DatabaseIndexer(directory, {
      snapshots: { mirrorDirectory: mirror, everyEtags: 1, everyMs: 1 },
    });
    local.put(BY_OWNER);
    await db.putIndexDefinition(BY_OWNER);
    await db.mirror!.flushed();
    local.runUntilIdle();
    expect(await local.snapshotDue()).toHaveLength(1);
    local.close();

    const requests: { name: string; build: string }[] = [];
    const indexer = new DatabaseIndexer(directory, {
      workerBuilds: {
        mirrorDirectory: mirror,
        threshold: 10,
        request: (d, build) => requests.push({ name: d.Name, build }),
      },
    });
    cleanups.push(() => indexer.close());
    const before = dumpIndex(directory, BY_OWNER.Name);
    expect(indexer.reset(BY_OWNER.Name)).toBe(true);
    expect(dumpIndex(directory, BY_OWNER.Name)).toEqual(before); // the old index still answers
    expect(indexer.adoptBuilt()).toEqual([]); // the copy on the mirror is not the build asked for
    await writePackages(db, 50, 2);
    indexer.runUntilIdle(); // and keeps up meanwhile
    expect(indexer.stats(BY_OWNER.Name)).toMatchObject({ IsStale: false });

    await buildIndexOnMirror({
      mirrorDirectory: mirror,
      scratchDirectory: path.join(tmp.dir, 'scratch'),
      definition: BY_OWNER,
      build: requests[0]!.build,
    });
    expect(indexer.adoptBuilt()).toEqual([BY_OWNER.Name]);
    expect(dumpIndex(directory, BY_OWNER.Name)).toEqual(
      dumpIndex(builtFromZero(mirror, BY_OWNER), BY_OWNER.Name),
    );
  });

  it('on a changed definition, the old index answers until the worker’s build of the new one is adopted', async () => {
    const directory = path.join(tmp.dir, 'db');
    const mirror = path.join(tmp.dir, 'mirror');
    const db = Database.create(directory, 'shop', {
      mirror: { directory: mirror, mode: 'sync', flushIntervalMs: 0 },
    });
    cleanups.push(() => db.close());
    await writePackages(db, 0, 5);
    const requests: Setup['requests'] = [];
    const indexer = new DatabaseIndexer(directory, {
      batchSize: 16,
      workerBuilds: {
        mirrorDirectory: mirror,
        threshold: 10,
        request: (definition, build) => requests.push({ name: definition.Name, build }),
      },
    });
    cleanups.push(() => indexer.close());
    indexer.put(BY_OWNER); // 5 documents, under the threshold: built here
    await writePackages(db, 5, 195);
    indexer.runUntilIdle();
    expect(requests).toEqual([]);

    const changed: IndexDefinition = {
      Name: BY_OWNER.Name,
      Maps: [{ Collection: 'Packages', Fields: { Owner: 'Owner' } }],
    };
    indexer.put(changed);
    await db.putIndexDefinition(changed);
    await db.mirror!.flushed();
    expect(requests).toEqual([{ name: BY_OWNER.Name, build: expect.any(String) }]);
    indexer.runUntilIdle();
    // Not built here; the old definition answers, and keeps up with writes.
    await writePackages(db, 200, 2);
    indexer.runUntilIdle();
    expect(indexer.replacing).toEqual([BY_OWNER.Name]);
    const catalog = new IndexCatalog(directory);
    cleanups.push(() => catalog.close());
    expect(catalog.isReplacing(BY_OWNER.Name)).toBe(true);
    expect(catalog.reader(BY_OWNER.Name)?.definition).toEqual(BY_OWNER);
    expect(indexer.stats(BY_OWNER.Name)).toMatchObject({ EntriesCount: 202, IsStale: false });

    await buildIndexOnMirror({
      mirrorDirectory: mirror,
      scratchDirectory: path.join(tmp.dir, 'scratch'),
      definition: changed,
      build: requests[0]!.build,
      batchSize: 16,
    });
    await writePackages(db, 202, 3);
    expect(indexer.adoptBuilt()).toEqual([BY_OWNER.Name]);
    expect(indexer.replacing).toEqual([]);
    expect(catalog.isReplacing(BY_OWNER.Name)).toBe(false);
    expect(catalog.reader(BY_OWNER.Name)?.definition).toEqual(changed);
    indexer.runUntilIdle();
    expect(dumpIndex(directory, BY_OWNER.Name)).toEqual(
      dumpIndex(builtFromZero(mirror, changed), BY_OWNER.Name),
    );
  });
});
