import type { HiLoResponse } from '@rookery/protocol';
import { describe, expect, it } from 'vitest';
import { HiLoIdGenerator, MultiTypeHiLoIdGenerator } from './hilo.js';

/** A server stand-in with the real route's arithmetic: ranges per tag, doubling when asked again soon. */
function fakeServer() {
  const highs = new Map<string, number>();
  const calls: { tag: string; last: { size: number } | null }[] = [];
  const fetch = async (
    tag: string,
    last: { size: number; fetchedAt: Date } | null,
  ): Promise<HiLoResponse> => {
    calls.push({ tag, last });
    const size = last === null ? 32 : last.size * 2;
    const high = (highs.get(tag) ?? 0) + size;
    highs.set(tag, high);
    return { Prefix: `${tag}/`, Low: high - size + 1, High: high, LastSize: size, ServerTag: 'A' };
  };
  return { fetch, calls };
}

describe('HiLo ids', () => {
  it('numbers ids from a range and asks for the next range (reporting the last one) only when it runs out', async () => {
    const server = fakeServer();
    const generator = new HiLoIdGenerator('users', server.fetch);
    const ids: string[] = [];
    for (let i = 0; i < 40; i++) ids.push(await generator.nextId());
    expect(ids.slice(0, 3)).toEqual(['users/1-A', 'users/2-A', 'users/3-A']);
    expect(ids[32]).toBe('users/33-A');
    expect(new Set(ids).size).toBe(40);
    expect(server.calls).toEqual([
      { tag: 'users', last: null },
      { tag: 'users', last: expect.objectContaining({ size: 32 }) },
    ]);
  });

  it('shares one request among concurrent callers and never hands out an id twice', async () => {
    const server = fakeServer();
    const generator = new HiLoIdGenerator('orders', server.fetch);
    const ids = await Promise.all(Array.from({ length: 100 }, () => generator.nextId()));
    expect(new Set(ids).size).toBe(100);
    expect(server.calls.length).toBe(3); // 32 + 64 + 128 ≥ 100
  });

  it('keeps one generator per tag, whatever its case', async () => {
    const server = fakeServer();
    const ids = new MultiTypeHiLoIdGenerator(server.fetch);
    expect(await ids.nextId('users')).toBe('users/1-A');
    expect(await ids.nextId('companies')).toBe('companies/1-A');
    expect(await ids.nextId('Users')).toBe('users/2-A');
    expect(server.calls.map((c) => c.tag)).toEqual(['users', 'companies']);
  });
});
