import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY_OPTIONS, type Failure, retryDelay } from './retry-policy.js';

const status = (code: string, s: number, retryAfterSeconds: number | null = null): Failure => ({
  kind: 'status',
  status: s,
  code,
  retryAfterSeconds,
});
const delay = (
  failure: Failure,
  idempotent: boolean,
  attempt = 1,
  waitedMs = 0,
  options = DEFAULT_RETRY_OPTIONS,
) => retryDelay({ failure, idempotent, attempt, waitedMs }, options);

describe('retryDelay', () => {
  it('retries what the tenant never saw, whatever the method, honouring Retry-After', () => {
    expect(delay(status('TenantStarting', 503, 2), false)).toBe(2000);
    expect(delay(status('TenantUnavailable', 503), false)).toBe(100);
    expect(delay(status('TenantUnavailable', 503), false, 4)).toBe(800);
  });

  it('retries other 503s and network failures only when sending twice is harmless', () => {
    expect(delay(status('DatabaseUnavailable', 503), true)).toBe(100);
    expect(delay(status('DatabaseUnavailable', 503), false)).toBeNull();
    expect(delay({ kind: 'network' }, true)).toBe(100);
    expect(delay({ kind: 'network' }, false)).toBeNull();
  });

  it('surfaces 429 unless asked, and never retries other errors', () => {
    expect(delay(status('RateLimited', 429, 1), true)).toBeNull();
    expect(
      delay(status('RateLimited', 429, 1), true, 1, 0, { ...DEFAULT_RETRY_OPTIONS, retryOnRateLimit: true }),
    ).toBe(1000);
    expect(
      delay(status('TooManyTwoFactorAttempts', 429, 1), true, 1, 0, {
        ...DEFAULT_RETRY_OPTIONS,
        retryOnRateLimit: true,
      }),
    ).toBeNull();
    expect(delay(status('InternalError', 500), true)).toBeNull();
  });

  it('bounds the total wait', () => {
    expect(delay(status('TenantStarting', 503, 10), true, 3, 25_000)).toBe(5_000);
    expect(delay(status('TenantStarting', 503, 1), true, 30, 30_000)).toBeNull();
  });
});
