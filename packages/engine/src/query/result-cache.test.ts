import { describe, expect, it } from 'vitest';
import { ResultCache } from './result-cache.js';

describe('ResultCache', () => {
  const reader = {};

  it('answers an etag it holds, for the reader that produced it only', () => {
    const cache = new ResultCache<string>(1000);
    cache.set('"a"', reader, 'answer a', 10);
    expect(cache.get('"a"', reader)).toBe('answer a');
    expect(cache.get('"a"', {})).toBeUndefined(); // a replaced index file under the same name
    expect(cache.get('"b"', reader)).toBeUndefined();
  });

  it('drops the least recently used entries beyond its bytes', () => {
    const cache = new ResultCache<string>(800);
    for (const key of ['1', '2', '3', '4']) cache.set(key, reader, key, 100);
    cache.get('1', reader); // now the most recently used
    for (const key of ['5', '6', '7', '8', '9']) cache.set(key, reader, key, 100);
    expect(cache.totalBytes).toBeLessThanOrEqual(800);
    expect(cache.get('1', reader)).toBe('1');
    expect(cache.get('2', reader)).toBeUndefined();
    expect(cache.get('9', reader)).toBe('9');
  });

  it('keeps nothing larger than an eighth of it, and nothing at all when off', () => {
    const cache = new ResultCache<string>(800);
    cache.set('big', reader, 'big', 101);
    expect(cache.get('big', reader)).toBeUndefined();
    const off = new ResultCache<string>(0);
    off.set('x', reader, 'x', 1);
    expect(off.size).toBe(0);
  });

  it('replacing an entry counts its bytes once', () => {
    const cache = new ResultCache<string>(800);
    cache.set('a', reader, 'one', 50);
    cache.set('a', reader, 'two', 70);
    expect(cache.totalBytes).toBe(70);
    expect(cache.get('a', reader)).toBe('two');
  });
});
