import { type PostgresServer, startPostgres } from '@rookery/testkit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FleetStoreFactory, fleetDatabaseClockContract, fleetStoreContract } from './fleet.contract.js';
import { gatewayStoreContract } from './gateways.contract.js';
import { MIGRATIONS } from './migrations.js';
import { openPostgresControlStore } from './postgres.js';
import { controlStoreContract } from './store.contract.js';

let server: PostgresServer;

beforeAll(async () => {
  server = await startPostgres();
});

afterAll(async () => {
  await server?.stop();
});

describe('PostgreSQL control store: the contract', () => {
  controlStoreContract(async () => {
    const { url, drop } = await server.freshDatabase('control');
    return {
      store: await openPostgresControlStore(url),
      openAnother: () => openPostgresControlStore(url),
      cleanup: drop,
    };
  });
});

describe('PostgreSQL control store: the fleet', () => {
  const fleetFactory: FleetStoreFactory = async (fleetClock) => {
    const { url, drop } = await server.freshDatabase('control');
    return {
      store: await openPostgresControlStore(url, { fleetClock }),
      openAnother: () => openPostgresControlStore(url, { fleetClock }),
      cleanup: drop,
    };
  };
  fleetStoreContract(fleetFactory);
  fleetDatabaseClockContract(fleetFactory);
  gatewayStoreContract(fleetFactory);
});

describe('PostgreSQL control store: the server', () => {
  it('migrates a new database from several stores at once, exactly once', async () => {
    const { url, drop } = await server.freshDatabase('control');
    try {
      const stores = await Promise.all(Array.from({ length: 5 }, () => openPostgresControlStore(url)));
      await stores[0]!.createTenant({ id: 'acme', name: 'Acme' });
      for (const store of stores) expect((await store.listTenants()).map((t) => t.id)).toEqual(['acme']);
      const direct = new pg.Client({ connectionString: url });
      await direct.connect();
      const applied = await direct.query('select name from control_migrations order by name');
      await direct.end();
      expect(applied.rows.map((r) => r.name)).toEqual(Object.keys(MIGRATIONS).sort());
      await Promise.all(stores.map((s) => s.close()));
    } finally {
      await drop();
    }
  });

  it('says which server it could not reach, without the password', async () => {
    const url = server.connectionStringFor('no_such_database');
    await expect(openPostgresControlStore(url)).rejects.toThrow(
      /Cannot reach the PostgreSQL control store at 127\.0\.0\.1:\d+\/no_such_database: .*does not exist/,
    );
    const secret = url.replace('postgres@', 'postgres:hunter2@');
    await expect(openPostgresControlStore(secret)).rejects.not.toThrow(/hunter2/);
  });
});
