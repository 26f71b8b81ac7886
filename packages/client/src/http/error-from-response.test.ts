import { describe, expect, it } from 'vitest';
import {
  ConcurrencyConflictError,
  RateLimitedError,
  RookeryClientError,
  SubscriptionTakenOverError,
  TenantUnavailableError,
  TooManyLiveConnectionsError,
  TwoFactorRequiredError,
} from '../errors.js';
import { errorFromResponse, retryAfterSeconds } from './error-from-response.js';

const problem = (code: string, status: number, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    type: `https://rookery.dev/errors/${code}`,
    title: code,
    status,
    detail: `about ${code}`,
    code,
    ...extra,
  });

describe('errorFromResponse', () => {
  it('maps stable codes to their classes and keeps the details', () => {
    const conflict = errorFromResponse(
      409,
      {},
      problem('ConcurrencyConflict', 409, {
        id: 'users/1',
        expectedChangeVector: 'A:1',
        actualChangeVector: 'A:2',
      }),
    );
    expect(conflict).toBeInstanceOf(ConcurrencyConflictError);
    expect(conflict).toMatchObject({
      code: 'ConcurrencyConflict',
      status: 409,
      detail: 'about ConcurrencyConflict',
    });
    const typed = conflict as ConcurrencyConflictError;
    expect([typed.documentId, typed.expectedChangeVector, typed.actualChangeVector]).toEqual([
      'users/1',
      'A:1',
      'A:2',
    ]);
    expect(errorFromResponse(401, {}, problem('TwoFactorRequired', 401))).toBeInstanceOf(
      TwoFactorRequiredError,
    );
    expect(errorFromResponse(503, {}, problem('TenantStarting', 503))).toBeInstanceOf(TenantUnavailableError);
    expect(errorFromResponse(409, {}, problem('SubscriptionTakenOver', 409))).toBeInstanceOf(
      SubscriptionTakenOverError,
    );
    expect(errorFromResponse(429, {}, problem('TooManyLiveConnections', 429))).toBeInstanceOf(
      TooManyLiveConnectionsError,
    );
    const limited = errorFromResponse(429, { 'retry-after': '3' }, problem('RateLimited', 429));
    expect(limited).toBeInstanceOf(RateLimitedError);
    expect((limited as RateLimitedError).retryAfterSeconds).toBe(3);
  });

  it('keeps unknown codes on the base class, and reports bodies that are not problems', () => {
    const unknown = errorFromResponse(418, {}, problem('SomethingNew', 418));
    expect(unknown.constructor).toBe(RookeryClientError);
    expect(unknown.code).toBe('SomethingNew');
    const html = errorFromResponse(502, {}, '<html>Bad gateway</html>');
    expect(html).toMatchObject({ code: 'UnexpectedResponse', status: 502 });
    expect(html.detail).toContain('Bad gateway');
    expect(errorFromResponse(500, {}, '').detail).toContain('(empty)');
  });

  it('reads Retry-After as seconds or as a date', () => {
    expect(retryAfterSeconds('2')).toBe(2);
    expect(retryAfterSeconds(undefined)).toBeNull();
    expect(retryAfterSeconds('soon')).toBeNull();
    const now = Date.parse('2026-01-01T00:00:00Z');
    expect(retryAfterSeconds('Thu, 01 Jan 2026 00:00:05 GMT', now)).toBe(5);
  });
});
