import { describe, expect, it } from 'vitest';
import { attemptDeadlineMs, retryDelayMs } from './attempts.js';

describe('retryDelayMs', () => {
  it('doubles per failed attempt, with up to as much again of jitter (pg-boss’s formula)', () => {
    expect([1, 2, 3].map((n) => retryDelayMs(1000, n, () => 0))).toEqual([1000, 2000, 4000]);
    expect([1, 2, 3].map((n) => retryDelayMs(1000, n, () => 0.5))).toEqual([1500, 3000, 6000]);
    expect(retryDelayMs(0, 5, () => 0.9)).toBe(0);
  });

  it('stops doubling after 16 retries', () => {
    expect(retryDelayMs(1, 40, () => 0)).toBe(2 ** 16);
  });
});

describe('attemptDeadlineMs', () => {
  it('gives up a tenth of the lease before it ends, at most five seconds before', () => {
    expect(attemptDeadlineMs(1000)).toBe(900);
    expect(attemptDeadlineMs(15 * 60_000)).toBe(15 * 60_000 - 5_000);
  });
});
