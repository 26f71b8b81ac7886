// GET /control/hosts: the fleet's hosts as the control store records them, for operators only.
import type { Principal } from '@rookery/control-store';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  type ControlApiHarness,
  startControlApi,
  withOperatorAndAcme,
} from '../test-fixtures/control-api.js';

let h: ControlApiHarness;
let operator: Principal;
let admin: Principal;
let reader: Principal;

beforeEach(async () => {
  h = await startControlApi();
  ({ operator, admin } = await withOperatorAndAcme(h));
  reader = await h.store.createPrincipal({
    tenantId: 'acme',
    kind: 'program',
    name: 'acme-reader',
    role: { kind: 'database', access: { shop: 'read-only' } },
  });
});
afterEach(async () => h.close());

describe('GET /control/hosts', () => {
  it('answers no hosts on one machine (no host ever took a lease)', async () => {
    const reply = await h.call(operator, 'GET', '/control/hosts');
    expect([reply.status, reply.json]).toEqual([200, { hosts: [] }]);
  });

  it('lists each host with its address, state, lease and tenant count', async () => {
    const a = await h.store.acquireLease('host-a', 'https://10.0.0.1:7443', 50, 60_000);
    await h.store.acquireLease('host-b', 'https://10.0.0.2:7443', 20, 60_000);
    await h.store.placeTenant('acme');
    const acmeHost = (await h.store.getPlacement('acme'))?.hostId;
    const other = acmeHost === 'host-a' ? 'host-b' : 'host-a';
    await h.store.drainHost(other);

    const reply = await h.call(operator, 'GET', '/control/hosts');
    expect(reply.status).toBe(200);
    const hosts = reply.json.hosts as Record<string, unknown>[];
    expect(hosts.map((host) => [host.hostId, host.state, host.placements, host.live])).toEqual(
      ['host-a', 'host-b'].map((id) => [
        id,
        id === other ? 'draining' : 'active',
        id === acmeHost ? 1 : 0,
        true,
      ]),
    );
    expect(hosts[0]).toMatchObject({
      address: 'https://10.0.0.1:7443',
      capacity: 50,
      epoch: a.epoch,
      expiresAt: a.expiresAt,
    });
  });

  it('answers 403 to tenant admins and per-database principals', async () => {
    await h.store.acquireLease('host-a', 'https://10.0.0.1:7443', 50, 60_000);
    for (const who of [admin, reader]) {
      const reply = await h.call(who, 'GET', '/control/hosts');
      expect([reply.status, reply.json.code, JSON.stringify(reply.json).includes('10.0.0.1')]).toEqual([
        403,
        'Forbidden',
        false,
      ]);
    }
  });
});
