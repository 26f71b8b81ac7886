// Writes: durable single-document saves and batches from many users at once
// (k6/writes.js), into an empty database. Every save is acknowledged after its
// transaction's fsync (the tenant's default, synchronous=FULL).
import type { ScenarioSetDefinition } from './types.js';

/** Documents per batch, and the share of saves that are batches. */
const BATCH_SIZE = 25;
const BATCH_SHARE = 0.2;

export const writesSet: ScenarioSetDefinition = {
  script: 'writes.js',
  database: 'writes',
  async prepare(_stack, client) {
    // One save before the clock starts: the first write also creates the collection.
    await client.expect(
      'PUT',
      '/databases/writes/docs?id=orders/warm-1',
      { Freight: 1, '@metadata': { '@collection': 'Orders' } },
      [201],
    );
    return {
      config: { writes: { batchSize: BATCH_SIZE, batchShare: BATCH_SHARE } },
      description:
        `durable saves: ${100 - BATCH_SHARE * 100}% single documents (PUT), ` +
        `${BATCH_SHARE * 100}% batches of ${BATCH_SIZE} (bulk_docs), ~1 KB orders`,
    };
  },
};
