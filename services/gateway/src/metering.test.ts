import { describe, expect, it } from 'vitest';
import { UsageMeter } from './metering.js';
import { RateLimiter } from './rate-limiter.js';

describe('UsageMeter', () => {
  it('sums per tenant per minute and hands each sum over once', () => {
    let now = Date.UTC(2026, 10, 22, 10, 0, 30);
    const meter = new UsageMeter(() => now);
    meter.record('a', { bytesIn: 10, bytesOut: 100, workUnits: 2 });
    meter.record('a', { bytesIn: 5, bytesOut: 50, workUnits: 1 });
    meter.record('b', { bytesIn: 1, bytesOut: 1, workUnits: 1 });
    now += 60_000;
    meter.record('a', { bytesIn: 1, bytesOut: 1, workUnits: 1 });
    const rows = meter.take();
    const minute = Date.UTC(2026, 10, 22, 10, 0);
    expect(rows).toEqual([
      { tenantId: 'a', minute, requests: 2, bytesIn: 15, bytesOut: 150, workUnits: 3 },
      { tenantId: 'b', minute, requests: 1, bytesIn: 1, bytesOut: 1, workUnits: 1 },
      { tenantId: 'a', minute: minute + 60_000, requests: 1, bytesIn: 1, bytesOut: 1, workUnits: 1 },
    ]);
    expect(meter.take()).toEqual([]);
  });

  it("adds an open socket's traffic to the minute it is metered in, without counting a request", () => {
    let now = Date.UTC(2026, 10, 22, 10, 0, 30);
    const meter = new UsageMeter(() => now);
    meter.record('a', { bytesIn: 0, bytesOut: 0, workUnits: 1 }); // the upgrade
    meter.recordTraffic('a', { bytesIn: 10, bytesOut: 200 });
    meter.recordTraffic('a', { bytesIn: 0, bytesOut: 0 }); // an idle socket adds no row
    now += 60_000;
    meter.recordTraffic('a', { bytesIn: 1, bytesOut: 2 });
    meter.recordTraffic('b', { bytesIn: 0, bytesOut: 0 });
    const minute = Date.UTC(2026, 10, 22, 10, 0);
    expect(meter.take()).toEqual([
      { tenantId: 'a', minute, requests: 1, bytesIn: 10, bytesOut: 200, workUnits: 1 },
      { tenantId: 'a', minute: minute + 60_000, requests: 0, bytesIn: 1, bytesOut: 2, workUnits: 0 },
    ]);
  });
});

describe('RateLimiter', () => {
  it('allows the quota per second with a one-second burst, then says when to retry', () => {
    let now = 1_000_000;
    const limiter = new RateLimiter(() => now);
    for (let i = 0; i < 5; i++) expect(limiter.take('t', 5).allowed).toBe(true);
    const refused = limiter.take('t', 5);
    expect(refused).toEqual({ allowed: false, retryAfterSeconds: 1 });
    expect(limiter.take('other', 5).allowed).toBe(true);
    now += 200; // one token back at 5/s
    expect(limiter.take('t', 5).allowed).toBe(true);
    expect(limiter.take('t', 5).allowed).toBe(false);
  });

  it("lets one request through at a time on a share below one a second (a gateway's part of a small quota)", () => {
    let now = 1_000_000;
    const limiter = new RateLimiter(() => now);
    expect(limiter.take('t', 0.25).allowed).toBe(true);
    expect(limiter.take('t', 0.25)).toEqual({ allowed: false, retryAfterSeconds: 4 });
    now += 2_000;
    expect(limiter.take('t', 0.25).allowed).toBe(false);
    now += 2_000;
    expect(limiter.take('t', 0.25).allowed).toBe(true);
    expect(limiter.take('t', 0.25).allowed).toBe(false);
  });
});
