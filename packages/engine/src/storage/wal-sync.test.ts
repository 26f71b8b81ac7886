import fs from 'node:fs';
import path from 'node:path';
import { RookeryError } from '@rookery/protocol';
import { makeTempDir } from '@rookery/testkit';
import { afterEach, describe, expect, it } from 'vitest';
import { Database } from '../database.js';

let tmp: ReturnType<typeof makeTempDir> | undefined;
let db: Database | undefined;
afterEach(async () => {
  await db?.close().catch(() => undefined);
  tmp?.cleanup();
});

function open(): Database {
  tmp = makeTempDir();
  db = Database.create(tmp.dir, 'durable');
  return db;
}

const put = (id: string, n: number) => ({ Type: 'PUT' as const, Id: id, Document: { N: n } });

describe('durable commits (synchronous full: the WAL flushed off the event loop)', () => {
  it('acknowledges a write, and tells listeners of it, only after a WAL flush that began after its commit', async () => {
    const db = open();
    const heard: Array<{ ids: string[]; flushes: number | null }> = [];
    db.onCommit((changes) =>
      heard.push({ ids: changes.map((c) => c.id), flushes: db.writeStats().walSyncs }),
    );
    const flushesBefore = db.writeStats().walSyncs ?? 0;
    // Batches queued in one turn share a commit; those queued while its flush runs share the next.
    const acknowledged = await Promise.all(
      Array.from({ length: 200 }, async (_, i) => {
        await db.batch([put(`docs/${i}`, i)]);
        return db.writeStats().walSyncs;
      }),
    );
    for (const flushes of acknowledged) expect(flushes).toBeGreaterThan(flushesBefore);
    expect(heard.flatMap((h) => h.ids).sort()).toEqual(
      Array.from({ length: 200 }, (_, i) => `docs/${i}`).sort(),
    );
    for (const h of heard) expect(h.flushes).toBeGreaterThan(flushesBefore);
    const stats = db.writeStats();
    // Group commit of the flushes: never more flushes than commits.
    expect(stats.walSyncs).toBeLessThanOrEqual(stats.transactions);
  });

  it('a WAL that cannot be flushed acknowledges nothing more and fences the writer', async () => {
    const db = open();
    // SQLite keeps writing to the WAL it has open; the path, where the first flush opens the WAL,
    // no longer names a file that can be flushed (a real failure of the flush, as a disk error would be).
    const wal = path.join(tmp!.dir, 'docs.db-wal');
    fs.rmSync(wal);
    fs.mkdirSync(wal);
    const failed = await db.batch([put('docs/unflushed', 2)]).then(
      () => null,
      (error: unknown) => error,
    );
    expect(failed).toBeInstanceOf(RookeryError);
    expect((failed as RookeryError).code).toBe('DatabaseUnavailable');
    expect((failed as RookeryError).message).toMatch(/could not be flushed/);
    await expect(db.batch([put('docs/after', 3)])).rejects.toMatchObject({ code: 'DatabaseUnavailable' });
    expect(db.get('docs/after')).toBeNull(); // refused before its transaction began
  });
});
