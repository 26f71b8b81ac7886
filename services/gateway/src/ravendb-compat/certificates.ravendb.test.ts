// The official `ravendb` client with `type: 'pem'` (fixture.ts's pemStore): the certificate and key files of
// `rookery cert issue --key-type rsa-2048`, concatenated as the client takes them. The client keeps only an
// `RSA PRIVATE KEY` block of that text and drops any other key without a word; with Rookery's default ECDSA
// key (PKCS#8) it then connects with no client certificate and fails "other side closed". The gateway takes
// the RSA certificate, signed by the ECDSA CA, like any other.
import type { DocumentStore, SubscriptionBatch } from 'ravendb';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type RavenFixture, startRavenFixture } from './fixture.js';

class Order {
  public customer = '';
  public total = 0;
  constructor(init?: Partial<Order>) {
    Object.assign(this, init);
  }
}

let fixture: RavenFixture;
let store: DocumentStore;

beforeAll(async () => {
  fixture = await startRavenFixture('raven-pem');
  await fixture.createDatabase('shop');
  store = await fixture.pemStore('shop', 'rsa-2048');
}, 120_000);
afterAll(async () => {
  await fixture?.close();
});

describe("the official ravendb client: certificates with type 'pem'", () => {
  it('stores, loads and queries with an RSA certificate issued by Rookery', async () => {
    const session = store.openSession();
    await session.store(new Order({ customer: 'ada', total: 42 }), 'orders/1');
    await session.saveChanges();

    const loaded = await store.openSession().load<Order>('orders/1', Order);
    expect(loaded).toMatchObject({ customer: 'ada', total: 42 });
    const found = await store
      .openSession()
      .query<Order>({ collection: 'Orders' })
      .waitForNonStaleResults()
      .whereEquals('customer', 'ada')
      .all();
    expect(found.map((order) => order.total)).toEqual([42]);
  });

  it('runs a subscription worker with it: the TCP connection presents the same PEM certificate', async () => {
    const name = await store.subscriptions.create({ name: 'pem-orders', query: 'from Orders' });
    const worker = store.subscriptions.getSubscriptionWorker<Order>({ subscriptionName: name });
    const failed = new Promise<never>((_, reject) => worker.on('error', (error?: Error) => reject(error)));
    const ids = new Promise<string[]>((resolve) => {
      worker.on('batch', (batch: SubscriptionBatch<Order>, done: (error?: Error) => void) => {
        done();
        resolve(batch.items.map((item) => item.id));
      });
    });
    try {
      expect(await Promise.race([ids, failed])).toEqual(['orders/1']);
    } finally {
      await worker.dispose();
    }
  });
});
