import path from 'node:path';
import zlib from 'node:zlib';
import type { CommandResult } from '@rookery/protocol';
import { makeTempDir } from '@rookery/testkit';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type CommittedTransaction, Database } from './database.js';
import { prepareStatements, WRITE_OPS } from './storage/statements.js';

// Archival and expiration with a controllable clock: the database's clock (last-modified, tombstone
// times) and the sweep's "now" are both moved by the test, never waited for.
let tmp: ReturnType<typeof makeTempDir>;
let db: Database;
let now = Date.parse('2026-11-01T10:00:00Z');
const committed: CommittedTransaction[] = [];

const at = (iso: string) => Date.parse(iso);
const HOUR = 3600_000;

beforeEach(() => {
  tmp = makeTempDir();
  now = at('2026-11-01T10:00:00Z');
  committed.length = 0;
  db = Database.create(tmp.dir, 'shop', {
    clock: () => now,
    commitHook: (c) => {
      committed.push(c);
      return undefined;
    },
  });
});
afterEach(async () => {
  await db.close();
  tmp.cleanup();
});

const order = (n: number, metadata: Record<string, unknown> = {}, body: Record<string, unknown> = {}) => ({
  Type: 'PUT' as const,
  Id: `orders/${n}`,
  Document: { Number: n, Lines: ['a', 'b'], ...body, '@metadata': { '@collection': 'Orders', ...metadata } },
});

function metadataOf(id: string): Record<string, unknown> {
  const loaded = db.get(id);
  expect(loaded, `${id} should exist`).not.toBeNull();
  return JSON.parse(loaded!.json)['@metadata'];
}

/** The stored row, read from the file on a connection of its own. */
function storedRow(id: string) {
  const raw = new BetterSqlite3(path.join(tmp.dir, 'docs.db'), { readonly: true });
  try {
    return raw
      .prepare('SELECT flags, body, archive_at, expires_at, metadata FROM docs WHERE id_lower = ?')
      .get(id.toLowerCase()) as
      | {
          flags: number;
          body: string | Buffer;
          archive_at: number | null;
          expires_at: number | null;
          metadata: string | null;
        }
      | undefined;
  } finally {
    raw.close();
  }
}

const pageIds = (collection: string | null) => db.collectionPage(collection, 0, 100).map((d) => d.id);

