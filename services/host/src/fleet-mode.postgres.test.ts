// Fleet mode on PostgreSQL (ROOKERY_CONTROL_DATABASE_URL): a real host process registers at its
// advertised address in a real PostgreSQL from the test kit, refuses a tenant placed elsewhere with
// 421, starts its own with its placement epoch — and never hands the store's URL (its credentials) to
// a tenant process.
import fs from 'node:fs';
import path from 'node:path';
import { type ControlStore, openPostgresControlStore } from '@rookery/control-store';
import { HostTenantListSchema, HostTenantNotHereAnswerSchema } from '@rookery/protocol';
import { makeTempDir, type PostgresServer, startPostgres } from '@rookery/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FleetHost, startFleetHost } from './test-fixtures/fleet-host.js';

describe('a fleet host on PostgreSQL', () => {
  const tmp = makeTempDir('rookery-fleet-pg-');
  let postgres: PostgresServer;
  let drop: () => Promise<void>;
  let store: ControlStore;
  let host: FleetHost;

  beforeAll(async () => {
    postgres = await startPostgres();
    const database = await postgres.freshDatabase('fleet_host');
    drop = database.drop;
    store = await openPostgresControlStore(database.url);
    for (const id of ['acme', 'bolt']) await store.createTenant({ id, name: id });
    host = await startFleetHost({
      ROOKERY_DATA: tmp.dir,
      ROOKERY_HOST_ID: 'pg1',
      ROOKERY_CONTROL_DATABASE_URL: database.url,
      ROOKERY_HOST_ADVERTISE_URL: 'https://pg1.hosts.internal:8081',
      ROOKERY_LEASE_TTL_MS: '5000',
    });
  }, 120_000);

  afterAll(async () => {
    await host?.stop();
    await store?.close();
    await drop?.();
    await postgres?.stop();
    tmp.cleanup();
  });

  it('registers at its advertised address, refuses a tenant placed elsewhere, and starts its own', async () => {
    expect(await store.getHost('pg1')).toMatchObject({
      epoch: 1,
      live: true,
      address: 'https://pg1.hosts.internal:8081',
    });
    expect(await store.placeTenant('acme')).toMatchObject({ hostId: 'pg1' });
    await store.acquireLease('pg2', 'https://pg2.hosts.internal:8081', 10, 3_600_000);
    expect(await store.placeTenant('bolt')).toMatchObject({ hostId: 'pg2' });

    const refused = await host.call('POST', '/tenants/bolt/wake');
    expect(refused.status).toBe(421);
    expect(HostTenantNotHereAnswerSchema.parse(refused.body).owner).toEqual({
      hostId: 'pg2',
      address: 'https://pg2.hosts.internal:8081',
    });

    expect((await host.wake('acme')).status).toBe(200);
    const pid = HostTenantListSchema.parse((await host.call('GET', '/tenants')).body).tenants.find(
      (t) => t.tenantId === 'acme',
    )!.pid;
    const environ = fs.readFileSync(`/proc/${pid}/environ`, 'utf8').split('\0');
    expect(environ).toContain('ROOKERY_PLACEMENT_EPOCH=1');
    // The host's own settings stay in the host: the store's URL carries its credentials.
    expect(environ.filter((v) => /^ROOKERY_(CONTROL_DATABASE_URL|HOST_ID|LEASE_TTL_MS)=/.test(v))).toEqual(
      [],
    );
    // PostgreSQL is the store: no SQLite control file was made under the data directory.
    expect(fs.existsSync(path.join(tmp.dir, 'control'))).toBe(false);
  });
});
