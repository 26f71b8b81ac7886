// The fleet's contract (fleet-store.ts): leases, placements, moves and the
// reaper's decision, run against SQLite and a real PostgreSQL by
// sqlite-store.test.ts and postgres-store.test.ts. Time is an injected clock
// that only the test moves (no sleep races a TTL), except in the one test that
// proves the database's own clock is used when none is injected.
import { RookeryError } from '@rookery/protocol';
import { beforeEach, describe, expect, it } from 'vitest';
import { failure } from '../test-fixtures/failure.js';
import { type FleetStoreFactory, storesPerTest } from './contract-stores.js';
import type { ControlStore } from './control-store.js';

/** The store tests (sqlite-store.test.ts, postgres-store.test.ts) name their factory by it here. */
export type { FleetStoreFactory };

const T0 = 1_700_000_000_000;
const TTL = 10_000;
const address = (host: string) => `https://${host}.internal:8443`;

export function fleetStoreContract(factory: FleetStoreFactory): void {
  const stores = storesPerTest(factory, T0);
  const { clock, another } = stores;
  let store: ControlStore;
  beforeEach(() => {
    store = stores.store;
  });

  async function tenants(...ids: string[]): Promise<void> {
    for (const id of ids) await store.createTenant({ id, name: id });
  }

  async function hosts(capacity: number, ...ids: string[]): Promise<void> {
    for (const id of ids) await store.acquireLease(id, address(id), capacity, TTL);
  }

  describe('leases', () => {
    it('acquires, renews, lapses and re-acquires with a higher epoch', async () => {
      expect(await store.acquireLease('h1', address('h1'), 5, TTL)).toEqual({
        hostId: 'h1',
        epoch: 1,
        expiresAt: T0 + TTL,
        ttlMs: TTL,
      });
      clock.now += 4_000;
      expect(await store.renewLease('h1', 1, TTL)).toMatchObject({ epoch: 1, expiresAt: clock.now + TTL });

      clock.now += TTL; // exactly at the deadline: expired
      const lapsed = await failure(store.renewLease('h1', 1, TTL));
      expect(lapsed.code).toBe('LeaseExpired');
      expect(lapsed.status).toBe(503);
      expect(await store.getHost('h1')).toMatchObject({ epoch: 1, live: false });

      const again = await store.acquireLease('h1', 'https://h1.elsewhere:9443', 7, TTL);
      expect(again).toMatchObject({ epoch: 2, expiresAt: clock.now + TTL });
      expect(await store.getHost('h1')).toMatchObject({
        address: 'https://h1.elsewhere:9443',
        capacity: 7,
        epoch: 2,
        acquiredAt: clock.now,
        state: 'active',
        placements: 0,
        live: true,
      });
      // The old incarnation cannot renew the new one's lease.
      expect((await failure(store.renewLease('h1', 1, TTL))).code).toBe('LeaseSuperseded');
      expect(await store.renewLease('h1', 2, TTL)).toMatchObject({ epoch: 2 });
    });

    it('fences a live incarnation when the same host registers again (a restart)', async () => {
      await store.acquireLease('h1', address('h1'), 5, TTL);
      const restarted = await store.acquireLease('h1', address('h1'), 5, TTL);
      expect(restarted.epoch).toBe(2);
      const superseded = await failure(store.renewLease('h1', 1, TTL));
      expect(superseded.code).toBe('LeaseSuperseded');
      expect(superseded.status).toBe(409);
      expect(superseded.message).toMatch(/epoch 2, not 1/);
    });

    it('refuses unknown hosts and bad input, recording nothing', async () => {
      expect((await failure(store.renewLease('nobody', 1, TTL))).code).toBe('HostNotFound');
      const bad: [string, string, number, number][] = [
        ['', address('x'), 1, TTL],
        ['h 1', address('x'), 1, TTL],
        ['h1', 'ftp://h1.internal', 1, TTL],
        ['h1', 'not a url', 1, TTL],
        ['h1', address('h1'), 0, TTL],
        ['h1', address('h1'), 1.5, TTL],
        ['h1', address('h1'), 1, 99],
        ['h1', address('h1'), 1, 3_600_001],
        ['h'.repeat(201), address('h1'), 1, TTL],
        ['h1', `https://h1.internal/${'p'.repeat(2048)}`, 1, TTL],
        ['h1', address('h1'), Number.NaN, TTL],
      ];
      for (const [host, url, capacity, ttl] of bad) {
        expect((await failure(store.acquireLease(host, url, capacity, ttl))).code).toBe('InvalidRequest');
      }
      expect(await store.listHosts()).toEqual([]);
      await store.acquireLease('h1', address('h1'), 1, TTL);
      await tenants('a');
      await store.placeTenant('a');
      expect((await failure(store.renewLease('h1', -1, TTL))).code).toBe('InvalidRequest');
      expect((await failure(store.movePlacement('a', 0.5, 'h1'))).code).toBe('InvalidRequest');
      expect((await failure(store.reclaimPlacements('h1', Number.POSITIVE_INFINITY))).code).toBe(
        'InvalidRequest',
      );
      expect((await failure(store.tenantsToReplace(-1))).code).toBe('InvalidRequest');
      expect((await failure(store.getPlacement('x'.repeat(201)))).code).toBe('InvalidRequest');
      expect(await store.getPlacement('a')).toMatchObject({ hostId: 'h1', epoch: 1 });
    });
  });

  describe('placements', () => {
    it('places a new tenant once, however many callers on two stores race for it', async () => {
      await hosts(10, 'h1', 'h2', 'h3');
      await tenants('acme');
      const other = await another();
      const answers = await Promise.all(
        Array.from({ length: 12 }, (_, i) => (i % 2 === 0 ? store : other).placeTenant('acme')),
      );
      const first = answers[0]!;
      expect(first).toMatchObject({ tenantId: 'acme', epoch: 1, hostEpoch: 1, updatedAt: T0 });
      expect(first.address).toBe(address(first.hostId));
      for (const answer of answers) expect(answer).toEqual(first);
      const load = (await store.listHosts()).map((h) => h.placements);
      expect(load.reduce((a, b) => a + b, 0)).toBe(1);
    });

    it('fills the least loaded host, never beyond any capacity, even placing many tenants at once', async () => {
      await store.acquireLease('big', address('big'), 3, TTL);
      await store.acquireLease('small', address('small'), 2, TTL);
      const ids = Array.from({ length: 8 }, (_, i) => `t${i}`);
      await tenants(...ids);
      const other = await another();
      const results = await Promise.allSettled(
        ids.map((id, i) => (i % 2 === 0 ? store : other).placeTenant(id)),
      );
      const placed = results.filter((r) => r.status === 'fulfilled');
      const refused = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
      expect(placed).toHaveLength(5);
      expect(refused).toHaveLength(3);
      for (const r of refused) {
        expect(r.reason).toBeInstanceOf(RookeryError);
        expect((r.reason as RookeryError).code).toBe('NoHostAvailable');
        expect((r.reason as RookeryError).status).toBe(503);
      }
      expect((await store.listHosts()).map((h) => [h.hostId, h.placements])).toEqual([
        ['big', 3],
        ['small', 2],
      ]);
    });

    it('chooses the host with the fewest tenants', async () => {
      await hosts(10, 'h1');
      await tenants('a', 'b', 'c');
      await store.placeTenant('a');
      await store.placeTenant('b');
      await hosts(10, 'h2');
      expect((await store.placeTenant('c')).hostId).toBe('h2');
    });

    it('skips draining, retired and expired hosts, and takes a host back once activated', async () => {
      await hosts(10, 'drained', 'expired', 'live');
      await store.acquireLease('empty', address('empty'), 10, TTL);
      await store.drainHost('drained');
      await store.drainHost('empty');
      await store.retireHost('empty');
      clock.now += TTL - 1;
      await store.renewLease('live', 1, TTL);
      await store.renewLease('drained', 1, TTL);
      clock.now += 1; // 'expired' and 'empty' lapse now
      await tenants('a', 'b', 'c');
      expect((await store.placeTenant('a')).hostId).toBe('live');
      expect((await store.placeTenant('b')).hostId).toBe('live');
      expect(await store.getHost('drained')).toMatchObject({ state: 'draining', live: true });
      await store.activateHost('drained');
      expect((await store.placeTenant('c')).hostId).toBe('drained');
      await store.drainHost('drained');
      await store.drainHost('live');
      await tenants('d');
      expect((await failure(store.placeTenant('d'))).code).toBe('NoHostAvailable');
      expect(await store.getPlacement('d')).toBeNull();
    });

    it('answers TenantNotFound for an unknown tenant and lists a host’s placements', async () => {
      await hosts(10, 'h1');
      expect((await failure(store.placeTenant('nobody'))).code).toBe('TenantNotFound');
      await tenants('b', 'a');
      await store.placeTenant('b');
      await store.placeTenant('a');
      expect((await store.listPlacements('h1')).map((p) => p.tenantId)).toEqual(['a', 'b']);
      expect(await store.listPlacements('h2')).toEqual([]);
    });

    it('goes with its tenant', async () => {
      await hosts(10, 'h1');
      await tenants('acme');
      await store.placeTenant('acme');
      await store.deleteTenant('acme');
      expect(await store.getPlacement('acme')).toBeNull();
      expect((await store.getHost('h1'))?.placements).toBe(0);
    });
  });

  describe('moves', () => {
    it('moves by compare-and-swap, raising the epoch; of two concurrent moves exactly one wins', async () => {
      await hosts(10, 'h1', 'h2', 'h3');
      const ids = ['a', 'b', 'c', 'd', 'e'];
      await tenants(...ids);
      const other = await another();
      for (const id of ids) {
        const placed = await store.placeTenant(id);
        const targets = ['h1', 'h2', 'h3'].filter((h) => h !== placed.hostId);
        const results = await Promise.allSettled([
          store.movePlacement(id, placed.epoch, targets[0]!),
          other.movePlacement(id, placed.epoch, targets[1]!),
        ]);
        const won = results.filter((r) => r.status === 'fulfilled');
        const lost = results.filter((r): r is PromiseRejectedResult => r.status === 'rejected');
        expect(won).toHaveLength(1);
        expect(lost).toHaveLength(1);
        expect((lost[0]!.reason as RookeryError).code).toBe('PlacementConflict');
        expect((lost[0]!.reason as RookeryError).status).toBe(409);
        const winner = (won[0] as PromiseFulfilledResult<{ hostId: string }>).value.hostId;
        expect(await store.getPlacement(id)).toMatchObject({ hostId: winner, epoch: 2, hostEpoch: 1 });
      }
    });

    it('records the target host’s lease epoch, and refuses unknown, full, draining or expired targets', async () => {
      await hosts(10, 'h1', 'drained');
      await store.drainHost('drained');
      await tenants('a', 'b');
      const a = await store.placeTenant('a');
      const b = await store.placeTenant('b');
      expect([a.hostId, b.hostId]).toEqual(['h1', 'h1']);
      await store.acquireLease('h2', address('h2'), 10, TTL);
      await store.acquireLease('h2', address('h2'), 1, TTL); // epoch 2, room for one
      expect(await store.movePlacement('a', 1, 'h2')).toMatchObject({ hostId: 'h2', epoch: 2, hostEpoch: 2 });
      const full = await failure(store.movePlacement('b', 1, 'h2'));
      expect(full.code).toBe('HostUnavailable');
      expect(full.message).toMatch(/full \(1 of capacity 1\)/);
      expect((await failure(store.movePlacement('b', 1, 'drained'))).message).toMatch(/draining/);
      expect((await failure(store.movePlacement('b', 1, 'nowhere'))).code).toBe('HostNotFound');
      expect((await failure(store.movePlacement('nobody', 1, 'h1'))).code).toBe('TenantNotPlaced');
      expect((await failure(store.movePlacement('b', 7, 'h2'))).code).toBe('PlacementConflict');
      // Moving within its own host is allowed (it does not count itself) and still raises the epoch.
      expect(await store.movePlacement('a', 2, 'h2')).toMatchObject({ hostId: 'h2', epoch: 3 });
      clock.now += TTL;
      const expired = await failure(store.movePlacement('b', 1, 'h2'));
      expect(expired.code).toBe('HostUnavailable');
      expect(expired.message).toMatch(/lease expired/);
      expect(await store.getPlacement('b')).toMatchObject({ hostId: 'h1', epoch: 1 });
    });

    it('relocates to the least loaded other host that can take it, by compare-and-swap: of two racing relocations one wins', async () => {
      await hosts(10, 'h1', 'h2', 'h3', 'drained', 'full');
      await store.acquireLease('full', address('full'), 1, TTL);
      await store.drainHost('drained');
      await tenants('a', 'b', 'c', 'd');
      // Ties go by host id: d to "full" (now 1 of 1), then a, b, c to h1, h2, h3.
      for (const id of ['d', 'a', 'b', 'c']) await store.placeTenant(id);
      expect(await store.getPlacement('d')).toMatchObject({ hostId: 'full' });
      // h1's a goes to the least loaded other live, active host with room (h2 and h3 tie: by id), never
      // to itself, the draining host or the full one.
      const a = (await store.getPlacement('a'))!;
      expect(a.hostId).toBe('h1');
      const moved = await store.relocatePlacement('a', a.epoch);
      expect(moved).toMatchObject({ tenantId: 'a', hostId: 'h2', epoch: a.epoch + 1, hostEpoch: 1 });
      // Two reapers relocating b from the same epoch: one move, the other PlacementConflict.
      const b = (await store.getPlacement('b'))!;
      const other = await another();
      const results = await Promise.allSettled([
        store.relocatePlacement('b', b.epoch),
        other.relocatePlacement('b', b.epoch),
      ]);
      expect(results.filter((r) => r.status === 'fulfilled')).toHaveLength(1);
      const lost = results.find((r): r is PromiseRejectedResult => r.status === 'rejected')!;
      expect((lost.reason as RookeryError).code).toBe('PlacementConflict');
      expect((await store.getPlacement('b'))!.epoch).toBe(b.epoch + 1);
      expect((await failure(store.relocatePlacement('nobody', 1))).code).toBe('TenantNotPlaced');
      // Only expired hosts besides c's own: nowhere to go, and c stays where it is.
      clock.now += TTL;
      await store.acquireLease('h3', address('h3'), 10, TTL);
      const c = (await store.getPlacement('c'))!;
      expect(c.hostId).toBe('h3');
      const none = await failure(store.relocatePlacement('c', c.epoch));
      expect(none.code).toBe('NoHostAvailable');
      expect(none.status).toBe(503);
      expect(await store.getPlacement('c')).toMatchObject({ hostId: c.hostId, epoch: c.epoch });
    });

    it('retires only an empty host', async () => {
      await hosts(10, 'h1', 'h2');
      await tenants('a');
      const a = await store.placeTenant('a');
      const from = a.hostId;
      const to = from === 'h1' ? 'h2' : 'h1';
      // Active, even once empty: a placement racing the retirement could land after its check.
      const active = await failure(store.retireHost(to));
      expect(active.code).toBe('HostNotEmpty');
      expect(active.message).toMatch(/is active: drain it first/);
      await store.drainHost(from);
      const refused = await failure(store.retireHost(from));
      expect(refused.code).toBe('HostNotEmpty');
      expect(refused.message).toMatch(/1 tenant/);
      await store.movePlacement('a', a.epoch, to);
      expect(await store.retireHost(from)).toMatchObject({ state: 'retired', placements: 0 });
      expect(await store.getHost(to)).toMatchObject({ state: 'active' });
      // A restart does not bring a retired host back; an operator does.
      await store.acquireLease(from, address(from), 10, TTL);
      expect((await store.getHost(from))?.state).toBe('retired');
      expect((await failure(store.retireHost('nowhere'))).code).toBe('HostNotFound');
    });
  });

  describe('lapsed hosts and the reaper', () => {
    it('lists a dead host’s tenants only after its lease expired plus the grace', async () => {
      await hosts(10, 'dead', 'h2', 'h3');
      await tenants('a', 'b');
      await store.drainHost('h2');
      await store.drainHost('h3');
      await store.placeTenant('a');
      await store.placeTenant('b');
      await store.activateHost('h2');
      await store.activateHost('h3');
      const keepAlive = async () => {
        await store.renewLease('h2', 1, TTL);
        await store.renewLease('h3', 1, TTL);
      };
      clock.now += TTL - 1;
      await keepAlive();
      clock.now += 1; // 'dead' expires now
      expect(await store.tenantsToReplace(5_000)).toMatchObject({
        replace: [],
        withheld: null,
        hosts: { counted: 3, expired: 1 },
        now: clock.now,
      });
      clock.now += 5_000; // expired exactly the grace ago: not yet
      expect((await store.tenantsToReplace(5_000)).replace).toEqual([]);
      clock.now += 1;
      const decision = await store.tenantsToReplace(5_000);
      expect(decision.withheld).toBeNull();
      expect(decision.replace).toEqual([
        { tenantId: 'a', hostId: 'dead', epoch: 1, hostEpoch: 1, reason: 'lease-expired' },
        { tenantId: 'b', hostId: 'dead', epoch: 1, hostEpoch: 1, reason: 'lease-expired' },
      ]);
      // Two reapers act on the same decision: each tenant moves once.
      const other = await another();
      const moves = await Promise.allSettled(
        decision.replace.flatMap((r) => [
          store.movePlacement(r.tenantId, r.epoch, 'h2'),
          other.movePlacement(r.tenantId, r.epoch, 'h3'),
        ]),
      );
      expect(moves.filter((m) => m.status === 'fulfilled')).toHaveLength(2);
      expect((await store.tenantsToReplace(5_000)).replace).toEqual([]);
    });

    it('re-places nothing when more than half of the hosts expired at once, and says why', async () => {
      await hosts(10, 'a', 'b', 'c', 'd');
      await tenants('t');
      await store.placeTenant('t');
      clock.now += TTL - 1;
      await store.renewLease('c', 1, TTL);
      await store.renewLease('d', 1, TTL);
      clock.now += TTL / 2; // a and b expired, c and d live: exactly half is not "most"
      const half = await store.tenantsToReplace(0);
      expect(half.withheld).toBeNull();
      expect(half.hosts).toEqual({ counted: 4, expired: 2 });
      expect(half.replace.map((r) => r.tenantId)).toEqual(['t']);

      await store.movePlacement('t', 1, 'c');
      await store.acquireLease('d', address('d'), 10, TTL); // d's tenants: none; d stays live
      await store.drainHost('d');
      await store.retireHost('d'); // a retired host no longer counts: now 2 of 3 expired
      const most = await store.tenantsToReplace(0);
      expect(most.replace).toEqual([]);
      expect(most.hosts).toEqual({ counted: 3, expired: 2 });
      expect(most.withheld).toMatch(/2 of 3 hosts have expired leases at once/);

      clock.now += TTL; // c lapses too: all of them
      expect((await store.tenantsToReplace(0)).withheld).toMatch(/3 of 3/);
    });

    it('lets a host that re-acquired take back what is still placed on it, and nothing the reaper moved', async () => {
      await hosts(10, 'h1', 'h2');
      await tenants('a', 'b', 'c');
      await store.drainHost('h2');
      for (const id of ['a', 'b', 'c']) await store.placeTenant(id);
      await store.activateHost('h2');
      clock.now += TTL - 1;
      await store.renewLease('h2', 1, TTL);
      clock.now += 1; // h1 lapsed
      await store.movePlacement('c', 1, 'h2'); // the reaper got to c
      const lease = await store.acquireLease('h1', address('h1'), 10, TTL);
      expect(lease.epoch).toBe(2);
      // Still placed on h1 under its old epoch: not h1's own until it reclaims them.
      expect(await store.getPlacement('a')).toMatchObject({ hostId: 'h1', hostEpoch: 1, epoch: 1 });
      expect((await failure(store.reclaimPlacements('h1', 1))).code).toBe('LeaseSuperseded');
      const reclaimed = await store.reclaimPlacements('h1', 2);
      expect(reclaimed.map((p) => [p.tenantId, p.hostEpoch, p.epoch])).toEqual([
        ['a', 2, 2],
        ['b', 2, 2],
      ]);
      expect(await store.reclaimPlacements('h1', 2)).toEqual([]);
      expect(await store.getPlacement('c')).toMatchObject({ hostId: 'h2', epoch: 2 });
      clock.now += TTL;
      expect((await failure(store.reclaimPlacements('h1', 2))).code).toBe('LeaseExpired');
    });

    it('re-places the tenants a re-registered host never reclaimed, once the grace has passed', async () => {
      await hosts(10, 'h1', 'h2');
      await tenants('a');
      await store.drainHost('h2');
      await store.placeTenant('a');
      await store.activateHost('h2');
      await store.acquireLease('h1', address('h1'), 10, TTL); // epoch 2, 'a' not reclaimed
      expect((await store.tenantsToReplace(1_000)).replace).toEqual([]);
      clock.now += 1_001;
      await store.renewLease('h1', 2, TTL);
      await store.renewLease('h2', 1, TTL);
      expect((await store.tenantsToReplace(1_000)).replace).toEqual([
        { tenantId: 'a', hostId: 'h1', epoch: 1, hostEpoch: 1, reason: 'stale-host-epoch' },
      ]);
    });
  });
}

/** Without an injected clock, lease times come from the database's own clock (here the same machine's). */
export function fleetDatabaseClockContract(factory: FleetStoreFactory): void {
  it('reads lease times from the database clock when none is injected', async () => {
    const backing = await factory();
    try {
      const store = backing.store;
      const before = Date.now();
      const lease = await store.acquireLease('h1', address('h1'), 5, 60_000);
      const after = Date.now();
      // The database's clock is this machine's clock: its "now" lies between ours (to the millisecond).
      expect(lease.expiresAt - 60_000).toBeGreaterThanOrEqual(before - 1);
      expect(lease.expiresAt - 60_000).toBeLessThanOrEqual(after + 1);
      expect(await store.renewLease('h1', lease.epoch, 60_000)).toMatchObject({ epoch: 1 });
      expect(await store.getHost('h1')).toMatchObject({ live: true, epoch: 1 });
      await store.createTenant({ id: 'acme', name: 'Acme' });
      expect(await store.placeTenant('acme')).toMatchObject({ hostId: 'h1', epoch: 1 });
      expect((await store.tenantsToReplace(0)).replace).toEqual([]);
      await store.close();
    } finally {
      await backing.cleanup();
    }
  });
}
