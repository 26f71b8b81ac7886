import path from 'node:path';
import { appendPrepared, emptyPreparedChunk, prepareDocument, RookeryError } from '@rookery/protocol';
import { makeTempDir } from '@rookery/testkit';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { Database } from './database.js';

let tmp: ReturnType<typeof makeTempDir>;
let db: Database;
let now = Date.parse('2026-11-01T10:00:00Z');

beforeEach(() => {
  tmp = makeTempDir();
  db = Database.create(tmp.dir, 'shop', { clock: () => now });
});
afterEach(async () => {
  await db.close();
  tmp.cleanup();
});

const user = (name: string, extra: Record<string, unknown> = {}) => ({
  Name: name,
  '@metadata': { '@collection': 'Users', ...extra },
});

function parse(json: string | undefined): Record<string, unknown> & { '@metadata': Record<string, unknown> } {
  return JSON.parse(json!);
}

async function rejection(promise: Promise<unknown>): Promise<RookeryError> {
  try {
    await promise;
  } catch (error) {
    expect(error).toBeInstanceOf(RookeryError);
    return error as RookeryError;
  }
  throw new Error('expected the promise to reject');
}

describe('documents', () => {
  it('stores, reads, updates and deletes a document', async () => {
    const [put] = await db.batch([{ Type: 'PUT', Id: 'users/1-A', Document: user('Ada') }]);
    expect(put).toMatchObject({
      Type: 'PUT',
      Id: 'users/1-A',
      Collection: 'Users',
      LastModified: '2026-11-01T10:00:00.000Z',
    });
    const loaded = db.get('users/1-A')!;
    expect(parse(loaded.json)).toEqual({
      Name: 'Ada',
      '@metadata': {
        '@collection': 'Users',
        '@change-vector': put!.ChangeVector,
        '@id': 'users/1-A',
        '@last-modified': '2026-11-01T10:00:00.000Z',
      },
    });

    now += 1000;
    const [updated] = await db.batch([{ Type: 'PUT', Id: 'users/1-A', Document: user('Ada Lovelace') }]);
    expect(updated!.ChangeVector).not.toBe(put!.ChangeVector);
    expect(parse(db.get('users/1-A')!.json).Name).toBe('Ada Lovelace');

    const [deleted] = await db.batch([{ Type: 'DELETE', Id: 'users/1-A' }]);
    expect(deleted).toMatchObject({ Deleted: true, Collection: 'Users' });
    expect(db.get('users/1-A')).toBeNull();
    const [again] = await db.batch([{ Type: 'DELETE', Id: 'users/1-A' }]);
    expect(again).toMatchObject({ Deleted: false, ChangeVector: null });
  });

  it('treats ids case-insensitively but keeps the case they were stored with', async () => {
    await db.batch([{ Type: 'PUT', Id: 'Users/Bella@Dona.self', Document: user('Bella') }]);
    expect(db.get('users/bella@dona.self')!.id).toBe('Users/Bella@Dona.self');
    expect(db.get('USERS/BELLA@DONA.SELF')).not.toBeNull();
    const [result] = await db.batch([
      { Type: 'PUT', Id: 'USERS/bella@dona.SELF', Document: user('Bella 2') },
    ]);
    expect(result!.Id).toBe('Users/Bella@Dona.self');
    expect(db.stats().CountOfDocuments).toBe(1);
    // Non-ASCII letters fold too.
    await db.batch([{ Type: 'PUT', Id: 'cities/ÅLESUND', Document: { Name: 'x' } }]);
    expect(db.get('cities/ålesund')!.id).toBe('cities/ÅLESUND');
  });

  it('keeps user metadata and drops server-owned keys a client sends', async () => {
    await db.batch([
      {
        Type: 'PUT',
        Id: 'orders/1',
        Document: {
          Total: 10,
          '@metadata': {
            '@collection': 'Orders',
            '@expires': '2027-01-01T00:00:00Z',
            'Raven-Clr-Type': 'Shop.Order',
            '@change-vector': 'forged',
            '@id': 'forged',
          },
        },
      },
    ]);
    const meta = parse(db.get('orders/1')!.json)['@metadata'];
    expect(meta['@expires']).toBe('2027-01-01T00:00:00Z');
    expect(meta['Raven-Clr-Type']).toBe('Shop.Order');
    expect(meta['@id']).toBe('orders/1');
    expect(meta['@change-vector']).not.toBe('forged');
  });

  it('puts documents without @collection into @empty and keeps the collection on updates that omit it', async () => {
    await db.batch([{ Type: 'PUT', Id: 'misc/1', Document: { A: 1 } }]);
    expect(db.get('misc/1')!.collection).toBe('@empty');
    await db.batch([{ Type: 'PUT', Id: 'users/1', Document: user('A') }]);
    await db.batch([{ Type: 'PUT', Id: 'users/1', Document: { Name: 'B' } }]);
    expect(db.get('users/1')!.collection).toBe('Users');
  });

  it('uses the first spelling of a collection and refuses to move a document to another collection', async () => {
    await db.batch([{ Type: 'PUT', Id: 'users/1', Document: user('A') }]);
    const [r] = await db.batch([
      { Type: 'PUT', Id: 'users/2', Document: { '@metadata': { '@collection': 'USERS' } } },
    ]);
    expect(r!.Collection).toBe('Users');
    const error = await rejection(
      db.batch([{ Type: 'PUT', Id: 'users/1', Document: { '@metadata': { '@collection': 'Orders' } } }]),
    );
    expect(error.code).toBe('CollectionChangeNotAllowed');
    expect(error.message).toContain('delete it and create it again');
  });

  it('rejects invalid metadata with a message naming the field', async () => {
    const error = await rejection(
      db.batch([{ Type: 'PUT', Id: 'a/1', Document: { '@metadata': { '@expires': 'next tuesday' } } }]),
    );
    expect(error.code).toBe('InvalidMetadata');
    expect(error.message).toContain('@expires');
    const notObject = await rejection(db.batch([{ Type: 'PUT', Id: 'a/1', Document: { '@metadata': [1] } }]));
    expect(notObject.code).toBe('InvalidMetadata');
  });

  it('compresses large bodies transparently', async () => {
    const big = { Text: 'lorem ipsum dolor sit amet '.repeat(1000), '@metadata': { '@collection': 'Notes' } };
    await db.batch([{ Type: 'PUT', Id: 'notes/1', Document: big }]);
    expect(parse(db.get('notes/1')!.json).Text).toBe(big.Text);
    const raw = new BetterSqlite3(path.join(tmp.dir, 'docs.db'), { readonly: true });
    const row = raw
      .prepare("SELECT flags, length(body) AS size FROM docs WHERE id_lower = 'notes/1'")
      .get() as {
      flags: number;
      size: number;
    };
    raw.close();
    expect(row.flags & 1).toBe(1);
    expect(row.size).toBeLessThan(big.Text.length / 10);
  });
});

