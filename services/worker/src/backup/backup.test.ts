import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { Database } from '@rookery/engine';
import { makeTempDir } from '@rookery/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DirectoryStorage } from '../storage/directory-storage.js';
import {
  createMirroredDatabase,
  DATABASE,
  documentsOf,
  mirrorDirectoryOf,
  prepareDatabase,
  queryResultsOf,
  TENANT,
  writeStep,
} from '../test-fixtures/mirrored-database.js';
import { deriveBackupKey } from './backup-key.js';
import { type BackupOutcome, makeBackup } from './make-backup.js';
import { restoreBackup } from './restore-backup.js';

let tmp: ReturnType<typeof makeTempDir>;
let mirrorRoot: string;
let storage: DirectoryStorage;
let db: Database;
const masterKey = randomBytes(32);
const key = deriveBackupKey(masterKey, TENANT);
const opened: Database[] = [];
let restores = 0;

beforeEach(() => {
  tmp = makeTempDir('rookery-backup-');
  mirrorRoot = path.join(tmp.dir, 'mirror');
  storage = new DirectoryStorage(path.join(tmp.dir, 'backups'));
});
afterEach(async () => {
  await Promise.all(opened.splice(0).map((d) => d.close()));
  tmp.cleanup();
});

/** The source database, mirrored; `clock` makes commit times (and so points in time) the test's own. */
function start(clock?: () => number): void {
  db = createMirroredDatabase(path.join(tmp.dir, 'local'), mirrorRoot, clock);
  opened.push(db);
}

async function steps(from: number, count: number): Promise<void> {
  for (let step = from; step < from + count; step++) await writeStep(db, step);
  await db.mirror!.flushed();
}

function backup(kind: 'full' | 'incremental', options: { key?: typeof key } = {}): Promise<BackupOutcome> {
  return makeBackup({
    tenantId: TENANT,
    database: DATABASE,
    kind,
    mirrorDirectory: mirrorDirectoryOf(mirrorRoot),
    storage,
    key: options.key ?? key,
  });
}

function restoreTarget(): string {
  return path.join(tmp.dir, 'restored', `db-${restores++}`);
}

async function restore(options: { backupId?: string; until?: number; key?: typeof key } = {}) {
  const targetDirectory = restoreTarget();
  const outcome = await restoreBackup({
    tenantId: TENANT,
    database: DATABASE,
    storage,
    key: options.key ?? key,
    targetDirectory,
    scratchDirectory: path.join(tmp.dir, 'scratch'),
    backupId: options.backupId,
    until: options.until,
  });
  const restored = Database.open(targetDirectory);
  opened.push(restored);
  return { outcome, restored, targetDirectory };
}

function storedFile(backupId: string, file: string): string {
  return path.join(storage.location, TENANT, DATABASE, backupId, file);
}

