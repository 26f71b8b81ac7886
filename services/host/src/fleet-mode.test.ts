// Fleet mode end to end: a real host process (ROOKERY_HOST_ID) holding its lease on a real control store
// (the SQLite file under its data directory), real tenant processes, and the test acting as the rest of
// the fleet through the same store. Also the supervisor passing the lease on to a tenant that starts
// from a spare. Waits are polls bounded far above the lease; nothing asserts how long anything took.
import type { ChildProcess } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { type ControlStore, controlPaths, openSqliteControlStore } from '@rookery/control-store';
import {
  HostTenantListSchema,
  HostTenantNotHereAnswerSchema,
  HostWakeAnswerSchema,
  ProblemSchema,
  readLease,
} from '@rookery/protocol';
import { makeTempDir } from '@rookery/testkit';
import pino from 'pino';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadHostConfig } from './config.js';
import { FleetMode } from './fleet-mode.js';
import { TenantSupervisor } from './supervisor.js';
import { sourceTenantCommand } from './tenant-command.js';
import { FLEET_TOKEN, type FleetHost, startFleetHost, until as untilOr } from './test-fixtures/fleet-host.js';
import { TenantClient } from './test-fixtures/tenant-client.js';

const TOKEN = FLEET_TOKEN;
const TTL = 1_500;
/** Far above the lease: only a host or tenant that never gets there runs into it. */
const GIVE_UP_MS = 40 * TTL;
const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));
const until = <T>(what: string, ask: () => Promise<T>, done: (value: T) => boolean) =>
  untilOr(what, ask, done, GIVE_UP_MS);

