// The chaos suite's setting (src/chaos/README.md), on top of the fleet fixture (fleet-stack.ts), not beside
// it: a real PostgreSQL from the test kit as the control store, three host processes in fleet mode with a
// short lease and sync-mode mirroring into one shared mirror directory, the fleet's in-process gateway and a
// second gateway forked as a process of its own; and sync-mode writers that go through both gateways over
// mutual TLS until told to stop, keeping every id the fleet acknowledged (201) and every answer that was not.
import { until } from '@rookery/host/testing';
import { HostTenantListSchema } from '@rookery/protocol';
import { type PostgresServer, startPostgres, waitForExit } from '@rookery/testkit';
import { expect } from 'vitest';
import { type FleetStack, type FleetStackOptions, startFleetStack } from './fleet-stack.js';
import { type Client, type Connection, gatewayClients } from './gateway-clients.js';
import type { GatewayProcess } from './gateway-process.js';

/**
 * Short, so that a failover takes seconds; long enough for a loaded machine to renew (every TTL/3): at 2 s,
 * with another suite beside it, a renewal could miss its TTL, every lease lapsed and was reclaimed, and a
 * drain or a move under test waited behind that.
 */
export const CHAOS_TTL_MS = 5_000;
const CHAOS_GRACE_MS = 500;
const CHAOS_REAPER_INTERVAL_MS = 250;
/** Every wait is for an event, bounded far above what it takes on a quiet machine (or a loaded one). */
export const GIVE_UP_MS = 180_000;

export interface ChaosFleet {
  postgres: PostgresServer;
  fleet: FleetStack;
  /** The second gateway, a process of its own (main.ts in fleet routing) on the same store and CA. */
  second: GatewayProcess;
  /** A tenant with database `shop` and its admin's connections through the first and the second gateway. */
  tenant(id: string): Promise<TenantAdmin>;
  /** The index in `fleet.hosts` of the host the store places the tenant on now, and its placement. */
  owner(tenantId: string): Promise<{ index: number; hostId: string; epoch: number }>;
  /** SIGKILL to a host and every tenant process it runs, as when its machine dies. */
  killMachine(index: number): Promise<void>;
  close(): Promise<void>;
}

export interface TenantAdmin {
  id: string;
  admin: Client;
  /** The admin's connections: [through the in-process gateway, through the forked one]. */
  via: [Connection, Connection];
}

export async function startChaosFleet(
  name: string,
  options: Pick<FleetStackOptions, 'placementCacheMs'> = {},
): Promise<ChaosFleet> {
  const postgres = await startPostgres();
  let fleet: FleetStack | undefined;
  try {
    const database = await postgres.freshDatabase(name);
    fleet = await startFleetStack({
      hosts: 3,
      controlDatabaseUrl: database.url,
      leaseTtlMs: CHAOS_TTL_MS,
      ...options,
      hostEnv: {
        ROOKERY_MIRROR_MODE: 'sync',
        ROOKERY_REAPER_GRACE_MS: String(CHAOS_GRACE_MS),
        ROOKERY_REAPER_INTERVAL_MS: String(CHAOS_REAPER_INTERVAL_MS),
        // A tenant restored on its new owner may take more than the default 2 s to start on a loaded
        // machine, and a wake past the deadline answers 503 TenantStarting: these tests are about routing,
        // failover and moves, so a wake waits for the start (the gateways' relay timeout is 60 s too).
        ROOKERY_START_DEADLINE_MS: '60000',
      },
    });
    const started = fleet;
    const second = await started.forkGateway({
      // As the in-process one's (fleet-stack.ts): a tenant woken on a loaded machine may take seconds.
      ROOKERY_GATEWAY_RELAY_TIMEOUT_MS: '60000',
      // A gateway process takes at most a minute (its configuration's bound); the in-process one any.
      ...(options.placementCacheMs !== undefined && {
        ROOKERY_GATEWAY_PLACEMENT_CACHE_MS: String(Math.min(options.placementCacheMs, 60_000)),
      }),
    });
    const secondClients = gatewayClients(started.store, started.ca, () => second.url);
    return {
      postgres,
      fleet: started,
      second,
      async tenant(id) {
        const admin = await started.tenantAdmin({ id, name: id }, `${id}-admin`);
        await started.running(id);
        expect((await admin.call('PUT', '/admin/databases', { Name: 'shop' })).status).toBe(201);
        return { id, admin, via: [admin, secondClients.connect(admin)] };
      },
      async owner(tenantId) {
        const placement = await started.store.getPlacement(tenantId);
        const index = started.hosts.findIndex((h) => h.relayAddress === placement?.address);
        if (!placement || index < 0) throw new Error(`${tenantId} is not placed on a host of this fleet`);
        return { index, hostId: placement.hostId, epoch: placement.epoch };
      },
      async killMachine(index) {
        const host = started.hosts[index]!;
        const { tenants } = HostTenantListSchema.parse((await host.call('GET', '/tenants')).body);
        host.process.kill('SIGKILL');
        for (const { pid } of tenants) if (pid !== null) process.kill(pid, 'SIGKILL');
        await waitForExit(host.process);
      },
      async close() {
        await secondClients.close();
        await started.close();
        await database.drop();
        await postgres.stop();
      },
    };
  } catch (error) {
    await fleet?.close();
    await postgres.stop();
    throw error;
  }
}

