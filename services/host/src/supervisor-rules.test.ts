// The supervisor's rules, split out of it (tenant-env.ts, restart-policy.ts, idle-stop.ts, deadline.ts),
// checked without starting a process; supervisor.test.ts checks them at work with real tenants.
import pino from 'pino';
import { describe, expect, it } from 'vitest';
import { Deadline, withinDeadline } from './deadline.js';
import { idleCheckEveryMs, idleTenants } from './idle-stop.js';
import { FAILURE_WINDOW_MS, nextRestart, withFailure } from './restart-policy.js';
import { tenantEnvironment } from './tenant-env.js';
import { newTenantRecord } from './tenant-record.js';

describe('tenantEnvironment', () => {
  it("passes the tenant settings and everything not ROOKERY_*, never the host's own settings", () => {
    const env = tenantEnvironment(
      {
        PATH: '/bin',
        NODE_OPTIONS: '--enable-source-maps',
        ROOKERY_INTERNAL_TOKEN: 'secret',
        ROOKERY_PORT: '7070',
        ROOKERY_MIRROR: '/mnt/mirror',
        ROOKERY_MAX_BODY_BYTES: '1024',
      },
      { tenantLogLevel: 'warn', tenantHeapMb: 256 },
    );
    expect(env).toEqual({
      PATH: '/bin',
      NODE_OPTIONS: '--enable-source-maps --max-old-space-size=256',
      ROOKERY_MIRROR: '/mnt/mirror',
      ROOKERY_MAX_BODY_BYTES: '1024',
      ROOKERY_LOG_LEVEL: 'warn',
    });
  });
});

describe('restart policy', () => {
  const policy = { maxRestartsPerMinute: 3, restartBackoffMs: 100, restartBackoffMaxMs: 250 };

  it('backs off exponentially up to the cap, then suspends until the first failure is a minute old', () => {
    let failures: number[] = [];
    const delays: unknown[] = [];
    for (let at = 1_000; at <= 4_000; at += 1_000) {
      failures = withFailure(failures, at);
      delays.push(nextRestart(failures, policy));
    }
    expect(delays).toEqual([
      { delayMs: 100 },
      { delayMs: 200 },
      { delayMs: 250 },
      { suspendedUntil: 1_000 + FAILURE_WINDOW_MS },
    ]);
  });

  it('forgets failures older than a minute', () => {
    expect(withFailure([1, 2, 50_000], 61_500)).toEqual([50_000, 61_500]);
  });
});

describe('idle stop', () => {
  const record = (id: string, state: 'running' | 'stopped', lastActivityAt: number, inFlight = 0) =>
    Object.assign(newTenantRecord(id, `/d/${id}`, `/d/${id}.sock`, pino({ level: 'silent' })), {
      state,
      lastActivityAt,
      inFlight,
    });

  it('picks running tenants with nothing in flight for the idle time, never a busy or stopped one', () => {
    const tenants = [
      record('idle', 'running', 0),
      record('recent', 'running', 9_500),
      record('busy', 'running', 0, 1),
      record('stopped', 'stopped', 0),
    ];
    expect(idleTenants(tenants, 10_000, 1_000).map(({ tenant, idleMs }) => [tenant.id, idleMs])).toEqual([
      ['idle', 10_000],
    ]);
  });

  it('looks a quarter of the idle time apart, within 100 ms and 5 s', () => {
    expect([idleCheckEveryMs(40), idleCheckEveryMs(2_000), idleCheckEveryMs(900_000)]).toEqual([
      100, 500, 5_000,
    ]);
  });
});

describe('deadlines', () => {
  it('a work that ends first wins; one that does not gets the deadline error, raced once or twice', async () => {
    expect(await withinDeadline(Promise.resolve('done'), 60_000, () => new Error('late'))).toBe('done');
    const never = new Promise<never>(() => {});
    await expect(withinDeadline(never, 1, () => new Error('late'))).rejects.toThrow('late');
    let expiries = 0;
    const shared = new Deadline(1, () => new Error(`expired ${++expiries}`));
    await expect(shared.race(never)).rejects.toThrow('expired 1');
    await expect(shared.race(never)).rejects.toThrow('expired 1');
    shared.clear();
  });
});
