import type { RookeryError } from '@rookery/protocol';
import { makeTempDir } from '@rookery/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { Database } from './database.js';

let tmp: ReturnType<typeof makeTempDir> | undefined;
let db: Database | undefined;
afterEach(async () => {
  await db?.close();
  tmp?.cleanup();
});

function open(merge: boolean): Database {
  tmp = makeTempDir();
  db = Database.create(tmp.dir, 'merger', { mergeTransactions: merge });
  return db;
}

const put = (id: string, n: number) => ({ Type: 'PUT' as const, Id: id, Document: { N: n } });

describe('transaction merger', () => {
  it('commits concurrent batches together, and a failing batch fails alone', async () => {
    const db = open(true);
    await db.batch([put('conflicted/1', 0)]);
    const before = db.writeStats().transactions;
    const outcomes = await Promise.allSettled(
      Array.from({ length: 100 }, (_, i) =>
        i === 42
          ? db.batch([put('docs/42', 42), { ...put('conflicted/1', 1), ChangeVector: 'A:999-nope' }])
          : i === 77
            ? db.batch([put('docs/77', 77), { Type: 'PATCH', Id: 'missing/1', Patch: { Merge: { A: 1 } } }])
            : db.batch([put(`docs/${i}`, i)]),
      ),
    );
    const failed = outcomes.flatMap((o, i) => (o.status === 'rejected' ? [i] : []));
    expect(failed).toEqual([42, 77]);
    expect(((outcomes[42] as PromiseRejectedResult).reason as RookeryError).code).toBe('ConcurrencyConflict');
    expect(((outcomes[77] as PromiseRejectedResult).reason as RookeryError).code).toBe('DocumentNotFound');
    for (let i = 0; i < 100; i++) expect(db.get(`docs/${i}`) === null).toBe(i === 42 || i === 77);
    // 100 batches issued in one turn of the event loop share a single commit.
    expect(db.writeStats().transactions - before).toBe(1);
    expect(db.stats().CountOfDocuments).toBe(99);
    // The rolled-back batch's new collection left no trace in the counters.
    expect(Object.keys(db.stats().Collections)).toEqual(['@empty']);
    // Etags keep increasing without reuse after rolled-back savepoints.
    const etags = db.changesAfter(0, 1000).map((c) => c.etag);
    expect(new Set(etags).size).toBe(etags.length);
  });

  it('gives every batch its own commit when merging is off (the benchmark baseline)', async () => {
    const db = open(false);
    await Promise.all(Array.from({ length: 20 }, (_, i) => db.batch([put(`docs/${i}`, i)])));
    expect(db.writeStats().transactions).toBe(20);
  });

  it('bounds the size of one merged transaction', async () => {
    tmp = makeTempDir();
    db = Database.create(tmp.dir, 'bounded', { maxDocumentsPerTransaction: 10 });
    const target = db;
    await Promise.all(Array.from({ length: 35 }, (_, i) => target.batch([put(`docs/${i}`, i)])));
    expect(target.writeStats().transactions).toBe(4);
  });

  it('drains queued work before closing', async () => {
    const db = open(true);
    const pending = Array.from({ length: 50 }, (_, i) => db.batch([put(`docs/${i}`, i)]));
    await db.close();
    await expect(Promise.all(pending)).resolves.toHaveLength(50);
    const reopened = Database.open(tmp!.dir);
    expect(reopened.stats().CountOfDocuments).toBe(50);
    await reopened.close();
  });
});

describe('write fence (a lease deadline, a fenced mirror)', () => {
  it('refuses before commit, and refuses to acknowledge a commit once it turned while the commit waited', async () => {
    tmp = makeTempDir();
    let refusal: Error | null = null;
    let release: () => void = () => {};
    let hold = false;
    db = Database.create(tmp.dir, 'fenced', {
      writeFence: () => refusal,
      // Holds the acknowledgment the way a sync mirror's fsync does.
      commitHook: () => (hold ? new Promise<void>((resolve) => (release = resolve)) : undefined),
    });
    const target = db;
    await target.batch([put('docs/1', 1)]);

    refusal = new Error('lease expired');
    await expect(target.batch([put('docs/2', 2)])).rejects.toBe(refusal);
    expect(target.get('docs/2')).toBeNull(); // nothing was written

    refusal = null;
    hold = true;
    const waiting = target.batch([put('docs/3', 3)]);
    // Committed locally, its acknowledgment waiting on the "mirror".
    while (target.get('docs/3') === null) await new Promise((resolve) => setImmediate(resolve));
    refusal = new Error('lease expired during the fsync');
    release();
    await expect(waiting).rejects.toBe(refusal);
  });
});
