// Per-tenant request rate: a token bucket per tenant, refilled continuously at
// the rate it is asked for with a one-second burst (at least one request, so a
// share below 1/s still lets a request through now and then). In memory; with
// several gateways each asks for its share of the tenant's quota (limit-shares.ts).

export interface RateDecision {
  allowed: boolean;
  /** Seconds until a request would be allowed again (for Retry-After). */
  retryAfterSeconds: number;
}

interface Bucket {
  tokens: number;
  updatedAt: number;
}

export class RateLimiter {
  private readonly buckets = new Map<string, Bucket>();

  constructor(private readonly now: () => number = Date.now) {}

  take(tenantId: string, perSecond: number): RateDecision {
    const now = this.now();
    const burst = Math.max(1, perSecond);
    let bucket = this.buckets.get(tenantId);
    if (!bucket) {
      bucket = { tokens: burst, updatedAt: now };
      this.buckets.set(tenantId, bucket);
    }
    bucket.tokens = Math.min(burst, bucket.tokens + ((now - bucket.updatedAt) / 1000) * perSecond);
    bucket.updatedAt = now;
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { allowed: true, retryAfterSeconds: 0 };
    }
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / perSecond)) };
  }
}
