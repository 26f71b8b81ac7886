import fs from 'node:fs';
import path from 'node:path';
import { RookeryError } from '@rookery/protocol';
import { makeTempDir } from '@rookery/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DatabaseCatalog } from '../catalog.js';
import { Database, type DatabaseOptions } from '../database.js';
import { dumpDatabase } from '../test-fixtures/docs-dump.js';
import { mixedStep, prepareWorkload, seededRandom } from '../test-fixtures/mixed-workload.js';
import { generationDir, listGenerations, listSegments, listSnapshots, SEGMENTS_DIR } from './layout.js';
import type { MirrorOptions } from './options.js';
import { restoreDatabase } from './restore.js';

let tmp: ReturnType<typeof makeTempDir>;
let local: string;
let mirror: string;
let restores = 0;
const open: Database[] = [];

beforeEach(() => {
  tmp = makeTempDir('rookery-mirror-');
  local = path.join(tmp.dir, 'local');
  mirror = path.join(tmp.dir, 'mirror');
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((db) => db.close()));
  tmp.cleanup();
});

function mirrored(mode: 'async' | 'sync', options: Partial<MirrorOptions> = {}, extra: DatabaseOptions = {}) {
  return { ...extra, mirror: { directory: mirror, mode, flushIntervalMs: 5, ...options } };
}

function create(options: DatabaseOptions): Database {
  const db = Database.create(local, 'shop', options);
  open.push(db);
  return db;
}

function reopen(options: DatabaseOptions): Database {
  const db = Database.open(local, options);
  open.push(db);
  return db;
}

async function close(db: Database): Promise<void> {
  open.splice(open.indexOf(db), 1);
  await db.close();
}

/** Restores into a fresh directory and returns what the restored file holds. */
function restored(until?: number) {
  const target = path.join(tmp.dir, `restored-${restores++}`);
  const result = restoreDatabase(mirror, target, { until });
  return { result, dump: dumpDatabase(target), target };
}

async function run(db: Database, steps: number, seed: number, from = 0): Promise<void> {
  const random = seededRandom(seed);
  for (let step = from; step < from + steps; step++) await mixedStep(db, random, step);
}

const generationOf = (db: Database) => db.stats().Mirror!.Generation;

