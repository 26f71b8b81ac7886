import { readFileSync } from 'node:fs';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import type { DocumentStore } from '../document-store.js';
import { type StackWithStores, startStackWithStores } from '../test-fixtures/stack-store.js';

// A slow reader of a long stream must not make anyone buffer it: the tenant produces lines only as fast
// as they are read, through the gateway's proxy, TLS and this client. 200,000 documents are streamed at a
// throttled pace while the resident memory of the tenant process and of this process (which runs the
// gateway in-process, and the client) is sampled; neither may grow by more than 32 MB.
const DOCUMENTS = 200_000;
const LIMIT_BYTES = 32 * 1024 * 1024;
let env: StackWithStores;
let store: DocumentStore;

/** VmRSS of a process, in bytes. */
function rssOf(pid: number): number {
  const match = /VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, 'utf8'));
  if (match === null) throw new Error(`no VmRSS for ${pid}`);
  return Number(match[1]) * 1024;
}

beforeAll(async () => {
  env = await startStackWithStores('streaming');
  store = env.store();
  function* documents() {
    for (let i = 0; i < DOCUMENTS; i++) {
      yield {
        id: `items/${i}`,
        document: {
          N: i,
          Title: `Item number ${i}`,
          Tags: ['a', 'b', 'c'],
          Body: 'x'.repeat(200),
          '@metadata': { '@collection': 'Items' },
        },
      };
    }
  }
  expect((await store.bulkInsert(documents())).processed).toBe(DOCUMENTS);
}, 300_000);
afterAll(async () => {
  await env?.close();
});

describe('a stream read slowly', () => {
  it('keeps the tenant and the gateway (+ client) within 32 MB of where they started', {
    timeout: 300_000,
  }, async () => {
    const tenantPid = env.stack.supervisor.info(env.tenantId).pid;
    expect(tenantPid).toBeTypeOf('number');
    // Warm both sides up with a short stream first, so the baseline includes the stream machinery.
    for await (const _ of store.openSession().advanced.stream({ collection: 'Items', pageSize: 10 })) {
      // drain
    }
    const baseline = { tenant: rssOf(tenantPid!), local: process.memoryUsage().rss };
    const peak = { ...baseline };
    const sample = () => {
      peak.tenant = Math.max(peak.tenant, rssOf(tenantPid!));
      peak.local = Math.max(peak.local, process.memoryUsage().rss);
    };
    const stream = store.openSession().advanced.stream<{ N: number }>({ collection: 'Items' });
    let count = 0;
    let expected = 0;
    for await (const { document } of stream) {
      if (document.N !== expected) throw new Error(`out of order at ${count}: ${document.N}`);
      expected += 1;
      count += 1;
      // The throttle: 1,000 documents per 25 ms (40,000/s at most), slower than the tenant produces them.
      if (count % 1_000 === 0) {
        sample();
        await new Promise((resolve) => setTimeout(resolve, 25));
      }
    }
    sample();
    expect(count).toBe(DOCUMENTS);
    expect(stream.end?.Count).toBe(DOCUMENTS);
    const growth = { tenant: peak.tenant - baseline.tenant, local: peak.local - baseline.local };
    process.stderr.write(
      `stream of ${DOCUMENTS}: tenant RSS +${(growth.tenant / 2 ** 20).toFixed(1)} MB, gateway+client RSS +${(growth.local / 2 ** 20).toFixed(1)} MB\n`,
    );
    expect(growth.tenant).toBeLessThanOrEqual(LIMIT_BYTES);
    expect(growth.local).toBeLessThanOrEqual(LIMIT_BYTES);
  });
});
