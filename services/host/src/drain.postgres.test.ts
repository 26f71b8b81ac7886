// Draining a host, end to end: two real host processes in fleet mode on one real PostgreSQL (the
// control store) and one shared mirror directory, a sync-mode tenant on host 1, and a writer running
// throughout that reaches the tenant the way the gateway does at the host level: wake through the
// host (following a 421 to the owner it names), then the request on the tenant's socket. The operator
// marks host 1 draining in the store; host 1 notices and moves the tenant to host 2.
//
// "Zero failed requests" (docs/scale-out.md, "Drains and rolling upgrades"), as checked here: no
// answer of the host or the tenant is a 5xx (or anything but 200/201/421) while the tenant moves; a
// request refused at the tenant's socket because the tenant already stopped (nothing of it read) is
// sent again through the host's door, which answers 421 naming the new owner; every write that was
// acknowledged (201) before, during or after the move is on host 2 afterwards.
import fs from 'node:fs';
import path from 'node:path';
import { type ControlStore, openPostgresControlStore } from '@rookery/control-store';
import {
  HostTenantNotHereAnswerSchema,
  HostWakeAnswerSchema,
  INTERNAL_TOKEN_HEADER,
} from '@rookery/protocol';
import { makeTempDir, type PostgresServer, startPostgres } from '@rookery/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { FLEET_TOKEN, type FleetHost, startFleetHost, until } from './test-fixtures/fleet-host.js';
import { TenantClient } from './test-fixtures/tenant-client.js';

const TTL = 3_000;

interface Failure {
  where: string;
  status: number;
  code: unknown;
}

/** The writer's record: what was acknowledged, what failed, how often it went round. */
interface WriterLog {
  acked: string[];
  failed: Failure[];
  /** Requests refused at the tenant's socket (connection refused or closed before any answer), sent again. */
  resent: number;
  /** 421 answers followed to the owner they named. */
  redirects: number;
}

/**
 * Writes `writes/<n>` one after another until `stopped()`: wake at the current door, follow a 421 to
 * the host it names, PUT on the tenant's socket. Anything but 200/421 from the host or 201 from the
 * tenant is a failure.
 */
async function writeUntil(
  hosts: Record<string, FleetHost>,
  first: string,
  stopped: () => boolean,
  log: WriterLog,
): Promise<void> {
  let door = hosts[first]!;
  const clients = new Map<string, TenantClient>();
  let n = 0;
  try {
    while (!stopped()) {
      const woken = await door.wake('acme');
      if (woken.status === 421) {
        const owner = HostTenantNotHereAnswerSchema.parse(woken.body).owner;
        const next = owner ? hosts[owner.hostId] : undefined;
        if (!next) throw new Error(`a 421 named an owner no test host is: ${JSON.stringify(woken.body)}`);
        door = next;
        log.redirects++;
        continue;
      }
      if (woken.status !== 200) {
        log.failed.push({ where: `wake at ${door.address}`, status: woken.status, code: woken.body });
        continue;
      }
      const { socketPath } = HostWakeAnswerSchema.parse(woken.body);
      let client = clients.get(socketPath);
      if (!client) {
        client = new TenantClient(socketPath);
        clients.set(socketPath, client);
      }
      const id = `writes/${n}`;
      let reply: Awaited<ReturnType<TenantClient['call']>>;
      try {
        reply = await client.call('PUT', `/databases/shop/docs?id=${id}`, { N: n });
      } catch {
        log.resent++; // the tenant had stopped: nothing answered, so the request goes again through the door
        continue;
      }
      if (reply.status === 201) {
        log.acked.push(id);
        n++;
      } else
        log.failed.push({ where: `tenant at ${socketPath}`, status: reply.status, code: reply.json.code });
    }
  } finally {
    await Promise.all([...clients.values()].map((c) => c.close()));
  }
}

