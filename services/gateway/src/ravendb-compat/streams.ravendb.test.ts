// The official `ravendb` client's bulk insert and streams against Rookery (fixture.ts): store.bulkInsert()
// (an operation id, then the documents as one streamed JSON array; on a failure the client asks the
// operation's state for the reason), session.advanced.stream() of a prefix and of a query with its
// statistics, and their failures as the client's own exception types with Rookery's message.
import type { DocumentStore, StreamQueryStatistics, StreamResult } from 'ravendb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RavenFixture, startRavenFixture } from './fixture.js';

class Item {
  public name = '';
  public rank = 0;
  constructor(init?: Partial<Item>) {
    Object.assign(this, init);
  }
}

const COUNT = 3_000;

let fixture: RavenFixture;
let store: DocumentStore;

beforeAll(async () => {
  fixture = await startRavenFixture('raven-streams');
  await fixture.createDatabase('catalog');
  store = await fixture.store('catalog');
}, 120_000);
afterAll(async () => {
  await fixture?.close();
});

function failureOf(promise: Promise<unknown>): Promise<Error> {
  return promise.then(
    () => {
      throw new Error('expected a failure');
    },
    (error: Error) => error,
  );
}

/** Every result of a client stream, in order. */
async function collect<T extends object>(stream: NodeJS.ReadableStream): Promise<StreamResult<T>[]> {
  const results: StreamResult<T>[] = [];
  for await (const result of stream) results.push(result as unknown as StreamResult<T>);
  return results;
}

describe('the official ravendb client: bulk insert', () => {
  it('stores thousands of documents through store.bulkInsert(), with their collection', async () => {
    const bulk = store.bulkInsert();
    for (let i = 0; i < COUNT; i++) {
      await bulk.store(new Item({ name: `item ${i}`, rank: i % 10 }), `items/${String(i).padStart(5, '0')}`);
    }
    await bulk.finish();

    const session = store.openSession();
    const last = await session.load<Item>(`items/${String(COUNT - 1).padStart(5, '0')}`, Item);
    expect(last).toBeInstanceOf(Item);
    expect(last?.name).toBe(`item ${COUNT - 1}`);
    expect(session.advanced.getMetadataFor(last!)['@collection']).toBe('Items');
    expect(await store.openSession().query({ collection: 'Items' }).count()).toBe(COUNT);
  });

  it("fails with BulkInsertAbortedException carrying Rookery's reason; the documents before it stay", async () => {
    const bulk = store.bulkInsert();
    await bulk.store(new Item({ name: 'kept' }), 'broken/1');
    // Over Rookery's limit of a document id (512 bytes): the client sends it, the server refuses it.
    await bulk.store(new Item({ name: 'refused' }), `broken/${'x'.repeat(600)}`);
    const error = await failureOf(bulk.finish());
    expect(error.name).toBe('BulkInsertAbortedException');
    expect(error.message).toMatch(/at most 512 bytes/);
    expect(await store.openSession().load('broken/1')).not.toBeNull();
  });
});

describe('the official ravendb client: streams', () => {
  it('streams every document whose id starts with a prefix, in id order, as entities', async () => {
    const session = store.openSession();
    const results = await collect<Item>(
      await session.advanced.stream<Item>('items/', { documentType: Item }),
    );
    expect(results).toHaveLength(COUNT);
    expect(results[0]!.id).toBe('items/00000');
    expect(results[0]!.document).toBeInstanceOf(Item);
    expect(results.at(-1)!.id).toBe(`items/${String(COUNT - 1).padStart(5, '0')}`);
    expect(results.every((r, i) => r.document.name === `item ${i}` && r.changeVector)).toBe(true);
  });

  it('streams a query with its statistics first', async () => {
    // A stream does not wait for indexing (RavenDB's neither): a query that waits builds the index first.
    const built = store.openSession().query<Item>({ collection: 'Items' }).whereEquals('rank', 3);
    expect(await built.waitForNonStaleResults().count()).toBe(COUNT / 10);
    const session = store.openSession();
    const query = session.query<Item>({ collection: 'Items', documentType: Item }).whereEquals('rank', 3);
    let stats: StreamQueryStatistics | undefined;
    const results = await collect<Item>(
      await session.advanced.stream(query, (s) => {
        stats = s;
      }),
    );
    expect(results).toHaveLength(COUNT / 10);
    expect(results.every((r) => r.document instanceof Item && r.document.rank === 3)).toBe(true);
    expect(stats?.totalResults).toBe(COUNT / 10);
    expect(stats?.indexName).toBeTruthy();
  });

  it('a bad query fails with InvalidQueryException naming the problem, before any result', async () => {
    const session = store.openSession();
    const error = await failureOf(
      session.advanced.stream(session.advanced.rawQuery<Item>('from Items where rank >>> 3')),
    );
    expect(error.name).toBe('InvalidQueryException');
    expect(error.message.length).toBeGreaterThan(0);
  });

  it("options Rookery's streams do not have are refused by name (BadRequestException)", async () => {
    const error = await failureOf(store.openSession().advanced.stream('items/', { matches: 'item*' }));
    expect(error.name).toBe('BadRequestException');
    expect(error.message).toMatch(/matches/);
  });
});
