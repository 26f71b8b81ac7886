// Chaos 4 and 6 (README.md beside this file): planned moves under sync-mode writers running through both
// gateways. The in-process gateway keeps a placement for an hour, so after a move it can only have found
// the new owner through the old owner's 421 (the gateway process keeps one for its maximum, a minute).
import { until } from '@rookery/host/testing';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  acknowledgedMore,
  type ChaosFleet,
  expectAcknowledgedKept,
  GIVE_UP_MS,
  startChaosFleet,
  startWriter,
  type TenantAdmin,
} from '../test-fixtures/chaos.js';

describe('chaos: tenants moved under sync-mode writers', () => {
  let chaos: ChaosFleet;
  const tenants: Record<string, TenantAdmin> = {};

  beforeAll(async () => {
    chaos = await startChaosFleet('chaos_moves', { placementCacheMs: 3_600_000 });
    // One tenant per host: the store places each new one on the least loaded host.
    for (const id of ['acme', 'bolt', 'core']) tenants[id] = await chaos.tenant(id);
  }, 300_000);

  afterAll(async () => {
    await chaos?.close();
  }, 120_000);

  it('4. a gateway holding a stale placement gets 421 from the old owner and retries at the new one: the client sees no error', async () => {
    const bolt = tenants.bolt!;
    const before = await chaos.owner('bolt');
    const writer = startWriter(bolt, 'stale');
    try {
      // Both gateways read bolt's placement now, and keep it (an hour, a minute).
      await acknowledgedMore(writer, 10);
      await chaos.fleet.store.drainHost(before.hostId);
      const moved = await until(
        'bolt moved off the drained host',
        () => chaos.owner('bolt'),
        (p) => p.hostId !== before.hostId,
        GIVE_UP_MS,
      );
      expect(moved.epoch).toBeGreaterThan(before.epoch);
      await acknowledgedMore(writer, 20);
    } finally {
      await writer.stop();
      await chaos.fleet.store.activateHost(before.hostId);
    }
    // A read through each gateway, which still believes in the old placement's epoch or learnt the new one.
    await expectAcknowledgedKept('chaos 4', [{ tenant: bolt, writer }]);
    expect(writer.refused).toEqual([]);
  }, 300_000);

  it('6. a host drained under load: its tenants move one by one with zero failed requests for sync-mode databases', async () => {
    // Two more tenants on the host test 4 emptied (the least loaded), and writers on every tenant.
    const emptied = (await chaos.fleet.store.listHosts()).find((h) => h.placements === 0);
    expect(emptied).toBeDefined();
    for (const id of ['dove', 'echo']) tenants[id] = await chaos.tenant(id);
    expect((await chaos.owner('dove')).hostId).toBe(emptied!.hostId);
    expect((await chaos.owner('echo')).hostId).toBe(emptied!.hostId);
    const writers = Object.values(tenants).map((t) => ({ tenant: t, writer: startWriter(t, 'drain') }));
    try {
      for (const { writer } of writers) await acknowledgedMore(writer, 5);
      await chaos.fleet.store.drainHost(emptied!.hostId);
      await until(
        'every tenant off the drained host',
        () => chaos.fleet.store.listPlacements(emptied!.hostId),
        (placements) => placements.length === 0,
        GIVE_UP_MS,
      );
      for (const { writer } of writers) await acknowledgedMore(writer, 10);
    } finally {
      await Promise.all(writers.map(({ writer }) => writer.stop()));
    }
    await expectAcknowledgedKept('chaos 6', writers);
    for (const { tenant, writer } of writers)
      expect({ tenant: tenant.id, refused: writer.refused }).toEqual({ tenant: tenant.id, refused: [] });
  }, 300_000);
});
