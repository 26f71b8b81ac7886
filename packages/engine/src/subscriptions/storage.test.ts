import path from 'node:path';
import { makeTempDir } from '@rookery/testkit';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Database } from '../database.js';
import { encodeRecord, RECORD_HEADER_BYTES } from '../mirror/record.js';
import { Replayer } from '../mirror/replay.js';
import { restoreDatabase } from '../mirror/restore.js';
import { WRITE_OPS } from '../storage/statements.js';

let tmp: ReturnType<typeof makeTempDir>;
let local: string;
const open: Database[] = [];
let now = Date.parse('2026-05-01T10:00:00Z');
const clock = () => now;

beforeEach(() => {
  tmp = makeTempDir('rookery-subscriptions-');
  local = path.join(tmp.dir, 'local');
});
afterEach(async () => {
  await Promise.all(open.splice(0).map((db) => db.close()));
  tmp.cleanup();
});

function track(db: Database): Database {
  open.push(db);
  return db;
}

async function close(db: Database): Promise<void> {
  open.splice(open.indexOf(db), 1);
  await db.close();
}

const put = (db: Database, id: string, metadata: Record<string, unknown> = {}) =>
  db.batch([{ Type: 'PUT', Id: id, Document: { '@metadata': { '@collection': 'Users', ...metadata } } }]);

