import { describe, expect, it } from 'vitest';
import { entryBytes, HttpCache } from './http-cache.js';

describe('HttpCache', () => {
  it('counts the bytes of what it holds and evicts the least recently used first', () => {
    const size = entryBytes('a', '"1"', 'x'.repeat(100));
    const cache = new HttpCache(size * 3);
    cache.set('a', '"1"', 'x'.repeat(100), 0);
    cache.set('b', '"1"', 'x'.repeat(100), 0);
    cache.set('c', '"1"', 'x'.repeat(100), 0);
    expect([cache.size, cache.bytes]).toEqual([3, size * 3]);
    cache.get('a'); // a is now the most recent; b the least
    cache.set('d', '"1"', 'x'.repeat(100), 0);
    expect([cache.get('a')?.etag, cache.get('b'), cache.get('c')?.etag, cache.get('d')?.etag]).toEqual([
      '"1"',
      undefined,
      '"1"',
      '"1"',
    ]);
    expect(cache.bytes).toBe(size * 3);
  });

  it('replaces an entry without counting it twice, and skips bodies larger than the budget', () => {
    const cache = new HttpCache(1000);
    cache.set('k', '"1"', 'short', 0);
    cache.set('k', '"2"', 'longer body', 0);
    expect([cache.size, cache.bytes, cache.get('k')?.etag]).toEqual([
      1,
      entryBytes('k', '"2"', 'longer body'),
      '"2"',
    ]);
    cache.set('big', '"1"', 'x'.repeat(1000), 0);
    expect(cache.get('big')).toBeUndefined();
    expect(cache.get('k')).toBeDefined();
    cache.delete('k');
    expect([cache.size, cache.bytes]).toEqual([0, 0]);
  });

  it('serves an entry as fresh only within its age and generation', () => {
    let now = 0;
    const cache = new HttpCache(10_000, () => now);
    cache.set('k', '"1"', 'body', cache.generation);
    const entry = cache.get('k')!;
    now = 50;
    expect(cache.isFresh(entry, 100)).toBe(true);
    now = 150;
    expect(cache.isFresh(entry, 100)).toBe(false);
    const before = cache.generation;
    cache.confirm(entry, before);
    expect(cache.isFresh(entry, 100)).toBe(true);
    cache.markSuspect(); // a change was notified: older entries must be revalidated
    expect(cache.isFresh(entry, 100)).toBe(false);
    // A 304 for a request sent before the notification does not make it fresh again.
    cache.confirm(entry, before);
    expect(cache.isFresh(entry, 100)).toBe(false);
    cache.confirm(entry, cache.generation);
    expect(cache.isFresh(entry, 100)).toBe(true);
    cache.clear();
    expect([cache.size, cache.bytes, cache.get('k')]).toEqual([0, 0, undefined]);
  });
});