describe('mirror and restore', () => {
  it('restores exactly what the source holds, after a workload of every kind of write', async () => {
    const db = create(mirrored('async'));
    await prepareWorkload(db);
    await run(db, 10, 1);
    await db.mirror!.snapshotNow();
    await run(db, 10, 2, 10);
    await db.mirror!.snapshotNow();
    await run(db, 10, 3, 20);
    await db.mirror!.flushed();
    const source = dumpDatabase(local);
    expect(source.index_definitions!.length).toBeGreaterThan(0);
    expect(source.subscriptions!.some((s) => (s as { last_ack_at: unknown }).last_ack_at !== null)).toBe(
      true,
    );
    expect(source.tombstones!.length).toBeGreaterThan(0);
    expect(source.docs!.some((d) => String((d as { body: unknown }).body).startsWith('blob:'))).toBe(true);
    const { result, dump } = restored();
    expect(result.stoppedBy).toBe('end');
    expect(result.transactionsReplayed).toBeGreaterThan(0);
    expect(dump).toEqual(source);

    await close(db);
    expect(restored().dump).toEqual(source);
  });

  it('restores to any point in time: the state right after the last transaction before it', async () => {
    let now = Date.parse('2026-11-01T10:00:00Z');
    const db = create(mirrored('sync', {}, { clock: () => now }));
    await prepareWorkload(db);
    await db.mirror!.flushed();
    const dumps: { at: number; dump: ReturnType<typeof dumpDatabase> }[] = [];
    const random = seededRandom(7);
    for (let step = 0; step < 12; step++) {
      now += 1000;
      await mixedStep(db, random, step);
      if (step === 4 || step === 8) await db.mirror!.snapshotNow();
      dumps.push({ at: now, dump: dumpDatabase(local) });
    }
    for (const { at, dump } of dumps) {
      expect(restored(at).dump, `restored to ${new Date(at).toISOString()}`).toEqual(dump);
      expect(restored(at + 500).dump).toEqual(dump);
    }
    const first = listSnapshots(generationDir(mirror, generationOf(db)!))[0]!;
    expect(() => restored(first.takenAt - 1)).toThrow(
      expect.objectContaining({ code: 'RestorePointUnavailable' }),
    );
  });

  it('acknowledges a sync-mode write only once a restore brings it back', async () => {
    const db = create(mirrored('sync'));
    for (let i = 0; i < 5; i++) {
      await db.batch([{ Type: 'PUT', Id: `orders/${i}`, Document: { N: i } }]);
      // No flush, no close: what was acknowledged must already be on the mirror.
      const ids = restored().dump.docs!.map((d) => (d as { id: string }).id);
      expect(ids).toContain(`orders/${i}`);
    }
  });

  it('fails a sync-mode write the mirror cannot confirm, keeps it locally, and says why in the stats', async () => {
    fs.writeFileSync(path.join(tmp.dir, 'not-a-directory'), '');
    mirror = path.join(tmp.dir, 'not-a-directory', 'shop');
    const db = create(mirrored('sync', { confirmTimeoutMs: 300 }));
    const error = await db
      .batch([{ Type: 'PUT', Id: 'orders/1', Document: { N: 1 } }])
      .catch((e: unknown) => e);
    expect(error).toBeInstanceOf(RookeryError);
    expect((error as RookeryError).code).toBe('MirrorUnavailable');
    expect(db.get('orders/1')).not.toBeNull();
    expect(db.stats().Mirror).toMatchObject({ State: 'failing', MirroredTxid: 0 });
    expect(db.stats().Mirror!.LastError).toMatch(/ENOTDIR/);
  });

  it('holds async acknowledgments while the lag is over its bound, but never fails them', async () => {
    fs.writeFileSync(path.join(tmp.dir, 'not-a-directory'), '');
    mirror = path.join(tmp.dir, 'not-a-directory', 'shop');
    const db = create(mirrored('async', { confirmTimeoutMs: 300, maxLagMs: 10 }));
    await db.batch([{ Type: 'PUT', Id: 'orders/1', Document: { N: 1 } }]); // nothing behind yet
    await new Promise((resolve) => setTimeout(resolve, 30));
    let acknowledged = false;
    const second = db.batch([{ Type: 'PUT', Id: 'orders/2', Document: { N: 2 } }]).then(() => {
      acknowledged = true;
    });
    await new Promise((resolve) => setImmediate(resolve));
    expect(acknowledged).toBe(false); // orders/1 has waited longer than maxLagMs
    await second; // acknowledged once confirmTimeoutMs passed, mirror or not
    const stats = db.stats().Mirror!;
    expect(stats).toMatchObject({ LagTransactions: 2, MirroredTxid: 0 });
    expect(stats.LagMs).toBeGreaterThan(10);
    expect(stats.LagBytes).toBeGreaterThan(0);
  });

  it('continues its generation after a clean restart, and starts a new one after writes the mirror never saw', async () => {
    let db = create(mirrored('async'));
    await prepareWorkload(db);
    await run(db, 5, 11);
    await db.mirror!.flushed();
    const first = generationOf(db);
    await close(db);

    db = reopen(mirrored('async'));
    await run(db, 5, 12, 5);
    await db.mirror!.flushed();
    expect(generationOf(db)).toBe(first);
    expect(restored().dump).toEqual(dumpDatabase(local));
    await close(db);

    db = reopen({}); // not mirrored: these transactions never reach the mirror
    await run(db, 3, 13, 10);
    await close(db);
    db = reopen(mirrored('async'));
    await db.batch([{ Type: 'PUT', Id: 'after/1', Document: {} }]);
    await db.mirror!.flushed();
    expect(generationOf(db)).not.toBe(first);
    expect(listGenerations(mirror)).toHaveLength(2);
    expect(restored().dump).toEqual(dumpDatabase(local));
  });

  it('ignores a torn tail on the mirror and goes on after the last whole transaction', async () => {
    let db = create(mirrored('sync'));
    await prepareWorkload(db);
    await run(db, 4, 21);
    const generation = generationOf(db)!;
    await close(db);
    const segments = path.join(generationDir(mirror, generation), SEGMENTS_DIR);
    const last = listSegments(generationDir(mirror, generation)).at(-1)!;
    fs.appendFileSync(path.join(segments, last.file), Buffer.from('RKTX but not a whole record'));

    db = reopen(mirrored('sync'));
    await run(db, 4, 22, 4);
    await db.mirror!.flushed();
    expect(generationOf(db)).toBe(generation);
    expect(restored().dump).toEqual(dumpDatabase(local));
  });

  it('starts a new generation when the mirror lost transactions the local file has', async () => {
    let db = create(mirrored('sync'));
    await prepareWorkload(db);
    await run(db, 4, 31);
    const generation = generationOf(db)!;
    await close(db);
    // As after a crash in async mode: the last transaction never fully reached the mirror.
    const last = listSegments(generationDir(mirror, generation)).at(-1)!;
    const file = path.join(generationDir(mirror, generation), SEGMENTS_DIR, last.file);
    fs.truncateSync(file, fs.statSync(file).size - 10);

    db = reopen(mirrored('sync'));
    await db.mirror!.flushed();
    expect(generationOf(db)).not.toBe(generation);
    expect(restored().dump).toEqual(dumpDatabase(local));
  });

  it('prunes what no restore within the retention needs, and keeps the rest restorable', async () => {
    const start = Date.parse('2026-11-01T10:00:00Z');
    let now = start;
    let db = create(mirrored('sync', { retentionMs: 15_000 }, { clock: () => now }));
    await prepareWorkload(db);
    await db.mirror!.flushed();
    const dumps = new Map<number, ReturnType<typeof dumpDatabase>>();
    const random = seededRandom(41);
    for (let second = 0; second <= 30; second += 5) {
      now = start + second * 1000;
      await mixedStep(db, random, second);
      if (second % 10 === 0) await db.mirror!.snapshotNow();
      dumps.set(second, dumpDatabase(local));
    }
    const generation = generationDir(mirror, generationOf(db)!);
    // At 30 s the horizon is 15 s: the snapshot of 10 s is the base, older ones are gone.
    const taken = listSnapshots(generation).map((s) => (s.takenAt - start) / 1000);
    expect(taken).toEqual([10, 20, 30]);
    const base = listSnapshots(generation)[0]!;
    const segments = listSegments(generation);
    expect(segments[0]!.firstTxid).toBeLessThanOrEqual(base.txid + 1);
    expect(segments[1]?.firstTxid ?? Number.POSITIVE_INFINITY).toBeGreaterThan(base.txid + 1);

    expect(restored().dump).toEqual(dumpDatabase(local));
    expect(restored(start + 15_000).dump).toEqual(dumps.get(15));
    expect(() => restored(start + 5_000)).toThrow(
      expect.objectContaining({ code: 'RestorePointUnavailable' }),
    );

    // A new generation that reaches back past the window makes the older ones unnecessary.
    await close(db);
    db = reopen({ clock: () => now });
    await db.batch([{ Type: 'PUT', Id: 'unmirrored/1', Document: {} }]);
    await close(db);
    db = reopen(mirrored('sync', { retentionMs: 15_000 }, { clock: () => now }));
    await db.mirror!.flushed();
    expect(listGenerations(mirror)).toHaveLength(2);
    now += 20_000;
    await db.batch([{ Type: 'PUT', Id: 'later/1', Document: {} }]);
    await db.mirror!.snapshotNow();
    expect(listGenerations(mirror)).toEqual([generationOf(db)]);
    expect(restored().dump).toEqual(dumpDatabase(local));
  });

  it('refuses to restore over an existing database', () => {
    fs.mkdirSync(local, { recursive: true });
    fs.writeFileSync(path.join(local, 'docs.db'), '');
    expect(() => restoreDatabase(mirror, local)).toThrow(
      expect.objectContaining({ code: 'DatabaseAlreadyExists' }),
    );
    expect(() => restoreDatabase(mirror, path.join(tmp.dir, 'empty'))).toThrow(
      expect.objectContaining({ code: 'MirrorNotFound' }),
    );
  });
});