/** An answer that was not 201: where it went, what came back (a network error has status 0). */
export interface Refusal {
  gateway: 0 | 1;
  status: number;
  code: string;
}

export interface Writer {
  /** Ids acknowledged with 201, in order. */
  readonly acknowledged: string[];
  readonly refused: Refusal[];
  /** Stops after the write in flight and resolves. */
  stop(): Promise<void>;
}

/** What a writer gives up on: an answer that has not come after this long counts as refused (status 0). */
export interface WriterOptions {
  answerWithinMs?: number;
}

/**
 * Writes `<prefix>/<n>` to the tenant's `shop`, one after another, alternating the two gateways, until
 * stopped. Every attempt takes a new id: a write that was refused may still have committed somewhere, and
 * only what was acknowledged is owed. With `answerWithinMs`, a client that stops waiting (as a real one
 * does at its timeout) and goes on with the next write; the abandoned one's answer is ignored.
 */
export function startWriter(tenant: TenantAdmin, prefix: string, options: WriterOptions = {}): Writer {
  const acknowledged: string[] = [];
  const refused: Refusal[] = [];
  let stopped = false;
  const loop = (async () => {
    for (let n = 0; !stopped; n++) {
      const gateway = (n % 2) as 0 | 1;
      const id = `${prefix}/${n}`;
      try {
        const call = tenant.via[gateway].call('PUT', `/databases/shop/docs?id=${id}`, {
          N: n,
          '@metadata': { '@collection': 'Writes' },
        });
        const reply = await (options.answerWithinMs === undefined
          ? call
          : within(call, options.answerWithinMs));
        if (reply.status === 201) acknowledged.push(id);
        else refused.push({ gateway, status: reply.status, code: String(reply.json.code) });
      } catch (error) {
        refused.push({ gateway, status: 0, code: (error as Error).message });
      }
    }
  })();
  return {
    acknowledged,
    refused,
    async stop() {
      stopped = true;
      await loop;
    },
  };
}

/** The call's answer, or an error once `ms` passed without one (the call goes on, its outcome ignored). */
function within<T>(call: Promise<T>, ms: number): Promise<T> {
  call.catch(() => undefined);
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`no answer within ${ms} ms`)), ms);
  });
  return Promise.race([call, late]).finally(() => clearTimeout(timer));
}

/** Resolves once the writer has `count` more acknowledged writes than now (also outside a test, in a hook). */
export async function acknowledgedMore(writer: Writer, count: number): Promise<void> {
  const target = writer.acknowledged.length + count;
  await until(
    `${target} acknowledged writes (refused so far: ${writer.refused.length})`,
    async () => writer.acknowledged.length,
    (n) => n >= target,
    GIVE_UP_MS,
  );
}

/** The ids among `ids` that `via` cannot read back (GET many at once: the tenant takes up to 1024 ids). */
async function unreadable(via: Connection, ids: readonly string[]): Promise<string[]> {
  const absent: string[] = [];
  for (let i = 0; i < ids.length; i += 200) {
    const chunk = ids.slice(i, i + 200);
    const reply = await via.call(
      'GET',
      `/databases/shop/docs?${chunk.map((id) => `id=${encodeURIComponent(id)}`).join('&')}`,
    );
    expect(reply.status).toBe(200);
    const results = reply.json.Results as ({ N: number } | null)[];
    chunk.forEach((id, k) => {
      if (results[k]?.N !== Number(id.slice(id.lastIndexOf('/') + 1))) absent.push(id);
    });
  }
  return absent;
}

/**
 * Every chaos test's closing check, after its writers stopped: logs what their clients saw (`label:
 * acknowledged …; refused …`, for the README's figures), then expects every write each writer had
 * acknowledged to read back through both gateways.
 */
export async function expectAcknowledgedKept(
  label: string,
  runs: readonly { tenant: TenantAdmin; writer: Writer }[],
): Promise<void> {
  console.log(
    `${label}: acknowledged ${runs.map(({ writer }) => writer.acknowledged.length).join(' / ')}; refused ${JSON.stringify(runs.map(({ writer }) => tally(writer.refused)))}`,
  );
  for (const { tenant, writer } of runs) {
    expect({ tenant: tenant.id, unreadable: await unreadable(tenant.via[0], writer.acknowledged) }).toEqual({
      tenant: tenant.id,
      unreadable: [],
    });
    expect({ tenant: tenant.id, unreadable: await unreadable(tenant.via[1], writer.acknowledged) }).toEqual({
      tenant: tenant.id,
      unreadable: [],
    });
  }
}

/** How many refusals of each kind, e.g. { '503 TenantUnavailable': 12 }: what clients saw, for the report. */
function tally(refused: readonly Refusal[]): Record<string, number> {
  const counts: Record<string, number> = {};
  for (const r of refused) {
    const key = `${r.status} ${r.code}`;
    counts[key] = (counts[key] ?? 0) + 1;
  }
  return counts;
}
