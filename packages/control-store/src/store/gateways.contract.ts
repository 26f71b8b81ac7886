// The contract of what several gateways share through the store (gateways.ts, usage.ts): heartbeats with
// the demand each gateway saw, and usage flushes that count once however often they are retried. Run
// against SQLite and a real PostgreSQL by sqlite-store.test.ts and postgres-store.test.ts; time is an
// injected clock only the test moves.
import { beforeEach, describe, expect, it } from 'vitest';
import { failure } from '../test-fixtures/failure.js';
import { type FleetStoreFactory, storesPerTest } from './contract-stores.js';
import type { ControlStore } from './control-store.js';
import type { UsageRow } from './types.js';

const T0 = 1_700_000_000_000;
const TTL = 5_000;
const MINUTE = 60_000;
/** A minute's start, as usage rows need. */
const M0 = Math.floor(T0 / MINUTE) * MINUTE;

function usageRow(tenantId: string, minute: number, n: number): UsageRow {
  return { tenantId, minute, requests: n, bytesIn: 10 * n, bytesOut: 100 * n, workUnits: 3 * n };
}

export function gatewayStoreContract(factory: FleetStoreFactory): void {
  const stores = storesPerTest(factory, T0);
  const { clock, another } = stores;
  let store: ControlStore;
  beforeEach(() => {
    store = stores.store;
  });

  describe('gateway heartbeats', () => {
    it('counts the live gateways and sums the demand they report for the tenants the caller reported', async () => {
      const g2 = await another();
      expect(await store.heartbeatGateway('g1', TTL, [])).toEqual({ liveGateways: 1, demand: [] });
      await g2.heartbeatGateway('g2', TTL, [
        { tenantId: 'acme', requests: 30 },
        { tenantId: 'globex', requests: 5 },
      ]);
      const view = await store.heartbeatGateway('g1', TTL, [
        { tenantId: 'acme', requests: 10 },
        { tenantId: 'acme', requests: 2 }, // repeats are summed
        { tenantId: 'initech', requests: 0 }, // nothing to report
      ]);
      expect(view).toEqual({ liveGateways: 2, demand: [{ tenantId: 'acme', requests: 42, gateways: 2 }] });
      // A heartbeat replaces the gateway's previous demand: it is per interval, not a running sum.
      const next = await store.heartbeatGateway('g1', TTL, [{ tenantId: 'acme', requests: 1 }]);
      expect(next.demand).toEqual([{ tenantId: 'acme', requests: 31, gateways: 2 }]);
    });

    it('forgets a gateway once its heartbeat expired on the store clock, and one that left at once', async () => {
      const g2 = await another();
      await g2.heartbeatGateway('g2', TTL, [{ tenantId: 'acme', requests: 30 }]);
      clock.now += TTL; // expires_at itself still counts
      expect(
        (await store.heartbeatGateway('g1', TTL, [{ tenantId: 'acme', requests: 1 }])).liveGateways,
      ).toBe(2);
      clock.now += 1;
      expect(await store.heartbeatGateway('g1', TTL, [{ tenantId: 'acme', requests: 1 }])).toEqual({
        liveGateways: 1,
        demand: [{ tenantId: 'acme', requests: 1, gateways: 1 }],
      });
      // It comes back with its next heartbeat.
      await g2.heartbeatGateway('g2', TTL, [{ tenantId: 'acme', requests: 3 }]);
      expect((await store.heartbeatGateway('g1', TTL, [{ tenantId: 'acme', requests: 1 }])).demand).toEqual([
        { tenantId: 'acme', requests: 4, gateways: 2 },
      ]);
      await g2.leaveGateway('g2');
      await g2.leaveGateway('g2'); // nothing left to remove
      expect(await store.heartbeatGateway('g1', TTL, [{ tenantId: 'acme', requests: 1 }])).toEqual({
        liveGateways: 1,
        demand: [{ tenantId: 'acme', requests: 1, gateways: 1 }],
      });
    });

    it('refuses malformed or oversized input with InvalidRequest and keeps what it had', async () => {
      await store.heartbeatGateway('g1', TTL, [{ tenantId: 'acme', requests: 7 }]);
      const bad: [string, number, unknown][] = [
        ['', TTL, []],
        ['g 1', TTL, []],
        ['x'.repeat(201), TTL, []],
        ['g1', 0, []],
        ['g1', 2 ** 40, []],
        ['g1', TTL, [{ tenantId: 'acme', requests: -1 }]],
        ['g1', TTL, [{ tenantId: 'acme', requests: 1.5 }]],
        ['g1', TTL, [{ tenantId: '', requests: 1 }]],
        ['g1', TTL, [{ tenantId: 'acme', requests: 1, extra: true }]],
        ['g1', TTL, Array.from({ length: 50_001 }, (_, i) => ({ tenantId: `t${i}`, requests: 1 }))],
      ];
      for (const [id, ttl, demand] of bad) {
        expect((await failure(store.heartbeatGateway(id, ttl, demand as never))).code).toBe('InvalidRequest');
      }
      const g2 = await another();
      expect((await g2.heartbeatGateway('g2', TTL, [{ tenantId: 'acme', requests: 1 }])).demand).toEqual([
        { tenantId: 'acme', requests: 8, gateways: 2 },
      ]);
    });

    it('takes a heartbeat with thousands of tenants whole', async () => {
      const demand = Array.from({ length: 2_500 }, (_, i) => ({ tenantId: `t${i}`, requests: i + 1 }));
      const view = await store.heartbeatGateway('g1', TTL, demand);
      expect(view.demand).toHaveLength(2_500);
      expect(view.demand.find((d) => d.tenantId === 't2499')).toEqual({
        tenantId: 't2499',
        requests: 2_500,
        gateways: 1,
      });
    });
  });

  describe('usage flushes with an id', () => {
    it('adds a flush once, however often it is sent again, and flushes with other ids as usual', async () => {
      const rows = [usageRow('acme', M0, 3), usageRow('acme', M0 + MINUTE, 1)];
      expect(await store.addUsage(rows, 'g1:1')).toBe(true);
      // The gateway never heard the answer: it sends the same flush again, through another connection.
      expect(await (await another()).addUsage(rows, 'g1:1')).toBe(false);
      expect(await store.addUsage(rows, 'g1:1')).toBe(false);
      expect(await store.addUsage([usageRow('acme', M0, 1)], 'g2:1')).toBe(true);
      expect(await store.addUsage([usageRow('acme', M0, 1)])).toBe(true); // no id: adds every time
      expect(await store.usage('acme', M0, M0 + MINUTE)).toEqual([
        usageRow('acme', M0, 5),
        usageRow('acme', M0 + MINUTE, 1),
      ]);
    });

    it('adds one of the same flush sent at once from two stores', async () => {
      const g2 = await another();
      const rows = [usageRow('acme', M0, 2)];
      const added = await Promise.all([store.addUsage(rows, 'g1:7'), g2.addUsage(rows, 'g1:7')]);
      expect(added.sort()).toEqual([false, true]);
      expect(await store.usage('acme', M0, M0)).toEqual([usageRow('acme', M0, 2)]);
    });

    it('forgets ids after a day, and refuses a malformed id without adding anything', async () => {
      await store.addUsage([usageRow('acme', M0, 1)], 'g1:1');
      clock.now += 24 * 60 * MINUTE + 1;
      await store.addUsage([usageRow('acme', M0, 1)], 'g1:2'); // prunes g1:1
      expect(await store.addUsage([usageRow('acme', M0, 1)], 'g1:1')).toBe(true);
      for (const id of ['', 'g1 1', 'x'.repeat(201), "g1'; drop table usage_minutes; --"]) {
        expect((await failure(store.addUsage([usageRow('acme', M0, 100)], id))).code).toBe('InvalidRequest');
      }
      expect(await store.usage('acme', M0, M0)).toEqual([usageRow('acme', M0, 3)]);
    });
  });
}