describe('batches and optimistic concurrency', () => {
  it('applies a batch all-or-nothing', async () => {
    await db.batch([{ Type: 'PUT', Id: 'users/1', Document: user('A') }]);
    const error = await rejection(
      db.batch([
        { Type: 'PUT', Id: 'users/2', Document: user('B') },
        { Type: 'DELETE', Id: 'users/1' },
        { Type: 'PATCH', Id: 'users/404', Patch: { Merge: { X: 1 } } },
      ]),
    );
    expect(error.code).toBe('DocumentNotFound');
    expect(db.get('users/2')).toBeNull();
    expect(db.get('users/1')).not.toBeNull();
    expect(db.stats().Collections).toEqual({ Users: 1 });
  });

  it('fails a batch whose expected change vector is stale, naming both versions', async () => {
    const [first] = await db.batch([{ Type: 'PUT', Id: 'users/1', Document: user('A') }]);
    const [second] = await db.batch([
      { Type: 'PUT', Id: 'users/1', Document: user('B'), ChangeVector: first!.ChangeVector },
    ]);
    const error = await rejection(
      db.batch([{ Type: 'PUT', Id: 'users/1', Document: user('C'), ChangeVector: first!.ChangeVector }]),
    );
    expect(error.code).toBe('ConcurrencyConflict');
    expect(error.status).toBe(409);
    expect(error.details).toEqual({
      id: 'users/1',
      expectedChangeVector: first!.ChangeVector,
      actualChangeVector: second!.ChangeVector,
    });
    expect(error.message).toContain(first!.ChangeVector!);
    expect(error.message).toContain(second!.ChangeVector!);
    expect(parse(db.get('users/1')!.json).Name).toBe('B');
  });

  it('supports create-only writes with an empty expected change vector, and checks deletes and patches', async () => {
    await db.batch([{ Type: 'PUT', Id: 'users/1', Document: user('A'), ChangeVector: '' }]);
    expect(
      (await rejection(db.batch([{ Type: 'PUT', Id: 'users/1', Document: user('A'), ChangeVector: '' }])))
        .code,
    ).toBe('ConcurrencyConflict');
    expect((await rejection(db.batch([{ Type: 'DELETE', Id: 'users/1', ChangeVector: 'A:1-x' }]))).code).toBe(
      'ConcurrencyConflict',
    );
    expect(
      (
        await rejection(
          db.batch([{ Type: 'PATCH', Id: 'users/1', Patch: { Merge: {} }, ChangeVector: 'A:1-x' }]),
        )
      ).code,
    ).toBe('ConcurrencyConflict');
    expect(
      (await rejection(db.batch([{ Type: 'DELETE', Id: 'users/9', ChangeVector: 'A:1-x' }]))).details,
    ).toMatchObject({
      actualChangeVector: null,
    });
  });

  it('patches with a merge patch and with operations', async () => {
    await db.batch([{ Type: 'PUT', Id: 'users/1', Document: user('A', { Tag: 'x' }) }]);
    await db.batch([
      { Type: 'PATCH', Id: 'users/1', Patch: { Merge: { Address: { City: 'Oslo' }, Name: null } } },
      {
        Type: 'PATCH',
        Id: 'USERS/1',
        Patch: {
          Operations: [
            { Op: 'increment', Path: 'Visits', By: 2 },
            { Op: 'append', Path: 'Tags', Value: 'a' },
            { Op: 'append', Path: 'Tags', Value: 'b' },
            { Op: 'remove', Path: 'Tags', Value: 'a' },
            { Op: 'set', Path: 'Address.Zip', Value: '0150' },
          ],
        },
      },
    ]);
    const doc = parse(db.get('users/1')!.json);
    expect(doc).toMatchObject({ Address: { City: 'Oslo', Zip: '0150' }, Visits: 2, Tags: ['b'] });
    expect(doc.Name).toBeUndefined();
    expect(doc['@metadata']).toMatchObject({ '@collection': 'Users', Tag: 'x' });
    const bad = await rejection(
      db.batch([
        { Type: 'PATCH', Id: 'users/1', Patch: { Operations: [{ Op: 'increment', Path: 'Tags', By: 1 }] } },
      ]),
    );
    expect(bad.code).toBe('InvalidPatch');
  });
});

