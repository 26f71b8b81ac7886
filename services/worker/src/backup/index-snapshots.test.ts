// Backups carry the mirror's index snapshots (by default), and a database restored from a backup gets
// its indexes from them: the same query answers as rebuilding every index from its definition.
import { randomBytes } from 'node:crypto';
import path from 'node:path';
import { Database, DatabaseIndexer } from '@rookery/engine';
import { makeTempDir } from '@rookery/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DirectoryStorage } from '../storage/directory-storage.js';
import {
  createMirroredDatabase,
  DATABASE,
  INDEXES,
  mirrorDirectoryOf,
  prepareDatabase,
  queryResultsOf,
  TENANT,
  writeStep,
} from '../test-fixtures/mirrored-database.js';
import { deriveBackupKey } from './backup-key.js';
import { makeBackup } from './make-backup.js';
import { restoreBackup } from './restore-backup.js';

let tmp: ReturnType<typeof makeTempDir>;
let mirrorRoot: string;
let storage: DirectoryStorage;
let db: Database;
let indexer: DatabaseIndexer;
const key = deriveBackupKey(randomBytes(32), TENANT);
const opened: Database[] = [];
let restores = 0;

beforeEach(async () => {
  tmp = makeTempDir('rookery-backup-indexes-');
  mirrorRoot = path.join(tmp.dir, 'mirror');
  storage = new DirectoryStorage(path.join(tmp.dir, 'backups'));
  db = createMirroredDatabase(path.join(tmp.dir, 'local'), mirrorRoot);
  opened.push(db);
  await prepareDatabase(db);
  // The tenant's indexer, copying every caught-up index to the mirror when asked.
  indexer = new DatabaseIndexer(db.directory, {
    snapshots: { mirrorDirectory: mirrorDirectoryOf(mirrorRoot), everyEtags: 1 },
  });
  for (const definition of INDEXES) indexer.put(definition);
});
afterEach(async () => {
  indexer.close();
  await Promise.all(opened.splice(0).map((d) => d.close()));
  tmp.cleanup();
});

async function steps(from: number, count: number): Promise<void> {
  for (let step = from; step < from + count; step++) await writeStep(db, step);
  await db.mirror!.flushed();
}

const backup = (kind: 'full' | 'incremental', indexes?: boolean) =>
  makeBackup({
    tenantId: TENANT,
    database: DATABASE,
    kind,
    mirrorDirectory: mirrorDirectoryOf(mirrorRoot),
    storage,
    key,
    ...(indexes === undefined ? {} : { indexes }),
  });

async function restore(backupId: string) {
  const targetDirectory = path.join(tmp.dir, 'restored', `db-${restores++}`);
  const outcome = await restoreBackup({
    tenantId: TENANT,
    database: DATABASE,
    storage,
    key,
    targetDirectory,
    scratchDirectory: path.join(tmp.dir, 'scratch'),
    backupId,
  });
  const restored = Database.open(targetDirectory);
  opened.push(restored);
  return { outcome, results: await queryResultsOf(restored) };
}

const names = INDEXES.map((d) => d.Name).sort();

describe('index snapshots in backups', () => {
  it('a full backup carries them, and its restore answers as a rebuild does; without them every index is rebuilt', async () => {
    await steps(0, 3);
    indexer.runUntilIdle();
    const copies = await indexer.snapshotDue();
    expect(copies.map((c) => c.name).sort()).toEqual(names);
    await steps(3, 2); // after the copies: the restored indexes catch up with these

    const withIndexes = await backup('full');
    expect(withIndexes.manifest!.indexes.map((i) => i.name).sort()).toEqual(names);
    expect(withIndexes.manifest!.files.map((f) => f.name)).toEqual(
      expect.arrayContaining(['snapshot.rkb', 'transactions.rkb', 'index-0.rkb', 'index-1.rkb']),
    );
    const withoutIndexes = await backup('full', false);
    expect(withoutIndexes.manifest!.indexes).toEqual([]);

    const fromSnapshots = await restore(withIndexes.backupId!);
    expect(fromSnapshots.outcome.indexes).toEqual({ restored: names, rebuilt: [] });
    const rebuilt = await restore(withoutIndexes.backupId!);
    expect(rebuilt.outcome.indexes).toEqual({ restored: [], rebuilt: names });
    expect(fromSnapshots.results).toEqual(rebuilt.results);
  });

  it('an incremental backup carries only the copies taken since the backup it continues, and its restore uses them', async () => {
    await steps(0, 2);
    indexer.runUntilIdle();
    await indexer.snapshotDue();
    const full = await backup('full');
    await steps(2, 2);
    // No new copy since: listed, stored once, in the full backup.
    const unchanged = (await backup('incremental')).manifest!;
    expect((await restore(unchanged.id)).outcome.indexes).toEqual({ restored: names, rebuilt: [] });
    expect(unchanged.indexes.map((i) => i.in)).toEqual(INDEXES.map(() => full.backupId));
    expect(unchanged.files.map((f) => f.name)).toEqual(['transactions.rkb']);
    indexer.runUntilIdle();
    const newer = await indexer.snapshotDue();
    expect(newer.length).toBe(INDEXES.length);
    await steps(4, 1);
    const incremental = await backup('incremental');
    expect(incremental.manifest!.kind).toBe('incremental');
    expect(
      incremental
        .manifest!.indexes.map(({ name, etag, txid, in: holder }) => ({ name, etag, txid, holder }))
        .sort((a, b) => a.name.localeCompare(b.name)),
    ).toEqual(
      newer
        .map(({ name, etag, txid }) => ({ name, etag, txid, holder: undefined }))
        .sort((a, b) => a.name.localeCompare(b.name)),
    );

    const latest = await restore(incremental.backupId!);
    expect(latest.outcome.chain[0]).toBe(full.backupId);
    expect(latest.outcome.indexes).toEqual({ restored: names, rebuilt: [] });
    const rebuilt = await restore((await backup('full', false)).backupId!);
    expect(latest.results).toEqual(rebuilt.results);
  });
});