describe('sweepDue', () => {
  it('leaves documents alone until their time, then archives and expires them exactly at it', async () => {
    await db.batch([
      order(1, { '@archive-at': '2026-11-02T00:00:00Z' }),
      order(2, { '@expires': '2026-11-02T00:00:00Z' }),
      order(3, { '@archive-at': '2026-11-03T00:00:00Z', '@expires': '2026-12-01T00:00:00Z' }),
      order(4),
    ]);
    expect(await db.sweepDue(now)).toEqual({ Archived: 0, Expired: 0, More: false });

    // One millisecond early: nothing is due yet.
    now = at('2026-11-02T00:00:00Z') - 1;
    expect(await db.sweepDue(now)).toEqual({ Archived: 0, Expired: 0, More: false });
    expect(metadataOf('orders/1')['@archived']).toBeUndefined();
    expect(db.get('orders/2')).not.toBeNull();

    now = at('2026-11-02T00:00:00Z');
    expect(await db.sweepDue(now)).toEqual({ Archived: 1, Expired: 1, More: false });
    expect(metadataOf('orders/1')).toMatchObject({ '@archived': true, '@collection': 'Orders' });
    expect(metadataOf('orders/1')['@archive-at']).toBeUndefined();
    expect(db.get('orders/2')).toBeNull();
    expect(metadataOf('orders/3')['@archived']).toBeUndefined();

    now = at('2026-11-03T00:00:00Z');
    expect(await db.sweepDue(now)).toEqual({ Archived: 1, Expired: 0, More: false });
    // An archived document still expires when its time comes.
    now = at('2026-12-01T00:00:00Z');
    expect(await db.sweepDue(now)).toEqual({ Archived: 0, Expired: 1, More: false });
    expect(db.get('orders/3')).toBeNull();
    expect(db.get('orders/4')).not.toBeNull();
  });

  it('uses the database clock when no time is given', async () => {
    await db.batch([order(1, { '@expires': '2026-11-01T11:00:00Z' })]);
    expect((await db.sweepDue()).Expired).toBe(0);
    now += 2 * HOUR;
    expect((await db.sweepDue()).Expired).toBe(1);
  });

  it('works in batches of at most `limit` documents, expired ones first, and says when more remain', async () => {
    const commands = [];
    for (let n = 1; n <= 7; n++) commands.push(order(n, { '@expires': '2026-11-01T12:00:00Z' }));
    for (let n = 8; n <= 12; n++) commands.push(order(n, { '@archive-at': '2026-11-01T12:00:00Z' }));
    // Due for both: expired, never archived first.
    commands.push(order(13, { '@archive-at': '2026-11-01T11:00:00Z', '@expires': '2026-11-01T11:00:00Z' }));
    await db.batch(commands);
    now = at('2026-11-02T00:00:00Z');

    const results = [];
    for (;;) {
      const result = await db.sweepDue(now, { limit: 5 });
      results.push(result);
      if (!result.More) break;
    }
    expect(results).toEqual([
      { Archived: 0, Expired: 5, More: true },
      { Archived: 2, Expired: 3, More: true },
      { Archived: 3, Expired: 0, More: false },
    ]);
    expect(db.get('orders/13')).toBeNull();
    expect(db.stats().CountOfDocuments).toBe(5);
    expect(db.stats().CountOfTombstones).toBe(8);
  });

  it('refuses a limit outside 1..10,000', async () => {
    await expect(db.sweepDue(now, { limit: 0 })).rejects.toThrow(RangeError);
    await expect(db.sweepDue(now, { limit: 10_001 })).rejects.toThrow(RangeError);
  });

  it('deletes expired documents with tombstones, as a DELETE would', async () => {
    await db.batch([order(1, { '@expires': '2026-11-01T12:00:00Z' }), order(2)]);
    const before = db.lastEtag;
    now = at('2026-11-01T13:00:00Z');
    await db.sweepDue(now);
    expect(db.changesAfter(before, 10)).toEqual([
      { etag: before + 1, id: 'orders/1', collection: 'Orders', deleted: true },
    ]);
    expect(db.stats()).toMatchObject({
      CountOfDocuments: 1,
      CountOfTombstones: 1,
      Collections: { Orders: 1 },
    });
  });

  it('stores an archived document compressed, however small, and loads it by id as before', async () => {
    await db.batch([
      order(1, { '@archive-at': '2026-11-01T12:00:00Z', '@expires': '2027-01-01T00:00:00Z', Owner: 'ops' }),
    ]);
    expect(storedRow('orders/1')).toMatchObject({ flags: 0, archive_at: at('2026-11-01T12:00:00Z') });
    const before = db.get('orders/1')!;

    now = at('2026-11-01T13:00:00Z');
    await db.sweepDue(now);
    const row = storedRow('orders/1')!;
    expect(row.flags).toBe(3); // compressed | archived
    expect(Buffer.isBuffer(row.body)).toBe(true);
    expect(JSON.parse(zlib.brotliDecompressSync(row.body as Buffer).toString('utf8'))).toEqual({
      Number: 1,
      Lines: ['a', 'b'],
    });
    // The time to archive is consumed; expiry and the user's own metadata stay.
    expect(row.archive_at).toBeNull();
    expect(row.expires_at).toBe(at('2027-01-01T00:00:00Z'));

    const after = db.get('orders/1')!;
    expect(after.etag).toBeGreaterThan(before.etag);
    const doc = JSON.parse(after.json);
    expect(doc).toEqual({
      Number: 1,
      Lines: ['a', 'b'],
      '@metadata': {
        '@collection': 'Orders',
        '@change-vector': after.changeVector,
        '@id': 'orders/1',
        '@last-modified': '2026-11-01T13:00:00.000Z',
        '@archived': true,
        '@expires': '2027-01-01T00:00:00Z',
        Owner: 'ops',
      },
    });
  });

  it('goes through the single writer: merged with concurrent writes and recorded for the mirror', async () => {
    await db.batch([
      order(1, { '@archive-at': '2026-11-01T12:00:00Z' }),
      order(2, { '@expires': '2026-11-01T12:00:00Z' }),
    ]);
    now = at('2026-11-01T13:00:00Z');
    const transactionsBefore = db.writeStats().transactions;
    committed.length = 0;
    // Queued in the same event-loop turn: one transaction, one commit.
    const [sweep, batch] = await Promise.all([db.sweepDue(now), db.batch([order(3)])]);
    expect(sweep).toEqual({ Archived: 1, Expired: 1, More: false });
    expect((batch as CommandResult[])[0]!.Id).toBe('orders/3');
    expect(db.writeStats().transactions).toBe(transactionsBefore + 1);
    expect(committed).toHaveLength(1);
    const codes = committed[0]!.ops.filter((_, i) => i % 2 === 0);
    expect(codes).toEqual(
      expect.arrayContaining([
        WRITE_OPS.updateDocument.code,
        WRITE_OPS.deleteDocument.code,
        WRITE_OPS.insertTombstone.code,
        WRITE_OPS.insertDocument.code,
      ]),
    );
  });

  it('finds due documents through the due-time indexes, not by scanning the table', () => {
    const raw = new BetterSqlite3(path.join(tmp.dir, 'docs.db'), { readonly: true });
    try {
      const s = prepareStatements(raw);
      const plan = (sql: string) =>
        (raw.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(0, 10) as { detail: string }[])
          .map((r) => r.detail)
          .join('; ');
      expect(plan(s.dueToExpire.source)).toContain('docs_by_expiry');
      expect(plan(s.dueToArchive.source)).toContain('docs_by_archive_at');
    } finally {
      raw.close();
    }
  });
});

