// Per-tenant request rate: a token bucket per tenant, refilled continuously at
// the tenant's quota with a one-second burst. In memory per gateway; with N
// gateways behind a load balancer each enforces its share (documented).

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
    let bucket = this.buckets.get(tenantId);
    if (!bucket) {
      bucket = { tokens: perSecond, updatedAt: now };
      this.buckets.set(tenantId, bucket);
    }
    bucket.tokens = Math.min(perSecond, bucket.tokens + ((now - bucket.updatedAt) / 1000) * perSecond);
    bucket.updatedAt = now;
    if (bucket.tokens >= 1) {
      bucket.tokens -= 1;
      return { allowed: true, retryAfterSeconds: 0 };
    }
    return { allowed: false, retryAfterSeconds: Math.max(1, Math.ceil((1 - bucket.tokens) / perSecond)) };
  }
}
