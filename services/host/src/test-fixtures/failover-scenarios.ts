// The failover scenario both control-store dialects run (failover.test.ts, failover.postgres.test.ts).
import type { FleetStore } from '@rookery/control-store';
import { expect } from 'vitest';
import { type FailoverFleet, missing, writeUntilRefused } from './failover.js';
import { until } from './fleet-host.js';

/**
 * A host dies with its tenant (SIGKILL to both, as when the machine goes) while a sync-mode writer runs:
 * the other host's reaper re-places the tenant once the lease expired plus the grace, the other host wakes
 * it under a higher epoch from the mirror, and every write that was acknowledged is there.
 */
export async function killedHostFailsOver(options: {
  store: Pick<FleetStore, 'placeTenant' | 'getPlacement'>;
  fleet: FailoverFleet;
  tenantId: string;
  hosts: [string, string];
  giveUpMs: number;
}): Promise<void> {
  const { store, fleet, tenantId, giveUpMs } = options;
  const h1 = await fleet.start(options.hosts[0]);
  expect(await store.placeTenant(tenantId)).toMatchObject({ hostId: options.hosts[0], epoch: 1 });
  const h2 = await fleet.start(options.hosts[1]);
  const tenant = await fleet.open(h1, tenantId);
  expect((await tenant.call('PUT', '/admin/databases', { Name: 'Shop' })).status).toBe(201);
  const first = await writeUntilRefused(tenant, 'before', 20);
  expect(first).toHaveLength(20);

  // The writer goes on while the machine dies; what it got 201 for must survive.
  const pid = (await fleet.tenantOn(h1, tenantId))!.pid!;
  const writer = writeUntilRefused(tenant, 'during');
  await until(
    'a write during the kill',
    async () => (await missing(tenant, ['during/0'])).length,
    (n) => n === 0,
  );
  h1.process.kill('SIGKILL');
  process.kill(pid, 'SIGKILL');
  const acknowledged = [...first, ...(await writer)];

  const moved = await until(
    `${tenantId} re-placed by ${options.hosts[1]}’s reaper`,
    () => store.getPlacement(tenantId),
    (p) => p?.hostId === options.hosts[1],
    giveUpMs,
  );
  expect(moved!.epoch).toBe(2);
  expect(await fleet.metrics(h2)).toMatch(/rookery_host_reaper_moves_total\{reason="lease-expired"\} 1/);
  const successor = await fleet.open(h2, tenantId);
  expect(await missing(successor, acknowledged)).toEqual([]);
  expect(await writeUntilRefused(successor, 'after', 3)).toHaveLength(3);
}