describe('subscriptions in docs.db', () => {
  it('are created, listed, read case-insensitively and deleted', async () => {
    const db = track(Database.create(local, 'shop', { clock }));
    await put(db, 'users/1');
    const created = await db.createSubscription({
      name: 'New-Users',
      query: 'from Users where Age > 30',
      startFrom: 'Beginning',
    });
    expect(created).toEqual({
      name: 'New-Users',
      query: 'from Users where Age > 30',
      parameters: {},
      lastEtag: 0,
      createdAt: now,
      lastAcknowledgedAt: null,
    });
    const later = await db.createSubscription({ name: 'later', query: 'from Users', startFrom: 'Now' });
    expect(later.lastEtag).toBe(db.lastEtag);
    expect(db.subscription('new-users')).toEqual(created);
    expect(db.subscriptions().map((s) => s.name)).toEqual(['later', 'New-Users']);
    await expect(
      db.createSubscription({ name: 'NEW-USERS', query: 'from Orders', startFrom: 'Beginning' }),
    ).rejects.toMatchObject({ code: 'SubscriptionAlreadyExists' });
    await expect(
      db.createSubscription({ name: 'bad', query: "from Users where search(Name, 'x')", startFrom: 'Now' }),
    ).rejects.toMatchObject({ code: 'InvalidQuery' });
    await expect(
      db.createSubscription({ name: 'bad', query: 'from Users where Age > $min', startFrom: 'Now' }),
    ).rejects.toMatchObject({ code: 'InvalidQuery', message: expect.stringMatching(/\$min/) });
    expect(await db.deleteSubscription('NEW-users')).toBe(true);
    expect(await db.deleteSubscription('new-users')).toBe(false);
    expect(db.subscription('new-users')).toBeNull();
    expect(db.subscriptions().map((s) => s.name)).toEqual(['later']);
  });

  it('keep their $parameters, as given, across a reopen', async () => {
    const db = track(Database.create(local, 'shop', { clock }));
    const parameters = { min: 30, names: ['Ada', 'żółw 🐢'], active: true, none: null };
    const query = 'from Users where Age > $min and Name in ($names) and Active = $active and Phone = $none';
    expect(
      await db.createSubscription({ name: 'p', query, parameters, startFrom: 'Beginning' }),
    ).toMatchObject({
      query,
      parameters,
    });
    await db.createSubscription({
      name: 'empty',
      query: 'from Users',
      parameters: {},
      startFrom: 'Beginning',
    });
    await close(db);
    const reopened = track(Database.open(local, { clock }));
    expect(reopened.subscription('p')!.parameters).toEqual(parameters);
    expect(reopened.subscription('empty')!.parameters).toEqual({});
  });

  it('record progress without taking an etag or telling commit listeners, and never move it back', async () => {
    const db = track(Database.create(local, 'shop', { clock }));
    await put(db, 'users/1');
    await db.createSubscription({ name: 's', query: 'from Users', startFrom: 'Beginning' });
    const etag = db.lastEtag;
    let commits = 0;
    db.onCommit(() => commits++);
    now += 1000;
    expect(await db.recordSubscriptionProgress('S', etag, true)).toBe(true);
    expect(db.lastEtag).toBe(etag);
    expect(commits).toBe(0);
    expect(db.subscription('s')).toMatchObject({ lastEtag: etag, lastAcknowledgedAt: now });
    // Scanned past without a match: progress, but not an acknowledgment.
    const acknowledgedAt = now;
    now += 1000;
    expect(await db.recordSubscriptionProgress('s', etag + 5, false)).toBe(true);
    expect(db.subscription('s')).toMatchObject({ lastEtag: etag + 5, lastAcknowledgedAt: acknowledgedAt });
    // A late acknowledgment (a consumer taken over) does not undo newer progress.
    expect(await db.recordSubscriptionProgress('s', etag, true)).toBe(true);
    expect(db.subscription('s')!.lastEtag).toBe(etag + 5);
    expect(await db.recordSubscriptionProgress('gone', etag, true)).toBe(false);
  });

  it('keep their progress across a reopen', async () => {
    const db = track(Database.create(local, 'shop', { clock }));
    await put(db, 'users/1');
    await db.createSubscription({ name: 's', query: 'from Users', startFrom: 'Beginning' });
    await db.recordSubscriptionProgress('s', 1, true);
    await close(db);
    const reopened = track(Database.open(local, { clock }));
    expect(reopened.subscription('s')).toMatchObject({ lastEtag: 1, lastAcknowledgedAt: now });
  });

  it('are added to a database file written before subscriptions existed', async () => {
    const db = track(Database.create(local, 'shop', { clock }));
    await put(db, 'users/1');
    await close(db);
    // Back to the file as schema 2 wrote it.
    const sqlite = new BetterSqlite3(path.join(local, 'docs.db'));
    sqlite.exec('DROP TABLE subscriptions');
    sqlite.pragma('user_version = 2');
    sqlite.close();
    const upgraded = track(Database.open(local, { clock }));
    expect(upgraded.subscriptions()).toEqual([]);
    await upgraded.createSubscription({ name: 's', query: 'from Users', startFrom: 'Beginning' });
    expect(upgraded.subscription('s')).not.toBeNull();
    expect(upgraded.get('users/1')).not.toBeNull();
  });

  it('get their parameters column in a database file schema 3 wrote, its subscriptions kept without parameters', async () => {
    const db = track(Database.create(local, 'shop', { clock }));
    await put(db, 'users/1');
    await db.createSubscription({ name: 'old', query: 'from Users', startFrom: 'Beginning' });
    await db.recordSubscriptionProgress('old', 1, true);
    await close(db);
    // Back to the file as schema 3 wrote it: the subscriptions table without its parameters column.
    const sqlite = new BetterSqlite3(path.join(local, 'docs.db'));
    sqlite.exec('ALTER TABLE subscriptions DROP COLUMN parameters');
    sqlite.pragma('user_version = 3');
    sqlite.close();
    const upgraded = track(Database.open(local, { clock }));
    expect(upgraded.subscription('old')).toMatchObject({ query: 'from Users', parameters: {}, lastEtag: 1 });
    await upgraded.createSubscription({
      name: 'new',
      query: 'from Users where Age > $min',
      parameters: { min: 3 },
      startFrom: 'Beginning',
    });
    expect(upgraded.subscription('new')!.parameters).toEqual({ min: 3 });
  });

  it("replay schema 3's mirrored creation on a schema 3 snapshot, whose table has no parameters column", async () => {
    await Database.create(local, 'shop', { clock }).close();
    const sqlite = new BetterSqlite3(path.join(local, 'docs.db'));
    try {
      sqlite.exec('ALTER TABLE subscriptions DROP COLUMN parameters');
      // What schema 3 recorded for a creation: insertSubscription before parameters (op 11).
      const ops = [WRITE_OPS.insertSubscriptionV3.code, ['s', 'S', 'from Users', 0, now]];
      new Replayer(sqlite).apply(encodeRecord(1, now, 3, ops).subarray(RECORD_HEADER_BYTES));
      expect(sqlite.prepare('SELECT name, query, last_etag FROM subscriptions').all()).toEqual([
        { name: 'S', query: 'from Users', last_etag: 0 },
      ]);
    } finally {
      sqlite.close();
    }
  });

  it('reach the mirror: a restore brings back a subscription with its acknowledged progress', async () => {
    const mirror = path.join(tmp.dir, 'mirror');
    const db = track(Database.create(local, 'shop', { clock, mirror: { directory: mirror, mode: 'sync' } }));
    await put(db, 'users/1');
    const createdAt = now;
    await db.createSubscription({
      name: 'a',
      query: 'from Users where Name = $name',
      parameters: { name: 'x' },
      startFrom: 'Beginning',
    });
    await db.createSubscription({ name: 'b', query: 'from Users', startFrom: 'Beginning' });
    await put(db, 'users/2');
    now += 1000;
    await db.recordSubscriptionProgress('a', db.lastEtag, true);
    await db.deleteSubscription('b');
    // Synchronous mirroring: what was acknowledged is on the mirror, without a flush or a close.
    const target = path.join(tmp.dir, 'restored');
    const result = restoreDatabase(mirror, target);
    expect(result.stoppedBy).toBe('end');
    const restored = track(Database.open(target, { clock }));
    expect(restored.subscriptions()).toEqual([
      {
        name: 'a',
        query: 'from Users where Name = $name',
        parameters: { name: 'x' },
        lastEtag: 2,
        createdAt,
        lastAcknowledgedAt: now,
      },
    ]);
    expect(restored.lastEtag).toBe(2);
  });

  it('read pages of live documents after an etag, skipping deleted and archived ones', async () => {
    const db = track(Database.create(local, 'shop', { clock }));
    for (let i = 1; i <= 5; i++) await put(db, `users/${i}`);
    await db.batch([{ Type: 'PUT', Id: 'orders/1', Document: { '@metadata': { '@collection': 'Orders' } } }]);
    await db.batch([{ Type: 'DELETE', Id: 'users/2' }]);
    await put(db, 'users/4', { '@archived': true });
    const ids = (page: { documents: { id: string }[] }) => page.documents.map((d) => d.id);
    const first = db.documentsAfter('users', 0, 2);
    expect(ids(first)).toEqual(['users/1', 'users/3']);
    expect(first.scannedTo).toBe(3);
    const rest = db.documentsAfter('USERS', first.scannedTo, 10);
    expect(ids(rest)).toEqual(['users/5']);
    // Not a full page: everything up to the last write was seen (the tombstone and the archived write too).
    expect(rest.scannedTo).toBe(db.lastEtag);
    expect(ids(db.documentsAfter(null, 0, 10))).toEqual(['users/1', 'users/3', 'users/5', 'orders/1']);
    expect(db.documentsAfter('nothing-yet', 0, 10)).toEqual({ documents: [], scannedTo: db.lastEtag });
  });
});
