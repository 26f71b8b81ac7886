import { type PostgresServer, startPostgres } from '@rookery/testkit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openPostgresJobQueue } from './postgres/open.js';
import { BOSS_SCHEMA_VERSION } from './postgres/schema.js';
import { jobQueueContract } from './queue.contract.js';
import { testLogger } from './test-fixtures/stores.js';

let server: PostgresServer;

beforeAll(async () => {
  server = await startPostgres();
});

afterAll(async () => {
  await server?.stop();
});

describe('PostgreSQL job queue: the contract', () => {
  jobQueueContract(async () => {
    const { url, drop } = await server.freshDatabase('jobs');
    return { store: { kind: 'postgres', connectionString: url }, cleanup: drop };
  });
});

describe('PostgreSQL job queue: pg-boss underneath', () => {
  it('keeps jobs in pg-boss, one short-policy queue per type, at the schema version our SQL reads', async () => {
    const { url, drop } = await server.freshDatabase('jobs');
    try {
      const types = { backup: { payload: z.object({ db: z.string() }), leaseMs: 3_600_000 } };
      const opened = await Promise.all(
        [1, 2].map(() => openPostgresJobQueue({ connectionString: url, types, logger: testLogger })),
      );
      const id = await opened[0]!.enqueue({
        type: 'backup',
        tenantId: 'acme',
        payload: { db: 'orders' },
        maxAttempts: 4,
        backoffMs: 1500,
      });
      const direct = new pg.Client({ connectionString: url });
      await direct.connect();
      const version = await direct.query('select version from pgboss.version');
      expect(version.rows[0].version).toBe(BOSS_SCHEMA_VERSION);
      const queue = await direct.query("select policy from pgboss.queue where name = 'backup'");
      expect(queue.rows).toEqual([{ policy: 'short' }]);
      const job = await direct.query(
        `select data, retry_limit, retry_delay, retry_backoff, extract(epoch from expire_in)::int as expire
         from pgboss.job where id = $1`,
        [id],
      );
      expect(job.rows[0]).toEqual({
        data: { tenantId: 'acme', payload: { db: 'orders' } },
        retry_limit: 3,
        retry_delay: 2,
        retry_backoff: true,
        expire: 3600,
      });
      await direct.end();
      await Promise.all(opened.map((queue) => queue.close()));
    } finally {
      await drop();
    }
  });

  it('says when it cannot reach the server, without the password', async () => {
    const url = server.connectionStringFor('no_such_database').replace('postgres@', 'postgres:hunter2@');
    const opening = openPostgresJobQueue({ connectionString: url, types: {}, logger: testLogger });
    await expect(opening).rejects.toThrow(/Cannot reach the PostgreSQL job queue: .*no_such_database/);
    await expect(opening).rejects.not.toThrow(/hunter2/);
  });
});
