// The reaper against a real control store (a SQLite file) whose clock the test moves (the store's
// test-only fleetClock): no test sleeps against a lease. Sweeps are called directly; the timer that calls
// them in a host is exercised by the fleet failover tests with real host processes.
import path from 'node:path';
import { type ControlStore, openSqliteControlStore } from '@rookery/control-store';
import { makeTempDir } from '@rookery/testkit';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { HostMetrics } from './metrics.js';
import { Reaper } from './reaper.js';

const TTL = 10_000;
const GRACE = 2_000;

describe('the reaper', () => {
  let tmp: ReturnType<typeof makeTempDir>;
  let now = 1_800_000_000_000;
  const stores: ControlStore[] = [];
  let store: ControlStore;
  const logged: { level: number; msg: string }[] = [];
  const logger = pino(
    { level: 'info' },
    { write: (line: string) => logged.push(JSON.parse(line) as { level: number; msg: string }) },
  );

  async function open(): Promise<ControlStore> {
    const opened = await openSqliteControlStore(path.join(tmp.dir, 'control.db'), { fleetClock: () => now });
    stores.push(opened);
    return opened;
  }

  /** The reaper of a host whose lease is live (or not) as `live` says, on its own store connection. */
  function reaperOf(reaperStore: ControlStore, live: () => boolean = () => true) {
    const metrics = new HostMetrics(() => 0);
    const reaper = new Reaper({
      store: reaperStore,
      liveEpoch: () => (live() ? 1 : null),
      graceMs: GRACE,
      intervalMs: 1_000,
      logger,
      moves: metrics.reaperMoves,
      failures: metrics.reaperFailures,
    });
    return { reaper, metrics };
  }

  beforeEach(async () => {
    tmp = makeTempDir('rookery-reaper-');
    logged.length = 0;
    store = await open();
    for (const id of ['a', 'b', 'c', 'd']) await store.createTenant({ id, name: id });
    await store.acquireLease('dead', 'http://dead:1', 10, TTL);
    for (const id of ['a', 'b', 'c', 'd']) await store.placeTenant(id);
    await store.acquireLease('h2', 'http://h2:1', 10, TTL);
    await store.acquireLease('h3', 'http://h3:1', 10, TTL);
  });
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
    tmp.cleanup();
  });

  const renew = async (...hosts: string[]) => {
    for (const h of hosts) await store.renewLease(h, 1, TTL);
  };
  /** Time moves (h2 and h3 renewing, the dead host not) until the dead lease expired more than the grace ago. */
  const pastGrace = async () => {
    now += TTL - 1;
    await renew('h2', 'h3');
    now += GRACE + 2;
    await renew('h2', 'h3');
  };

  it('re-places a dead host’s tenants only once its lease expired more than the grace ago, logging and counting each move', async () => {
    const { reaper, metrics } = reaperOf(store);
    now += TTL - 1; // the dead host's lease is still running
    await renew('h2', 'h3');
    expect((await reaper.sweep()).moved).toEqual([]);
    now += 1 + GRACE; // expired exactly the grace ago: not yet
    await renew('h2', 'h3');
    expect((await reaper.sweep()).moved).toEqual([]);
    now += 1;
    await renew('h2', 'h3');
    const outcome = await reaper.sweep();
    expect(outcome.moved.map((m) => [m.tenantId, m.from, m.epoch])).toEqual([
      ['a', 'dead', 2],
      ['b', 'dead', 2],
      ['c', 'dead', 2],
      ['d', 'dead', 2],
    ]);
    // Spread by load: two each on h2 and h3.
    const placed = await Promise.all(['a', 'b', 'c', 'd'].map((id) => store.getPlacement(id)));
    expect(placed.map((p) => p!.hostId).sort()).toEqual(['h2', 'h2', 'h3', 'h3']);
    expect(await metrics.text()).toMatch(/rookery_host_reaper_moves_total\{reason="lease-expired"\} 4/);
    const moves = logged.filter((l) => l.msg.startsWith('re-placed a tenant'));
    expect(moves).toHaveLength(4);
    expect(moves[0]).toMatchObject({ tenant: 'a', from: 'dead', epoch: 2, reason: 'lease-expired' });
    // Nothing left to do.
    expect((await reaper.sweep()).moved).toEqual([]);
  });

  it('of two hosts’ reapers sweeping at once, each tenant is moved exactly once; the other loses its swap quietly', async () => {
    const first = reaperOf(store);
    const second = reaperOf(await open());
    await pastGrace();
    const [x, y] = await Promise.all([first.reaper.sweep(), second.reaper.sweep()]);
    // No tenant twice: a reaper that read the decision before the other's move loses its swap.
    const moved = [...x.moved, ...y.moved].map((m) => m.tenantId).sort();
    expect(moved).toEqual(['a', 'b', 'c', 'd']);
    expect([...x.failed, ...y.failed]).toEqual([]);
    for (const id of ['a', 'b', 'c', 'd']) expect((await store.getPlacement(id))!.epoch).toBe(2);
    expect(logged.filter((l) => l.level >= 40)).toEqual([]);
  });

  it('does not sweep while its own lease is not live, nor while more than half of the hosts expired (logged once)', async () => {
    let live = false;
    const { reaper, metrics } = reaperOf(store, () => live);
    now += TTL + GRACE + 1;
    expect((await reaper.sweep()).skipped).toBe('this host holds no live lease');
    live = true;
    // Every lease expired (the store or the network, not the hosts): withheld.
    for (let i = 0; i < 3; i++) expect((await reaper.sweep()).skipped).toMatch(/more than half/);
    expect(logged.filter((l) => /more than half/.test(l.msg))).toHaveLength(1);
    expect((await store.getPlacement('a'))!.hostId).toBe('dead');
    // Back (new leases): one of three expired.
    await store.acquireLease('h2', 'http://h2:1', 10, TTL);
    await store.acquireLease('h3', 'http://h3:1', 10, TTL);
    const outcome = await reaper.sweep();
    expect(outcome.skipped).toBeNull();
    expect(outcome.moved).toHaveLength(4);
    expect(await metrics.text()).toMatch(/rookery_host_reaper_failures_total 0/);
  });

  it('after an outage that lapsed every lease, waits a TTL and the grace on its new lease before judging the hosts not back yet', async () => {
    // The store was down for longer than a TTL: every lease lapsed. h2 is back first, under a new lease.
    now += TTL + GRACE + 1;
    const h2 = await store.acquireLease('h2', 'http://h2:1', 10, TTL);
    const h3 = await store.acquireLease('h3', 'http://h3:1', 10, TTL);
    const renewBoth = async () => {
      await store.renewLease('h2', h2.epoch, TTL);
      await store.renewLease('h3', h3.epoch, TTL);
    };
    const metrics = new HostMetrics(() => 0);
    const reaper = new Reaper({
      store,
      liveEpoch: () => h2.epoch,
      graceMs: GRACE,
      intervalMs: 1_000,
      settleMs: TTL + GRACE,
      now: () => now,
      logger,
      moves: metrics.reaperMoves,
      failures: metrics.reaperFailures,
    });
    // One host of three not back (yet): not more than half, so the store would let its tenants go.
    const first = await reaper.sweep();
    expect(first.moved).toEqual([]);
    expect(first.skipped).toMatch(/less than a lease TTL and the grace ago/);
    // It comes back within the TTL: a new lease, and its tenants reclaimed. Nothing is ever moved.
    now += TTL / 2;
    const back = await store.acquireLease('dead', 'http://dead:1', 10, TTL);
    expect(await store.reclaimPlacements('dead', back.epoch)).toHaveLength(4);
    await renewBoth();
    now += TTL / 2 + GRACE;
    await renewBoth();
    await store.renewLease('dead', back.epoch, TTL);
    expect((await reaper.sweep()).moved).toEqual([]);
    expect((await store.getPlacement('a'))!.hostId).toBe('dead');
    // Had it stayed dead, it would be reaped now: its lease lapses for good.
    now += TTL - 1;
    await renewBoth();
    now += GRACE + 2;
    await renewBoth();
    expect((await reaper.sweep()).moved).toHaveLength(4);
  });

  it('counts a tenant it cannot place anywhere as a failure and tries again at the next sweep', async () => {
    const { reaper, metrics } = reaperOf(store);
    await store.drainHost('h2');
    await store.drainHost('h3');
    await pastGrace();
    const outcome = await reaper.sweep();
    expect(outcome.failed).toEqual(['a', 'b', 'c', 'd']);
    expect(await metrics.text()).toMatch(/rookery_host_reaper_failures_total 4/);
    await store.activateHost('h3');
    expect((await reaper.sweep()).moved).toHaveLength(4);
  });
});