describe('ids, HiLo and stats', () => {
  it('generates server-side ids for "prefix/" and "prefix|" without colliding with client HiLo ranges', async () => {
    const range = await db.nextHiLo('users', undefined, undefined);
    expect(range).toMatchObject({ Prefix: 'users/', Low: 1, High: 32, ServerTag: 'A' });
    const results = await db.batch([
      { Type: 'PUT', Id: 'users/', Document: user('A') },
      { Type: 'PUT', Id: 'users|', Document: user('B') },
      { Type: 'PUT', Id: 'users|', Document: user('C') },
    ]);
    expect(results.map((r) => r.Id)).toEqual(['users/33-A', 'users/1', 'users/2']);
    const next = await db.nextHiLo('Users', 32, now - 1000);
    expect(next).toMatchObject({ Low: 34, High: 97, LastSize: 64 });
    const error = await rejection(db.batch([{ Type: 'PUT', Id: '/', Document: {} }]));
    expect(error.code).toBe('InvalidId');
  });

  it('counts documents per collection and tombstones, and lists changes after an etag', async () => {
    await db.batch([
      { Type: 'PUT', Id: 'users/1', Document: user('A') },
      { Type: 'PUT', Id: 'users/2', Document: user('B') },
      { Type: 'PUT', Id: 'orders/1', Document: { '@metadata': { '@collection': 'Orders' } } },
    ]);
    const mark = db.lastEtag;
    await db.batch([{ Type: 'DELETE', Id: 'users/1' }]);
    await db.batch([{ Type: 'PUT', Id: 'users/2', Document: user('B2') }]);
    const stats = db.stats();
    expect(stats).toMatchObject({
      CountOfDocuments: 2,
      CountOfTombstones: 1,
      Collections: { Users: 1, Orders: 1 },
    });
    expect(stats.LastDocEtag).toBe(mark + 2);
    expect(db.changesAfter(mark, 100)).toEqual([
      { etag: mark + 1, id: 'users/1', collection: 'Users', deleted: true },
      { etag: mark + 2, id: 'users/2', collection: 'Users', deleted: false },
    ]);
    // Re-creating a deleted document replaces its tombstone.
    await db.batch([{ Type: 'PUT', Id: 'users/1', Document: user('A') }]);
    expect(db.stats().CountOfTombstones).toBe(0);
  });

  it('stores prepared chunks (bulk insert): new ids inserted, existing ones updated, tombstones superseded', async () => {
    await db.batch([
      { Type: 'PUT', Id: 'users/1', Document: user('A') },
      { Type: 'PUT', Id: 'users/2', Document: user('B') },
    ]);
    await db.batch([{ Type: 'DELETE', Id: 'users/2' }]);
    const mark = db.lastEtag;
    const chunk = emptyPreparedChunk();
    for (const [id, doc] of [
      ['USERS/1', user('A2')],
      ['users/2', user('B2')],
      ['users/3', user('C')],
      ['users/', user('D')],
    ] as const) {
      appendPrepared(chunk, id, prepareDocument(id, doc));
    }
    expect(await db.insertPrepared(chunk)).toBe(4);
    expect(db.lastEtag).toBe(mark + 4);
    expect(db.stats()).toMatchObject({
      CountOfDocuments: 4,
      CountOfTombstones: 0,
      Collections: { Users: 4 },
    });
    expect(parse(db.get('users/1')?.json).Name).toBe('A2');
    expect(parse(db.get('users/1')?.json)['@metadata']['@id']).toBe('users/1');
    expect(parse(db.get('users/2')?.json).Name).toBe('B2');
    expect(db.changesAfter(mark, 100).map((c) => [c.etag - mark, c.id])).toEqual([
      [1, 'users/1'],
      [2, 'users/2'],
      [3, 'users/3'],
      [4, 'users/1-A'],
    ]);
    // A document may not move to another collection this way either: the whole chunk fails.
    const moving = emptyPreparedChunk();
    appendPrepared(moving, 'users/9', prepareDocument('users/9', user('E')));
    appendPrepared(
      moving,
      'users/3',
      prepareDocument('users/3', { '@metadata': { '@collection': 'Orders' } }),
    );
    expect((await rejection(db.insertPrepared(moving))).code).toBe('CollectionChangeNotAllowed');
    expect(db.get('users/9')).toBeNull();
    expect(db.lastEtag).toBe(mark + 4);
  });

  it('survives close and reopen with counters, ids and etags intact', async () => {
    await db.batch([{ Type: 'PUT', Id: 'users/', Document: user('A') }]);
    await db.batch([{ Type: 'DELETE', Id: 'users/1-A' }]);
    await db.batch([{ Type: 'PUT', Id: 'users/', Document: user('B') }]);
    const before = db.stats();
    await db.close();
    db = Database.open(tmp.dir, { clock: () => now });
    expect({ ...db.stats(), SizeOnDisk: null }).toEqual({ ...before, SizeOnDisk: null });
    const [r] = await db.batch([{ Type: 'PUT', Id: 'users/', Document: user('C') }]);
    expect(r!.Id).toBe('users/3-A');
    expect(db.lastEtag).toBe(before.LastDocEtag + 1);
  });

  it('refuses work after close with a retryable error', async () => {
    await db.close();
    const error = await rejection(db.batch([{ Type: 'PUT', Id: 'a/1', Document: {} }]));
    expect(error.code).toBe('DatabaseUnavailable');
  });
});
