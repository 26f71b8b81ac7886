// A subscription consumer in its own process, for the crash test: prints one JSON line per batch it
// receives ({"batchId", "ids"}) and, from its `ROOKERY_HOLD_AT`-th batch on, holds the batch without
// acknowledging it (never asks for the next), so the test can SIGKILL it mid-batch.
// Run: node --conditions=@rookery/source --import tsx src/test-fixtures/subscription-consumer.ts
import { DocumentStore } from '../document-store.js';

const env = (name: string): string => {
  const value = process.env[name];
  if (value === undefined) throw new Error(`${name} is not set`);
  return value;
};

const store = new DocumentStore({
  url: env('ROOKERY_URL'),
  database: env('ROOKERY_DATABASE'),
  certificate: { cert: env('ROOKERY_CERT'), key: env('ROOKERY_KEY') },
  ca: env('ROOKERY_CA'),
}).initialize();
const holdAt = Number(env('ROOKERY_HOLD_AT'));
const worker = store.subscriptions.getSubscriptionWorker(env('ROOKERY_SUBSCRIPTION'), {
  batchSize: Number(env('ROOKERY_BATCH_SIZE')),
});

let received = 0;
for await (const batch of worker) {
  received += 1;
  process.stdout.write(`${JSON.stringify({ batchId: batch.batchId, ids: batch.items.map((i) => i.id) })}\n`);
  if (received >= holdAt) await new Promise(() => undefined); // processing "forever": killed here
}
