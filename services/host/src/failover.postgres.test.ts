// Failover on PostgreSQL (ROOKERY_CONTROL_DATABASE_URL, a real server from the test kit): a host killed
// with its tenant while a sync-mode writer runs; the other host's reaper re-places the tenant, which it
// then serves from the shared mirror with every acknowledged write (the scenario: failover-scenarios.ts).
import { type ControlStore, openPostgresControlStore } from '@rookery/control-store';
import { makeTempDir, type PostgresServer, startPostgres } from '@rookery/testkit';
import { afterAll, beforeAll, describe, it } from 'vitest';
import { FAILOVER_TTL_MS, type FailoverFleet, failoverFleet } from './test-fixtures/failover.js';
import { killedHostFailsOver } from './test-fixtures/failover-scenarios.js';

describe('failover between two fleet hosts (PostgreSQL control store)', () => {
  const tmp = makeTempDir('rookery-failover-pg-');
  let postgres: PostgresServer;
  let drop: () => Promise<void>;
  let store: ControlStore;
  let fleet: FailoverFleet;

  beforeAll(async () => {
    postgres = await startPostgres();
    const database = await postgres.freshDatabase('failover');
    drop = database.drop;
    store = await openPostgresControlStore(database.url);
    await store.createTenant({ id: 'acme', name: 'acme' });
    fleet = failoverFleet(tmp.dir, { controlEnv: { ROOKERY_CONTROL_DATABASE_URL: database.url } });
  }, 120_000);

  afterAll(async () => {
    await fleet?.close();
    await store?.close();
    await drop?.();
    await postgres?.stop();
    tmp.cleanup();
  });

  it('a host killed with its tenant: re-placed by the reaper, served elsewhere with every acknowledged write', async () => {
    await killedHostFailsOver({
      store,
      fleet,
      tenantId: 'acme',
      hosts: ['pg1', 'pg2'],
      giveUpMs: 40 * FAILOVER_TTL_MS,
    });
  }, 240_000);
});
