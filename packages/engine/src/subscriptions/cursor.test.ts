import { makeTempDir } from '@rookery/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Database } from '../database.js';
import { type BatchOptions, SubscriptionCursor } from './cursor.js';
import { compileSubscriptionQuery } from './query.js';

let tmp: ReturnType<typeof makeTempDir>;
let db: Database;
let abort: AbortController;

beforeEach(() => {
  tmp = makeTempDir('rookery-cursor-');
  db = Database.create(tmp.dir, 'shop');
  abort = new AbortController();
});
afterEach(async () => {
  abort.abort();
  await db.close();
  tmp.cleanup();
});

const user = (id: string, age: number) => ({
  Type: 'PUT' as const,
  Id: id,
  Document: { Age: age, '@metadata': { '@collection': 'Users' } },
});
const cursorOf = (query: string, position = 0) =>
  new SubscriptionCursor(db, compileSubscriptionQuery(query), position);
const options = (extra: Partial<BatchOptions> = {}): BatchOptions => ({
  batchSize: 2,
  maxWaitMs: 0,
  signal: abort.signal,
  ...extra,
});
const ids = (batch: { documents: { id: string }[] } | null) => batch?.documents.map((d) => d.id);

describe('subscription cursor', () => {
  it('cuts matching documents into batches in etag order; a batch ends at the last document it scanned', async () => {
    await db.batch([user('users/1', 10), user('users/2', 50), user('users/3', 60), user('users/4', 20)]);
    await db.batch([{ Type: 'PUT', Id: 'orders/1', Document: { '@metadata': { '@collection': 'Orders' } } }]);
    await db.batch([user('users/5', 70), user('users/6', 5), user('users/2', 55)]);
    const cursor = cursorOf('from Users where Age > 30');
    const first = await cursor.next(options());
    expect(ids(first)).toEqual(['users/3', 'users/5']);
    expect(first!.lastEtag).toBe(6);
    // users/6 does not match; users/2 was updated, so it comes (once) in its new place.
    const second = await cursor.next(options());
    expect(ids(second)).toEqual(['users/2']);
    expect(second!.lastEtag).toBe(db.lastEtag);
  });

  it('skips deleted documents, and waits for a new one without polling, telling when it goes idle', async () => {
    await db.batch([user('users/1', 40), user('users/2', 40)]);
    await db.batch([{ Type: 'DELETE', Id: 'users/1' }]);
    const cursor = cursorOf('from Users');
    expect(ids(await cursor.next(options({ batchSize: 10 })))).toEqual(['users/2']);
    const idle: number[] = [];
    const next = cursor.next(options({ onIdle: (etag) => idle.push(etag) }));
    await new Promise((resolve) => setImmediate(resolve));
    expect(idle).toEqual([db.lastEtag]);
    // A write to another collection does not wake it; one to its own does.
    await db.batch([{ Type: 'PUT', Id: 'orders/1', Document: { '@metadata': { '@collection': 'Orders' } } }]);
    await db.batch([user('users/3', 1)]);
    expect(ids(await next)).toEqual(['users/3']);
    expect(idle).toHaveLength(1);
  });

  it('holds a partial batch for maxWaitMs, sending it as soon as it is full', async () => {
    await db.batch([user('users/1', 40)]);
    const cursor = cursorOf('from Users');
    const next = cursor.next(options({ batchSize: 3, maxWaitMs: 60_000 }));
    await db.batch([user('users/2', 40)]);
    await db.batch([user('users/3', 40)]);
    expect(ids(await next)).toEqual(['users/1', 'users/2', 'users/3']);
  });

  it('sends a partial batch once the scan is caught up when maxWaitMs is 0, and stops when aborted', async () => {
    await db.batch([user('users/1', 40)]);
    const cursor = cursorOf('from Users', 0);
    expect(ids(await cursor.next(options({ batchSize: 100 })))).toEqual(['users/1']);
    const waiting = cursor.next(options());
    abort.abort();
    expect(await waiting).toBeNull();
  });

  it('closes a batch at maxBatchChars, with at least one document in it', async () => {
    await db.batch([user('users/1', 1), user('users/2', 2), user('users/3', 3)]);
    const cursor = cursorOf('from Users');
    expect(ids(await cursor.next(options({ batchSize: 10, maxBatchChars: 1 })))).toEqual(['users/1']);
  });
});
