// Failover with real processes (docs/scale-out.md, "Failover"): two fleet hosts on one control store (the
// embedded SQLite file, linked into both data directories) and one shared mirror directory, sync-mode
// tenants written to through their sockets. A host is killed (SIGKILL, with its tenant: the machine died),
// or paused past its lease and resumed (SIGSTOP/SIGCONT); the other host's reaper re-places its tenants,
// and every acknowledged write is served by the new owner. Then the tenant goes back to the first host,
// which still holds its files from before (A → B → A): it serves the mirror's state, not those.
// Every wait is for an event (a placement, a state), bounded far above the lease; no duration is asserted.
import fs from 'node:fs';
import path from 'node:path';
import { type ControlStore, openSqliteControlStore } from '@rookery/control-store';
import { restoreDatabase } from '@rookery/engine';
import { HostTenantNotHereAnswerSchema } from '@rookery/protocol';
import { makeTempDir } from '@rookery/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  FAILOVER_TTL_MS,
  type FailoverFleet,
  failoverFleet,
  missing,
  writeUntilRefused,
} from './test-fixtures/failover.js';
import { killedHostFailsOver } from './test-fixtures/failover-scenarios.js';
import { until as untilOr } from './test-fixtures/fleet-host.js';

const GIVE_UP_MS = 40 * FAILOVER_TTL_MS;
const until = <T>(what: string, ask: () => Promise<T>, done: (value: T) => boolean) =>
  untilOr(what, ask, done, GIVE_UP_MS);

describe('failover between two fleet hosts (SQLite control store)', () => {
  const tmp = makeTempDir('rookery-failover-');
  const controlDir = path.join(tmp.dir, 'control');
  let store: ControlStore;
  let fleet: FailoverFleet;

  beforeAll(async () => {
    fs.mkdirSync(controlDir);
    store = await openSqliteControlStore(path.join(controlDir, 'control.db'));
    for (const id of ['acme', 'bolt']) await store.createTenant({ id, name: id });
    fleet = failoverFleet(tmp.dir, { sharedControlDir: controlDir });
  }, 60_000);

  afterAll(async () => {
    await fleet?.close();
    await store?.close();
    tmp.cleanup();
  });

  it('a host killed with its tenant: the reaper re-places the tenant, the other host serves every acknowledged write under a higher epoch', async () => {
    await killedHostFailsOver({ store, fleet, tenantId: 'acme', hosts: ['k1', 'k2'], giveUpMs: GIVE_UP_MS });
  }, 240_000);

  it('a host paused past its lease: its tenant moves; resumed, it stops its copy, refuses with 421, and the mirror restores the new epoch; moved back, it serves the mirror’s state over its stale files', async () => {
    const h1 = await fleet.start('p1');
    expect(await store.placeTenant('bolt')).toMatchObject({ hostId: 'p1', epoch: 1 });
    const h2 = await fleet.start('p2');
    const old = await fleet.open(h1, 'bolt');
    expect((await old.call('PUT', '/admin/databases', { Name: 'Shop' })).status).toBe(201);
    const before = await writeUntilRefused(old, 'before', 10);
    expect(before).toHaveLength(10);

    h1.process.kill('SIGSTOP'); // renews nothing, reaps nothing; its tenant runs on, to its own deadline
    const moved = await until(
      'bolt re-placed by p2’s reaper',
      () => store.getPlacement('bolt'),
      (p) => p?.hostId === 'p2',
    );
    expect(moved!.epoch).toBeGreaterThan(1);
    // The paused host's tenant acknowledges nothing more: its deadline passed before the move.
    const refused = await old.call('PUT', '/databases/shop/docs?id=stale/1', { N: 1 });
    expect(refused.status).toBe(503);
    expect(refused.json.code).toBe('LeaseExpired');

    const now = await fleet.open(h2, 'bolt');
    expect(await missing(now, before)).toEqual([]);
    const during = await writeUntilRefused(now, 'during', 10);
    expect(during).toHaveLength(10);

    h1.process.kill('SIGCONT');
    // A new lease; bolt is not among the tenants it reclaims, so its copy there is stopped.
    await until(
      'p1 stopped its copy of bolt',
      () => fleet.tenantOn(h1, 'bolt'),
      (t) => t?.state === 'stopped',
    );
    expect(await fleet.metrics(h1)).toMatch(/rookery_host_tenant_disowned_stops_total 1/);
    const notHere = await h1.call('POST', '/tenants/bolt/wake');
    expect(notHere.status).toBe(421);
    expect(HostTenantNotHereAnswerSchema.parse(notHere.body)).toMatchObject({
      owner: { hostId: 'p2' },
      epoch: moved!.epoch,
    });
    expect(
      (await old.call('PUT', '/databases/shop/docs?id=stale/2', { N: 2 }).catch(() => null))?.status,
    ).not.toBe(201);
    // The mirror's restore takes the new owner's lineage, with everything acknowledged on either host.
    const restoredAt = path.join(tmp.dir, 'restore-check');
    const restored = restoreDatabase(path.join(fleet.mirror, 'bolt', 'shop'), restoredAt);
    expect(restored.generation.startsWith(`e${String(moved!.epoch).padStart(10, '0')}-`)).toBe(true);

    // A planned move back to p1 (stopped on p2 first, as a move does), whose files are from epoch 1.
    expect((await h2.call('POST', '/tenants/bolt/stop')).status).toBe(200);
    const back = await store.movePlacement('bolt', moved!.epoch, 'p1');
    expect(back).toMatchObject({ hostId: 'p1', epoch: moved!.epoch + 1 });
    const again = await fleet.open(h1, 'bolt');
    expect(await missing(again, [...before, ...during])).toEqual([]);
    expect(await writeUntilRefused(again, 'after', 3)).toHaveLength(3);
  }, 240_000);
});