describe('a fleet host (ROOKERY_HOST_ID) on a real control store', () => {
  const tmp = makeTempDir('rookery-fleet-host-');
  const clients: TenantClient[] = [];
  let store: ControlStore;
  let fleetHost: FleetHost;
  let host: ChildProcess;
  let relayAddress: string;
  const call = (method: 'GET' | 'POST', url: string) => fleetHost.call(method, url);
  const wake = (tenantId: string) => fleetHost.wake(tenantId);

  beforeAll(async () => {
    store = await openSqliteControlStore(controlPaths(tmp.dir).controlDatabase);
    for (const id of ['acme', 'bolt', 'cold']) await store.createTenant({ id, name: id });
    fleetHost = await startFleetHost({
      ROOKERY_DATA: tmp.dir,
      ROOKERY_HOST_ID: 'h1',
      ROOKERY_LEASE_TTL_MS: String(TTL),
    });
    host = fleetHost.process;
    relayAddress = fleetHost.relayAddress;
    // The fleet as the test arranges it: acme on this host, bolt on another (h2, less loaded), cold nowhere.
    expect(await store.placeTenant('acme')).toMatchObject({ hostId: 'h1', epoch: 1, hostEpoch: 1 });
    await store.acquireLease('h2', 'http://10.0.0.2:8081', 10, 3_600_000);
    expect(await store.placeTenant('bolt')).toMatchObject({ hostId: 'h2', epoch: 1 });
  }, 120_000);

  afterAll(async () => {
    await Promise.all(clients.map((c) => c.close()));
    await fleetHost?.stop();
    await store?.close();
    tmp.cleanup();
  });

  it('registered itself with its lease at start', async () => {
    expect(await store.getHost('h1')).toMatchObject({ epoch: 1, live: true, address: relayAddress });
  });

  it('answers 421 TenantNotHere, naming the owner and epoch, for a tenant placed elsewhere or nowhere, before starting it', async () => {
    for (const url of ['/tenants/bolt/wake', '/tenants/bolt/stats']) {
      const reply = await call(url.endsWith('wake') ? 'POST' : 'GET', url);
      expect(reply.status).toBe(421);
      expect(HostTenantNotHereAnswerSchema.parse(reply.body)).toMatchObject({
        code: 'TenantNotHere',
        tenantId: 'bolt',
        owner: { hostId: 'h2', address: 'http://10.0.0.2:8081' },
        epoch: 1,
      });
    }
    const cold = await call('POST', '/tenants/cold/wake');
    expect(cold.status).toBe(421);
    expect(HostTenantNotHereAnswerSchema.parse(cold.body)).toMatchObject({ owner: null, epoch: null });
    // Nothing was started, nothing created on disk.
    const list = HostTenantListSchema.parse((await call('GET', '/tenants')).body);
    expect(list.tenants.map((t) => t.tenantId)).not.toContain('bolt');
    expect(fs.existsSync(path.join(tmp.dir, 'tenants', 'bolt'))).toBe(false);
    expect(fs.existsSync(path.join(tmp.dir, 'tenants', 'cold'))).toBe(false);
  });

  it("starts its own tenant with its placement epoch and the lease; once the lease is not renewed, the tenant's writes answer 503 LeaseExpired and reads still answer", async () => {
    const woken = await wake('acme');
    expect(woken.status).toBe(200);
    const tenant = new TenantClient(HostWakeAnswerSchema.parse(woken.body).socketPath);
    clients.push(tenant);
    const info = HostTenantListSchema.parse((await call('GET', '/tenants')).body).tenants.find(
      (t) => t.tenantId === 'acme',
    )!;
    const environ = fs.readFileSync(`/proc/${info.pid}/environ`, 'utf8').split('\0');
    expect(environ).toContain('ROOKERY_PLACEMENT_EPOCH=1');
    const remaining = Number(environ.find((v) => v.startsWith('ROOKERY_LEASE_REMAINING_MS='))!.split('=')[1]);
    expect(remaining).toBeGreaterThan(0);
    expect(remaining).toBeLessThanOrEqual(TTL);

    expect((await tenant.call('PUT', '/admin/databases', { Name: 'Shop' })).status).toBe(201);
    // Renewals keep it writable well past one TTL.
    for (let i = 0; i < 3; i++) {
      expect((await tenant.call('PUT', `/databases/shop/docs?id=users/${i}`, { Name: 'Ada' })).status).toBe(
        201,
      );
      await sleep(TTL);
    }

    host.kill('SIGSTOP'); // a paused host renews nothing and tells its tenants nothing
    const refused = await until(
      'a write after the lease lapsed',
      () => tenant.call('PUT', '/databases/shop/docs?id=users/late', { Name: 'Late' }),
      (r) => r.status !== 201,
    );
    expect(refused.status).toBe(503);
    expect(refused.json.code).toBe('LeaseExpired');
    const read = await tenant.call('GET', '/databases/shop/docs?id=users/0');
    expect(read.status).toBe(200);

    // Back: it finds its lease lapsed, acquires a new epoch, reclaims acme, and passes the lease on.
    host.kill('SIGCONT');
    await until(
      'a write once the host holds a lease again',
      () => tenant.call('PUT', '/databases/shop/docs?id=users/back', { Name: 'Back' }),
      (r) => r.status === 201,
    );
    expect(await store.getHost('h1')).toMatchObject({ epoch: 2, live: true });
    expect(await store.getPlacement('acme')).toMatchObject({ hostId: 'h1', hostEpoch: 2, epoch: 2 });
    expect((await call('POST', '/tenants/acme/wake')).status).toBe(200);
  });

  it('superseded by another registration of its host id: its tenants are told at once, stopped, and it serves nothing', async () => {
    const tenant = clients[0]!;
    await store.acquireLease('h1', 'http://10.0.0.9:8081', 10, 3_600_000);
    // Told first (the write answers 503) and stopped right after (the socket is gone): which one a
    // write meets is a race, but neither acknowledges it.
    const refused = await until(
      'a write after the lease was superseded',
      () =>
        tenant.call('PUT', '/databases/shop/docs?id=users/gone', { Name: 'Gone' }).then(
          (r) => (r.status === 201 ? 'acknowledged' : String(r.json.code)),
          () => 'stopped',
        ),
      (outcome) => outcome !== 'acknowledged',
    );
    expect(['LeaseExpired', 'stopped']).toContain(refused);
    // It stops its tenants too: another process holds this host id now and may be given them.
    await until(
      'the tenants of a superseded host stopped',
      async () => HostTenantListSchema.parse((await call('GET', '/tenants')).body).tenants,
      (tenants) => tenants.every((t) => t.state === 'stopped'),
    );
    const woken = await call('POST', '/tenants/acme/wake');
    expect(woken.status).toBe(503);
    expect(ProblemSchema.parse(woken.body).code).toBe('LeaseExpired');
  });
});

