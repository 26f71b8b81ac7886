import path from 'node:path';
import type { Command } from '@rookery/protocol';
import { makeTempDir } from '@rookery/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Database } from '../database.js';
import { DatabaseIndexer } from './database-indexer.js';
import { DocumentSource } from './document-source.js';

let tmp: ReturnType<typeof makeTempDir>;
let db: Database;
let source: DocumentSource;
let now = Date.parse('2026-11-01T10:00:00Z');

const ORDERS = 30;

function put(collection: string, n: number, metadata: Record<string, unknown> = {}): Command {
  return {
    Type: 'PUT',
    Id: `${collection.toLowerCase()}/${n}`,
    Document: { N: n, '@metadata': { '@collection': collection, ...metadata } },
  };
}

/** Orders and Users written alternately, as one bulk write spreads a collection over the etags. */
beforeEach(async () => {
  tmp = makeTempDir();
  now = Date.parse('2026-11-01T10:00:00Z');
  db = Database.create(tmp.dir, 'shop', { clock: () => now });
  const commands: Command[] = [];
  for (let n = 1; n <= ORDERS; n++) commands.push(put('Orders', n), put('Users', n));
  await db.batch(commands);
  source = new DocumentSource(path.join(tmp.dir, 'docs.db'));
});
afterEach(async () => {
  source.close();
  await db.close();
  tmp.cleanup();
});

/** The reference: every document read back, counted by hand. */
function etagsOf(collection: string): number[] {
  const batch = source.readBatch(null, 0, 10_000, { includeArchived: true });
  return batch.documents.filter((d) => d.collection === collection).map((d) => d.etag);
}

const notArchived = { includeArchived: false };

describe('index progress', () => {
  it('counts the documents after an etag exactly, from the tenant and the indexer alike', () => {
    const etags = etagsOf('Orders');
    for (const after of [0, etags[0]!, etags[9]!, etags[20]! + 1, etags.at(-1)!]) {
      const expected = {
        TotalDocuments: ORDERS,
        DocumentsToProcess: etags.filter((e) => e > after).length,
        IsEstimate: false,
      };
      expect(db.progressAfter(['Orders'], after, notArchived)).toEqual(expected);
      expect(source.progressAfter(['Orders'], after, notArchived)).toEqual(expected);
    }
  });

  it('matches collections whatever their case, once each, and every collection for null', () => {
    expect(db.progressAfter(['orders', 'ORDERS'], 0, notArchived)).toEqual(
      db.progressAfter(['Orders'], 0, notArchived),
    );
    expect(db.progressAfter(['Orders', 'Users'], 0, notArchived)).toEqual({
      TotalDocuments: 2 * ORDERS,
      DocumentsToProcess: 2 * ORDERS,
      IsEstimate: false,
    });
    expect(db.progressAfter(null, 0, notArchived).TotalDocuments).toBe(2 * ORDERS);
    expect(db.progressAfter(['Nowhere'], 0, notArchived)).toEqual({
      TotalDocuments: 0,
      DocumentsToProcess: 0,
      IsEstimate: false,
    });
  });

  it('estimates past the exact limit, within the evenly spread documents', () => {
    const etags = etagsOf('Orders');
    const exactUpTo = 5;
    for (const after of [0, etags[5]!, etags[12]!, etags[23]!]) {
      const exact = etags.filter((e) => e > after).length;
      const progress = db.progressAfter(['Orders'], after, { includeArchived: false, exactUpTo });
      expect(progress.IsEstimate).toBe(true);
      expect(progress.DocumentsToProcess).toBeGreaterThan(exactUpTo);
      expect(progress.DocumentsToProcess).toBeLessThanOrEqual(ORDERS);
      expect(Math.abs(progress.DocumentsToProcess - exact)).toBeLessThanOrEqual(1);
    }
    // Few enough left: exact again.
    const few = db.progressAfter(['Orders'], etags[26]!, { includeArchived: false, exactUpTo });
    expect(few).toEqual({ TotalDocuments: ORDERS, DocumentsToProcess: 3, IsEstimate: false });
  });

  it('leaves archived documents out unless the index includes them', async () => {
    const beforeArchiving = Math.max(...etagsOf('Orders'));
    await db.batch([1, 2, 3].map((n) => put('Orders', n, { '@archive-at': '2026-11-02T00:00:00Z' })));
    now = Date.parse('2026-11-03T00:00:00Z');
    await db.sweepDue(now);
    const last = Math.max(...etagsOf('Orders'));
    expect(db.progressAfter(['Orders'], 0, notArchived)).toEqual({
      TotalDocuments: ORDERS - 3,
      DocumentsToProcess: ORDERS - 3,
      IsEstimate: false,
    });
    expect(db.progressAfter(['Orders'], 0, { includeArchived: true })).toEqual({
      TotalDocuments: ORDERS,
      DocumentsToProcess: ORDERS,
      IsEstimate: false,
    });
    // Only the three archived documents were written since: work for one index, none for the other.
    expect(db.progressAfter(['Orders'], beforeArchiving, notArchived).DocumentsToProcess).toBe(0);
    expect(db.progressAfter(['Orders'], beforeArchiving, { includeArchived: true }).DocumentsToProcess).toBe(
      3,
    );
    expect(db.progressAfter(['Orders'], last, { includeArchived: true }).DocumentsToProcess).toBe(0);
  });

  it('shows in index stats while the index is stale, and goes when it has caught up', () => {
    const indexer = new DatabaseIndexer(tmp.dir, { batchSize: 10 });
    try {
      indexer.put({ Name: 'Orders/ByN', Maps: [{ Collection: 'Orders', Fields: { N: 'N' } }] });
      expect(indexer.stats('Orders/ByN')).toMatchObject({
        IsStale: true,
        Progress: { TotalDocuments: ORDERS, DocumentsToProcess: ORDERS, IsEstimate: false },
      });
      indexer.runOnce();
      const partway = indexer.stats('Orders/ByN')!;
      expect(partway.IsStale).toBe(true);
      expect(partway.Progress?.DocumentsToProcess).toBeLessThan(ORDERS);
      expect(partway.Progress?.DocumentsToProcess).toBeGreaterThan(0);
      indexer.runUntilIdle();
      expect(indexer.stats('Orders/ByN')).toMatchObject({ IsStale: false, Progress: null });
    } finally {
      indexer.close();
    }
  });
});
