import { type PostgresServer, startPostgres } from '@rookery/testkit';
import pg from 'pg';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { openPostgresJobQueue } from './postgres/open.js';
import { BOSS_SCHEMA_VERSION } from './postgres/schema.js';
import { jobQueueContract } from './queue.contract.js';
import { testLogger } from './test-fixtures/stores.js';

let server: PostgresServer;
let admin: pg.Client;
let databases = 0;

beforeAll(async () => {
  server = await startPostgres();
  admin = new pg.Client({ connectionString: server.connectionString });
  await admin.connect();
});

afterAll(async () => {
  await admin?.end();
  await server?.stop();
});

/** A database nobody has used: every test starts from an empty schema. */
async function freshDatabase(): Promise<{ url: string; drop: () => Promise<void> }> {
  databases += 1;
  const name = `jobs_${process.pid}_${databases}`;
  await admin.query(`create database ${name}`);
  return {
    url: server.connectionStringFor(name),
    drop: async () => {
      await admin.query(`drop database ${name} with (force)`);
    },
  };
}

describe('PostgreSQL job queue: the contract', () => {
  jobQueueContract(async () => {
    const { url, drop } = await freshDatabase();
    return { store: { kind: 'postgres', connectionString: url }, cleanup: drop };
  });
});

describe('PostgreSQL job queue: pg-boss underneath', () => {
  it('keeps jobs in pg-boss, one short-policy queue per type, at the schema version our SQL reads', async () => {
    const { url, drop } = await freshDatabase();
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
