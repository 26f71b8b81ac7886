// The control store's PostgreSQL down (the test kit's server shut down, then started again): the gateway
// answers what it cannot decide without the store with 503 ControlStoreUnavailable and Retry-After — a
// client retries that — never 500, and serves again once the store is back.
import { type PostgresServer, startPostgres } from '@rookery/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Client, type Stack, startStack } from './test-fixtures/stack.js';

describe('the control store unreachable', () => {
  let pg: PostgresServer;
  let drop: () => Promise<void>;
  let stack: Stack;
  let admin: Client;

  beforeAll(async () => {
    pg = await startPostgres();
    const database = await pg.freshDatabase('store_outage');
    drop = database.drop;
    stack = await startStack({ controlDatabaseUrl: database.url });
    admin = await stack.tenantAdmin({ id: 'acme', name: 'Acme' }, 'acme-admin');
    await stack.running('acme');
  }, 180_000);

  afterAll(async () => {
    await stack?.close();
    await drop?.();
    await pg?.stop();
  });

  it('answers 503 ControlStoreUnavailable with Retry-After while PostgreSQL is down, and 200 once it is back', async () => {
    expect((await admin.call('GET', '/databases')).status).toBe(200);
    await pg.shutDown();
    try {
      const refused = await admin.call('GET', '/databases');
      expect([refused.status, refused.json.code]).toEqual([503, 'ControlStoreUnavailable']);
      expect(Number(refused.headers['retry-after'])).toBeGreaterThan(0);
      expect(String(refused.json.detail)).toContain('retry');
    } finally {
      await pg.start();
    }
    await expect
      .poll(async () => (await admin.call('GET', '/databases')).status, { timeout: 60_000 })
      .toBe(200);
  });
});
