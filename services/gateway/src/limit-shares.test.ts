// How a gateway divides its tenants' limits with the others: FleetShares over real control stores (two
// SQLite connections on one file standing in for two gateways' connections; the fleet clock moved by the
// test, so a heartbeat expires without a sleep), and the settings that turn it on.
import path from 'node:path';
import { type ControlStore, openSqliteControlStore } from '@rookery/control-store';
import { makeTempDir } from '@rookery/testkit';
import pino from 'pino';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { gatewayFleetOf, loadGatewayConfig } from './config.js';
import { FleetShares, WHOLE_LIMITS } from './limit-shares.js';

const TTL = 5_000;
const log = pino({ level: 'silent' });

let tmp: { dir: string; cleanup(): void };
let now: number;
const stores: ControlStore[] = [];
const shares: FleetShares[] = [];

async function gateway(id: string): Promise<FleetShares> {
  const store = await openSqliteControlStore(path.join(tmp.dir, 'control.db'), { fleetClock: () => now });
  stores.push(store);
  // An hour between timed heartbeats: the test sends them.
  const gatewayShares = new FleetShares({ store, gatewayId: id, heartbeatMs: 3_600_000, ttlMs: TTL, log });
  shares.push(gatewayShares);
  await gatewayShares.start();
  return gatewayShares;
}

function send(to: FleetShares, tenantId: string, requests: number): void {
  for (let i = 0; i < requests; i++) to.arrived(tenantId);
}

beforeEach(() => {
  tmp = makeTempDir('rookery-shares-');
  now = 1_700_000_000_000;
});
afterEach(async () => {
  for (const s of shares.splice(0)) await s.stop();
  for (const store of stores.splice(0)) await store.close();
  tmp.cleanup();
});

describe('limit shares', () => {
  it('are the whole limits for a gateway alone, with or without a store', async () => {
    expect([WHOLE_LIMITS.rateShare('acme', 50), WHOLE_LIMITS.liveShare(7)]).toEqual([50, 7]);
    const alone = await gateway('g1');
    send(alone, 'acme', 10);
    await alone.heartbeat();
    expect([alone.rateShare('acme', 50), alone.rateShare('other', 50), alone.liveShare(7)]).toEqual([
      50, 50, 7,
    ]);
  });

  it('split the rate by where the requests arrive, once a tenant was in two heartbeats in a row', async () => {
    const [g1, g2] = [await gateway('g1'), await gateway('g2')];
    await g1.heartbeat();
    // Two gateways: live connections limit / 2 (at least 1); a tenant not seen yet, quota / 2.
    expect([g1.liveShare(7), g2.liveShare(7), g1.liveShare(1)]).toEqual([3, 3, 1]);
    expect([g1.rateShare('acme', 40), g2.rateShare('acme', 40)]).toEqual([20, 20]);

    // Traffic starts at both, three to one: still half each until a second heartbeat with it…
    send(g1, 'acme', 30);
    send(g2, 'acme', 10);
    await g1.heartbeat();
    await g2.heartbeat();
    expect([g1.rateShare('acme', 40), g2.rateShare('acme', 40)]).toEqual([20, 20]);
    // …then three quarters and one quarter.
    send(g1, 'acme', 30);
    send(g2, 'acme', 10);
    await g1.heartbeat();
    await g2.heartbeat();
    expect([g1.rateShare('acme', 40), g2.rateShare('acme', 40)]).toEqual([30, 10]);

    // A quiet interval at the second: the first has the whole rate once the second reported it.
    send(g1, 'acme', 40);
    await g2.heartbeat();
    await g1.heartbeat();
    expect([g1.rateShare('acme', 40), g2.rateShare('acme', 40)]).toEqual([40, 20]);
  });

  it('take a gateway that left or went silent out of the count: at once, or when its heartbeat expires', async () => {
    const [g1, g2, g3] = [await gateway('g1'), await gateway('g2'), await gateway('g3')];
    await g1.heartbeat();
    expect(g1.liveShare(9)).toBe(3);
    await g3.stop();
    await g1.heartbeat();
    expect(g1.liveShare(9)).toBe(4);
    // g2 stops sending heartbeats (its process hangs): counted until its TTL, then not.
    now += TTL;
    await g1.heartbeat();
    expect(g1.liveShare(9)).toBe(4);
    now += 1;
    await g1.heartbeat();
    expect(g1.liveShare(9)).toBe(9);
    // It comes back with its next heartbeat.
    await g2.heartbeat();
    await g1.heartbeat();
    expect(g1.liveShare(9)).toBe(4);
  });

  it('keep the last shares when the store cannot be reached', async () => {
    const g1 = await gateway('g1');
    await gateway('g2');
    await g1.heartbeat();
    expect([g1.liveShare(8), g1.rateShare('acme', 40)]).toEqual([4, 20]);
    send(g1, 'acme', 30);
    await stores[0]!.close(); // every call of g1's store fails from now on
    await g1.heartbeat(); // logged, not thrown
    expect([g1.liveShare(8), g1.rateShare('acme', 40)]).toEqual([4, 20]);
  });
});

describe('limit share settings', () => {
  const TOKEN = { ROOKERY_INTERNAL_TOKEN: 'a-token-of-16-chars-at-least' };
  const PG = { ROOKERY_CONTROL_DATABASE_URL: 'postgres://db.internal:5432/rookery' };

  it('share on PostgreSQL, not on the embedded file, unless said otherwise', () => {
    expect(gatewayFleetOf(loadGatewayConfig(TOKEN))).toBeNull();
    expect(gatewayFleetOf(loadGatewayConfig({ ...TOKEN, ...PG }))).toEqual({
      heartbeatMs: 1_000,
      ttlMs: 5_000,
    });
    expect(
      gatewayFleetOf(loadGatewayConfig({ ...TOKEN, ...PG, ROOKERY_GATEWAY_SHARE_LIMITS: 'off' })),
    ).toBeNull();
    expect(
      gatewayFleetOf(
        loadGatewayConfig({
          ...TOKEN,
          ROOKERY_GATEWAY_SHARE_LIMITS: 'on',
          ROOKERY_GATEWAY_HEARTBEAT_MS: '500',
          ROOKERY_GATEWAY_HEARTBEAT_TTL_MS: '2000',
        }),
      ),
    ).toEqual({ heartbeatMs: 500, ttlMs: 2_000 });
  });

  it('refuse a TTL under two heartbeats and values out of range, naming the variable', () => {
    expect(() =>
      loadGatewayConfig({
        ...TOKEN,
        ROOKERY_GATEWAY_HEARTBEAT_MS: '1000',
        ROOKERY_GATEWAY_HEARTBEAT_TTL_MS: '1500',
      }),
    ).toThrow(/ROOKERY_GATEWAY_HEARTBEAT_TTL_MS.*twice/s);
    expect(() => loadGatewayConfig({ ...TOKEN, ROOKERY_GATEWAY_HEARTBEAT_MS: '5' })).toThrow(
      /ROOKERY_GATEWAY_HEARTBEAT_MS/,
    );
    expect(() => loadGatewayConfig({ ...TOKEN, ROOKERY_GATEWAY_SHARE_LIMITS: 'yes' })).toThrow(
      /ROOKERY_GATEWAY_SHARE_LIMITS/,
    );
  });
});