describe('a tenant catalog that lost its disk', () => {
  it('restores every mirrored database with its index definitions, but not one that was deleted', async () => {
    const data = path.join(tmp.dir, 'data');
    const mirrorRoot = path.join(tmp.dir, 'mirror');
    const options = { root: mirrorRoot, mode: 'sync' as const, modes: { Scratch: 'async' as const } };
    let catalog = new DatabaseCatalog(data, {}, options);
    const shop = catalog.create('Shop');
    const scratch = catalog.create('Scratch');
    expect(shop.stats().Mirror?.Mode).toBe('sync');
    expect(scratch.stats().Mirror?.Mode).toBe('async');
    await shop.putIndexDefinition({
      Name: 'Orders/ByTotal',
      Maps: [{ Collection: 'Orders', Fields: { Total: 'Total' } }],
    });
    await shop.batch([
      { Type: 'PUT', Id: 'orders/1', Document: { Total: 5, '@metadata': { '@collection': 'Orders' } } },
    ]);
    await scratch.batch([{ Type: 'PUT', Id: 'notes/1', Document: {} }]);
    await catalog.closeAll();
    const before = { shop: dumpDatabase(path.join(data, 'databases', 'shop')) };

    fs.rmSync(data, { recursive: true });
    catalog = new DatabaseCatalog(data, {}, options);
    const restoredNames = catalog.restoreMissing().map((r) => r.database);
    expect(restoredNames).toEqual(['scratch', 'shop']);
    expect(dumpDatabase(path.join(data, 'databases', 'shop'))).toEqual(before.shop);
    expect(
      catalog
        .get('shop')
        .indexDefinitions()
        .map((d) => d.Name),
    ).toEqual(['Orders/ByTotal']);
    expect(catalog.get('Scratch').get('notes/1')).not.toBeNull();

    await catalog.delete('Scratch');
    await catalog.closeAll();
    fs.rmSync(data, { recursive: true });
    catalog = new DatabaseCatalog(data, {}, options);
    expect(catalog.restoreMissing().map((r) => r.database)).toEqual(['shop']);
    expect(catalog.list()).toEqual(['shop']);
    await catalog.closeAll();
  });

  it('refuses to start from a mirror it cannot read rather than start empty', () => {
    const notADirectory = path.join(tmp.dir, 'mirror-file');
    fs.writeFileSync(notADirectory, '');
    const catalog = new DatabaseCatalog(
      path.join(tmp.dir, 'data'),
      {},
      { root: notADirectory, mode: 'async' },
    );
    expect(() => catalog.restoreMissing()).toThrow(expect.objectContaining({ code: 'MirrorUnavailable' }));
  });
});
