import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DocumentStore } from '../document-store.js';
import { InvalidQueryError } from '../errors.js';
import { type StackWithStores, startStackWithStores } from '../test-fixtures/stack-store.js';

// store.subscriptions against the real service over TLS: the gateway, the host and a real tenant process.
let env: StackWithStores;
let store: DocumentStore;

beforeAll(async () => {
  env = await startStackWithStores('subscriptions');
  store = env.store();
}, 120_000);
afterAll(async () => {
  await env?.close();
});

describe('subscriptions with $parameters', () => {
  it('are created with their parameters, return them, and deliver what the query matches with them', async () => {
    await store.bulkInsert(
      [5, 20, 30, 40].map((price, i) => ({
        id: `items/${i + 1}`,
        document: { Price: price, Tag: i === 2 ? 'green' : 'red', '@metadata': { '@collection': 'Items' } },
      })),
    );
    const query = 'from Items where Price >= $min and Tag in ($tags)';
    const parameters = { min: 10, tags: ['RED', 'blue'] };
    expect(await store.subscriptions.create({ name: 'priced', query, parameters })).toBe('priced');
    expect(await store.subscriptions.getSubscription('priced')).toMatchObject({
      Query: query,
      QueryParameters: parameters,
    });
    await expect(
      store.subscriptions.create({ name: 'unpriced', query, parameters: { min: 10 } }),
    ).rejects.toSatisfy(
      (error: unknown) => error instanceof InvalidQueryError && /\$tags/.test(error.message),
    );

    const worker = store.subscriptions.getSubscriptionWorker<{ Price: number }>('priced');
    const ids: string[] = [];
    for await (const batch of worker) {
      ids.push(...batch.items.map((item) => item.id));
      batch.acknowledge();
      if (ids.length >= 2) break;
    }
    expect(ids).toEqual(['items/2', 'items/4']);
    await worker.close();
  });
});