describe('backups from the mirror', () => {
  it('restores a full backup equal to the source, document for document, with equal query results', async () => {
    start();
    await prepareDatabase(db);
    await steps(0, 4);
    await db.mirror!.snapshotNow();
    await steps(4, 3); // transactions after the snapshot: the backup holds both
    const made = await backup('full');
    expect(made.kind).toBe('full');
    expect(made.manifest!.files.map((f) => f.name)).toEqual(['snapshot.rkb', 'transactions.rkb']);
    expect(made.transactions).toBeGreaterThan(0);

    const { outcome, restored } = await restore();
    expect(outcome.chain).toEqual([made.backupId]);
    expect(outcome.stoppedBy).toBe('end');
    const source = documentsOf(db);
    expect(source.documents.length).toBeGreaterThan(30);
    expect(source.changes.some((c) => c.deleted)).toBe(true);
    expect(documentsOf(restored)).toEqual(source);
    const results = await queryResultsOf(db);
    expect(JSON.stringify(results)).toContain('orders/');
    expect(await queryResultsOf(restored)).toEqual(results);
  });

  it('stores nothing readable: files are compressed and encrypted', async () => {
    start();
    await prepareDatabase(db);
    await steps(0, 3);
    const made = await backup('full');
    for (const file of made.manifest!.files) {
      const stored = fs.readFileSync(storedFile(made.backupId!, file.name));
      expect(stored.includes(Buffer.from('customers/'))).toBe(false);
      expect(stored.includes(Buffer.from('SQLite format'))).toBe(false);
    }
    const transactions = made.manifest!.files.find((f) => f.name === 'transactions.rkb')!;
    expect(transactions.storedBytes).toBeLessThan(transactions.plainBytes);
  });

  it('chains incremental backups and restores any of them, and points in time within the chain', async () => {
    let now = Date.parse('2026-11-01T10:00:00Z');
    start(() => now);
    await prepareDatabase(db);
    await steps(0, 2);
    const full = await backup('incremental'); // nothing to continue: made full
    expect(full.kind).toBe('full');
    expect(full.reason).toContain('no earlier backup');

    const states: { backupId: string; at: number; documents: ReturnType<typeof documentsOf> }[] = [];
    states.push({ backupId: full.backupId!, at: now, documents: documentsOf(db) });
    for (let round = 0; round < 3; round++) {
      now += 60_000;
      await steps(2 + round, 1);
      const made = await backup('incremental');
      expect(made.kind).toBe('incremental');
      expect(made.manifest!.parent!.id).toBe(states.at(-1)!.backupId);
      expect(made.manifest!.files.map((f) => f.name)).toEqual(['transactions.rkb']);
      states.push({ backupId: made.backupId!, at: now, documents: documentsOf(db) });
    }
    expect(await backup('incremental')).toMatchObject({
      backupId: null,
      reason: expect.stringContaining('nothing'),
    });

    const latest = await restore();
    expect(latest.outcome.chain).toEqual(states.map((s) => s.backupId));
    expect(documentsOf(latest.restored)).toEqual(states.at(-1)!.documents);
    expect(await queryResultsOf(latest.restored)).toEqual(await queryResultsOf(db));

    const middle = await restore({ backupId: states[1]!.backupId });
    expect(middle.outcome.chain).toEqual([states[0]!.backupId, states[1]!.backupId]);
    expect(documentsOf(middle.restored)).toEqual(states[1]!.documents);

    const pointInTime = await restore({ until: states[2]!.at + 30_000 });
    expect(pointInTime.outcome.stoppedBy).toBe('until');
    expect(documentsOf(pointInTime.restored)).toEqual(states[2]!.documents);
  });

  it('refuses a backup with one byte changed, naming the file, and restores nothing', async () => {
    start();
    await prepareDatabase(db);
    await steps(0, 3);
    const made = await backup('full');
    for (const name of ['snapshot.rkb', 'transactions.rkb']) {
      const file = storedFile(made.backupId!, name);
      const original = fs.readFileSync(file);
      const tampered = Buffer.from(original);
      tampered[Math.floor(tampered.length / 2)]! ^= 0x01;
      fs.writeFileSync(file, tampered);
      const target = restoreTarget();
      await expect(
        restoreBackup({
          tenantId: TENANT,
          database: DATABASE,
          storage,
          key,
          targetDirectory: target,
          scratchDirectory: path.join(tmp.dir, 'scratch'),
        }),
      ).rejects.toMatchObject({ code: 'BackupCorrupt', message: expect.stringContaining(name) });
      expect(Database.exists(target)).toBe(false);
      fs.writeFileSync(file, original);
    }
    // A changed manifest (here: a later position) fails its authentication.
    const manifestFile = storedFile(made.backupId!, 'manifest.json');
    const envelope = JSON.parse(fs.readFileSync(manifestFile, 'utf8'));
    envelope.body = envelope.body.replace('"stoppedBy":"end"', '"stoppedBy":"gap"');
    fs.writeFileSync(manifestFile, JSON.stringify(envelope));
    await expect(restore()).rejects.toMatchObject({
      code: 'BackupCorrupt',
      message: expect.stringContaining('fails authentication'),
    });
    // Every refusal came from the checks before decrypting: nothing was even laid out.
    expect(fs.existsSync(path.join(tmp.dir, 'scratch'))).toBe(false);
  });

  it('refuses a cut-short file and a missing link of the chain', async () => {
    start();
    await prepareDatabase(db);
    await steps(0, 2);
    const full = await backup('full');
    await steps(2, 1);
    const incremental = await backup('incremental');
    const file = storedFile(incremental.backupId!, 'transactions.rkb');
    const original = fs.readFileSync(file);
    fs.writeFileSync(file, original.subarray(0, original.length - 20));
    await expect(restore()).rejects.toMatchObject({ code: 'BackupCorrupt' });
    fs.writeFileSync(file, original);
    expect((await restore()).outcome.chain).toHaveLength(2);

    fs.rmSync(path.join(storage.location, TENANT, DATABASE, full.backupId!), { recursive: true });
    await expect(restore()).rejects.toMatchObject({
      code: 'BackupCorrupt',
      message: expect.stringContaining(`continues backup ${full.backupId}, which is missing`),
    });
  });

  it('refuses a backup made with another key, before reading its files', async () => {
    start();
    await prepareDatabase(db);
    await steps(0, 2);
    await backup('full');
    const otherMaster = deriveBackupKey(randomBytes(32), TENANT);
    const otherTenant = deriveBackupKey(masterKey, 'globex');
    for (const wrong of [otherMaster, otherTenant]) {
      await expect(restore({ key: wrong })).rejects.toMatchObject({
        code: 'BackupKeyMismatch',
        message: expect.stringContaining('another key'),
      });
    }
  });

  it('makes a full backup when the mirror started a new generation, and says why', async () => {
    start();
    await prepareDatabase(db);
    await steps(0, 2);
    await backup('full');
    // Unmirrored writes (mirror off) make the next mirrored start a new generation.
    await db.close();
    opened.splice(opened.indexOf(db), 1);
    const local = path.join(tmp.dir, 'local', DATABASE);
    const unmirrored = Database.open(local);
    await writeStep(unmirrored, 50);
    await unmirrored.close();
    db = Database.open(local, { mirror: { directory: mirrorDirectoryOf(mirrorRoot), mode: 'sync' } });
    opened.push(db);
    await db.mirror!.snapshotNow();
    const made = await backup('incremental');
    expect(made).toMatchObject({ kind: 'full', reason: expect.stringContaining('new generation') });
    expect(documentsOf((await restore()).restored)).toEqual(documentsOf(db));
  });
});