describe('draining a fleet host: two host processes on PostgreSQL, one shared mirror', () => {
  const tmp = makeTempDir('rookery-drain-');
  const mirror = path.join(tmp.dir, 'mirror');
  let postgres: PostgresServer;
  let drop: () => Promise<void>;
  let store: ControlStore;
  let h1: FleetHost;
  let h2: FleetHost;

  beforeAll(async () => {
    postgres = await startPostgres();
    const database = await postgres.freshDatabase('fleet_drain');
    drop = database.drop;
    store = await openPostgresControlStore(database.url);
    await store.createTenant({ id: 'acme', name: 'acme' });
    fs.mkdirSync(mirror);
    const hostEnv = (id: string) => ({
      ROOKERY_DATA: path.join(tmp.dir, id),
      ROOKERY_HOST_ID: id,
      ROOKERY_CONTROL_DATABASE_URL: database.url,
      ROOKERY_LEASE_TTL_MS: String(TTL),
      ROOKERY_MIRROR: mirror,
      ROOKERY_MIRROR_MODE: 'sync',
    });
    [h1, h2] = await Promise.all([startFleetHost(hostEnv('h1')), startFleetHost(hostEnv('h2'))]);
    // Both empty: the least loaded host with the lowest id takes it.
    expect(await store.placeTenant('acme')).toMatchObject({ hostId: 'h1', epoch: 1 });
  }, 120_000);

  afterAll(async () => {
    await Promise.all([h1?.stop(), h2?.stop()]);
    await store?.close();
    await drop?.();
    await postgres?.stop();
    tmp.cleanup();
  });

  it('moves the tenant to host 2 under a higher epoch while a sync-mode writer runs: no failed request, every acknowledged write there, host 1 answers 421', async () => {
    const woken = await h1.wake('acme');
    expect(woken.status).toBe(200);
    const setup = new TenantClient(HostWakeAnswerSchema.parse(woken.body).socketPath);
    expect((await setup.call('PUT', '/admin/databases', { Name: 'Shop' })).status).toBe(201);
    await setup.close();

    const log: WriterLog = { acked: [], failed: [], resent: 0, redirects: 0 };
    let stop = false;
    const writer = writeUntil({ h1, h2 }, 'h1', () => stop, log);
    try {
      await until(
        'writes on host 1',
        async () => log.acked.length,
        (n) => n >= 20 || log.failed.length > 0,
      );
      const before = (await store.getPlacement('acme'))!;
      expect(await store.drainHost('h1')).toMatchObject({ state: 'draining' });
      const moved = await until(
        'the tenant placed on host 2',
        async () => (await store.getPlacement('acme'))!,
        (p) => p.hostId === 'h2',
      );
      expect(moved.epoch).toBeGreaterThan(before.epoch);
      const atMove = log.acked.length;
      await until(
        'writes through host 2',
        async () => log.redirects,
        (redirects) => (redirects >= 1 && log.acked.length >= atMove + 20) || log.failed.length > 0,
      );
    } finally {
      stop = true;
      await writer;
    }
    expect(log.failed).toEqual([]);

    // Host 1 keeps answering 421 for it, naming host 2.
    const refused = await h1.call('POST', '/tenants/acme/wake');
    expect(refused.status).toBe(421);
    expect(HostTenantNotHereAnswerSchema.parse(refused.body).owner?.hostId).toBe('h2');
    expect(await store.listPlacements('h1')).toEqual([]);

    // Every acknowledged write, read through host 2's wake and the tenant's socket.
    const onH2 = new TenantClient(HostWakeAnswerSchema.parse((await h2.wake('acme')).body).socketPath);
    try {
      const missing: string[] = [];
      for (const id of log.acked) {
        if ((await onH2.call('GET', `/databases/shop/docs?id=${id}`)).status !== 200) missing.push(id);
      }
      expect(missing).toEqual([]);
    } finally {
      await onH2.close();
    }

    // Progress as an operator sees it: host 1's metrics.
    const metrics = await fetch(`${h1.address}/metrics`, {
      headers: { [INTERNAL_TOKEN_HEADER]: FLEET_TOKEN },
    });
    const text = await metrics.text();
    expect(text).toMatch(/^rookery_host_tenant_moves_total\{outcome="moved"\} 1$/m);
    expect(text).toMatch(/^rookery_host_drain_tenants_left 0$/m);
  }, 180_000);
});