describe('without ROOKERY_HOST_ID', () => {
  it('there is no fleet mode: the control store is never opened', async () => {
    const tmp = makeTempDir('rookery-one-machine-');
    try {
      const config = loadHostConfig({ ROOKERY_DATA: tmp.dir, ROOKERY_INTERNAL_TOKEN: TOKEN });
      expect(await FleetMode.open(config, pino({ level: 'silent' }))).toBeNull();
      expect(fs.existsSync(path.join(tmp.dir, 'control'))).toBe(false);
    } finally {
      tmp.cleanup();
    }
  });

  it('fleet settings are checked at start, naming the variable', () => {
    const env = { ROOKERY_INTERNAL_TOKEN: TOKEN, ROOKERY_HOST_ID: 'h1' };
    expect(() => loadHostConfig({ ...env, ROOKERY_LEASE_TTL_MS: '50' })).toThrow(/ROOKERY_LEASE_TTL_MS/);
    expect(() => loadHostConfig({ ...env, ROOKERY_HOST_ADVERTISE_URL: 'not a url' })).toThrow(
      /ROOKERY_HOST_ADVERTISE_URL/,
    );
    expect(loadHostConfig(env)).toMatchObject({ hostId: 'h1', leaseTtlMs: 10_000, hostCapacity: 1_000 });
  });
});

describe('the supervisor passes the lease on to a tenant started from a spare', () => {
  it('at the hand-over and with every broadcast', async () => {
    const tmp = makeTempDir('rookery-fleet-spare-');
    let remainingMs = 60_000;
    const supervisor = new TenantSupervisor(
      loadHostConfig(
        {},
        {
          dataDir: tmp.dir,
          internalToken: TOKEN,
          tenantLogLevel: 'fatal',
          idleStopMs: 0,
          startDeadlineMs: 60_000,
        },
      ),
      {
        logger: pino({ level: 'silent' }),
        command: () => sourceTenantCommand(),
        lease: { placementEpoch: () => 3, remainingMs: () => remainingMs },
      },
    );
    const starts: boolean[] = [];
    supervisor.on('started', (_id, info) => starts.push(info.fromSpare));
    let tenant: TenantClient | undefined;
    try {
      await supervisor.sparesReady();
      tenant = new TenantClient((await supervisor.wake('acme')).socketPath);
      expect(starts).toEqual([true]);
      expect((await tenant.call('PUT', '/admin/databases', { Name: 'Shop' })).status).toBe(201);
      remainingMs = 0;
      supervisor.broadcastLease(readLease(() => remainingMs));
      const refused = await until(
        'a write after the lease was lost',
        () => tenant!.call('PUT', '/databases/shop/docs?id=users/1', { Name: 'Ada' }),
        (r) => r.status !== 201,
      );
      expect(refused.json.code).toBe('LeaseExpired');
      remainingMs = 60_000;
      supervisor.broadcastLease(readLease(() => remainingMs));
      await until(
        'a write after the lease was renewed',
        () => tenant!.call('PUT', '/databases/shop/docs?id=users/1', { Name: 'Ada' }),
        (r) => r.status === 201,
      );
    } finally {
      await tenant?.close();
      await supervisor.shutdown(5_000);
      tmp.cleanup();
    }
  }, 120_000);
});