describe('writing an archived document', () => {
  beforeEach(async () => {
    await db.batch([order(1, { '@archive-at': '2026-11-01T12:00:00Z' }), order(2)]);
    now = at('2026-11-01T13:00:00Z');
    await db.sweepDue(now);
  });

  it('keeps it archived when stored back with @archived (a loaded document saved again)', async () => {
    const loaded = JSON.parse(db.get('orders/1')!.json);
    loaded.Number = 100;
    await db.batch([{ Type: 'PUT', Id: 'orders/1', Document: loaded }]);
    expect(metadataOf('orders/1')['@archived']).toBe(true);
    expect(storedRow('orders/1')!.flags).toBe(3);
    expect(JSON.parse(db.get('orders/1')!.json).Number).toBe(100);
    expect(pageIds('Orders')).toEqual(['orders/2']);
  });

  it('un-archives it when stored without @archived: stored as any document, back in collection queries', async () => {
    await db.batch([order(1, {}, { Number: 1 })]);
    expect(metadataOf('orders/1')['@archived']).toBeUndefined();
    expect(storedRow('orders/1')!.flags).toBe(0);
    expect(pageIds('Orders')).toEqual(['orders/2', 'orders/1']);
    expect(db.collectionCount('Orders')).toBe(2);
  });

  it('re-archives at the next sweep a document stored again with an @archive-at already past', async () => {
    await db.batch([order(1, { '@archive-at': '2026-11-01T12:00:00Z' })]);
    expect(metadataOf('orders/1')['@archived']).toBeUndefined();
    expect(await db.sweepDue(now)).toEqual({ Archived: 1, Expired: 0, More: false });
    expect(metadataOf('orders/1')['@archived']).toBe(true);
  });

  it('keeps it archived through a patch, unless the patch removes @archived', async () => {
    await db.batch([
      { Type: 'PATCH', Id: 'orders/1', Patch: { Operations: [{ Op: 'set', Path: 'Status', Value: 'old' }] } },
    ]);
    expect(metadataOf('orders/1')['@archived']).toBe(true);
    await db.batch([
      {
        Type: 'PATCH',
        Id: 'orders/1',
        Patch: { Operations: [{ Op: 'unset', Path: '@metadata.@archived' }] },
      },
    ]);
    expect(metadataOf('orders/1')['@archived']).toBeUndefined();
    expect(JSON.parse(db.get('orders/1')!.json).Status).toBe('old');
    expect(db.collectionCount('Orders')).toBe(2);
  });

  it('archives a document stored with @archived: true right away (an import keeps archived documents archived)', async () => {
    await db.batch([order(3, { '@archived': true, '@archive-at': '2030-01-01T00:00:00Z' })]);
    expect(storedRow('orders/3')).toMatchObject({ flags: 3, archive_at: null });
    expect(metadataOf('orders/3')['@archive-at']).toBeUndefined();
    expect(pageIds('Orders')).toEqual(['orders/2']);
  });

  it('refuses an @archived that is not a boolean', async () => {
    await expect(db.batch([order(3, { '@archived': 'yes' })])).rejects.toMatchObject({
      code: 'InvalidMetadata',
    });
  });

  it('counts a deleted archived document out of the archived ones', async () => {
    await db.batch([{ Type: 'DELETE', Id: 'orders/1' }]);
    await db.batch([order(1)]);
    expect(db.collectionCount('Orders')).toBe(2);
    expect(pageIds('Orders')).toEqual(['orders/2', 'orders/1']);
  });
});

describe('collection queries', () => {
  it('leave archived documents out of pages and counts, also after a reopen', async () => {
    await db.batch([
      order(1, { '@archive-at': '2026-11-01T12:00:00Z' }),
      order(2),
      order(3, { '@archive-at': '2026-11-01T12:00:00Z' }),
      order(4),
      { Type: 'PUT', Id: 'users/1', Document: { Name: 'Ada', '@metadata': { '@collection': 'Users' } } },
    ]);
    now = at('2026-11-01T13:00:00Z');
    await db.sweepDue(now);
    // Updated after the archiving: in etag order it comes after the archived documents.
    await db.batch([order(2, {}, { Updated: true })]);
    const check = () => {
      expect(pageIds('Orders')).toEqual(['orders/4', 'orders/2']);
      expect(pageIds('orders')).toEqual(['orders/4', 'orders/2']);
      expect(db.collectionCount('Orders')).toBe(2);
      expect(pageIds(null)).toEqual(['orders/4', 'users/1', 'orders/2']);
      expect(db.collectionCount(null)).toBe(3);
      expect(db.collectionPage('Orders', 1, 10).map((d) => d.id)).toEqual(['orders/2']);
      expect(db.collectionPage('Orders', 2, 10)).toEqual([]);
      // Archived documents are still documents: stats count them.
      expect(db.stats()).toMatchObject({ CountOfDocuments: 5, Collections: { Orders: 4, Users: 1 } });
    };
    check();
    await db.close();
    db = Database.open(tmp.dir, { clock: () => now });
    check();
  });
});
