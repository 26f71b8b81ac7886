// The gateway's memory while it streams a large answer, measured on a gateway process of its own
// (gateway-process.ts): once to a reader as fast as it can go, then to one reading at ~10 MB/s. RSS is
// sampled every 20 ms. What proves the body is not held is the slow reader's peak above the fast one's
// (a fresh process's first large answer grows RSS once by tens of MB: chunk buffers wait for a GC).
import { type Dispatcher, request } from 'undici';
import { expect } from 'vitest';
import type { GatewayProcess } from './gateway-process.js';

export interface StreamMemory {
  /** Bytes the slow reader received. */
  bytes: number;
  /** RSS growth while the fast reader read, from before it. */
  fastGrowthMb: number;
  /** The slow reader's peak RSS above the fast reader's. */
  slowAboveFastMb: number;
}

/** Streams `from <collection> limit <limit>` of `database` twice through `gateway` with `agent`'s certificate. */
export async function streamMemory(
  gateway: GatewayProcess,
  agent: Dispatcher,
  options: { database: string; collection: string; limit: number },
): Promise<StreamMemory> {
  const query = async (onChunk: (chunk: Buffer) => Promise<void>) => {
    const response = await request(`${gateway.url}/databases/${options.database}/streams/queries`, {
      method: 'POST',
      dispatcher: agent,
      headers: { 'content-type': 'application/json' },
      body: JSON.stringify({ Query: `from ${options.collection} limit ${options.limit}` }),
    });
    expect(response.statusCode).toBe(200);
    let bytes = 0;
    for await (const chunk of response.body as AsyncIterable<Buffer>) {
      bytes += chunk.length;
      await onChunk(chunk);
    }
    return bytes;
  };
  const peakDuring = async (work: () => Promise<number>) => {
    const before = gateway.rssBytes();
    let peak = before;
    const sampler = setInterval(() => {
      peak = Math.max(peak, gateway.rssBytes());
    }, 20);
    const bytes = await work();
    clearInterval(sampler);
    return { bytes, before, peak };
  };
  const mb = (bytes: number) => bytes / 2 ** 20;
  const fast = await peakDuring(() => query(async () => undefined));
  // ~10 MB/s against a tenant that could deliver many times that: with backpressure the tenant waits.
  const slow = await peakDuring(() => query(() => new Promise((resolve) => setTimeout(resolve, 1))));
  return {
    bytes: slow.bytes,
    fastGrowthMb: mb(fast.peak - fast.before),
    slowAboveFastMb: mb(slow.peak - fast.peak),
  };
}
