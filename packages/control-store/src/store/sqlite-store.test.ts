import fs from 'node:fs';
import path from 'node:path';
import { makeTempDir, spawnTs, waitForExit } from '@rookery/testkit';
import { sql } from 'kysely';
import { describe, expect, it } from 'vitest';
import { type FleetStoreFactory, fleetDatabaseClockContract, fleetStoreContract } from './fleet.contract.js';
import { gatewayStoreContract } from './gateways.contract.js';
import { KyselyControlStore } from './kysely-store.js';
import { openSqliteControlStore } from './sqlite.js';
import { controlStoreContract } from './store.contract.js';

const CHILD = path.resolve(import.meta.dirname, '../test-fixtures/sqlite-child.ts');

describe('SQLite control store: the contract', () => {
  controlStoreContract(async () => {
    const { dir, cleanup } = makeTempDir('rookery-control-');
    const file = path.join(dir, 'control.db');
    return {
      store: await openSqliteControlStore(file),
      openAnother: () => openSqliteControlStore(file),
      cleanup: async () => cleanup(),
    };
  });
});

describe('SQLite control store: the fleet', () => {
  const fleetFactory: FleetStoreFactory = async (fleetClock) => {
    const { dir, cleanup } = makeTempDir('rookery-control-');
    const file = path.join(dir, 'control.db');
    return {
      store: await openSqliteControlStore(file, { fleetClock }),
      openAnother: () => openSqliteControlStore(file, { fleetClock }),
      cleanup: async () => cleanup(),
    };
  };
  fleetStoreContract(fleetFactory);
  fleetDatabaseClockContract(fleetFactory);
  gatewayStoreContract(fleetFactory);
});

describe('SQLite control store: the file', () => {
  it('runs in WAL mode with a busy timeout and foreign keys on', async () => {
    const { dir, cleanup } = makeTempDir('rookery-control-');
    try {
      const store = await openSqliteControlStore(path.join(dir, 'control.db'), { busyTimeoutMs: 1234 });
      if (!(store instanceof KyselyControlStore)) throw new Error('expected the Kysely store');
      const pragma = async (name: string) =>
        Object.values((await sql.raw(`pragma ${name}`).execute(store.db)).rows[0] as object)[0];
      expect(await pragma('journal_mode')).toBe('wal');
      expect(await pragma('busy_timeout')).toBe(1234);
      expect(await pragma('foreign_keys')).toBe(1);
      await store.close();
    } finally {
      cleanup();
    }
  });

  it('keeps everything across close and a fresh open of the same file', async () => {
    const { dir, cleanup } = makeTempDir('rookery-control-');
    try {
      const file = path.join(dir, 'control.db');
      const first = await openSqliteControlStore(file);
      await first.createTenant({ id: 'acme', name: 'Acme', quota: { requestsPerSecond: 7 } });
      await first.createDatabase('acme', 'shop');
      await first.close();
      expect(fs.existsSync(file)).toBe(true);
      const second = await openSqliteControlStore(file);
      expect((await second.getTenant('acme'))?.quota.requestsPerSecond).toBe(7);
      expect((await second.listDatabases('acme')).map((d) => d.name)).toEqual(['shop']);
      await second.close();
    } finally {
      cleanup();
    }
  });

  it('refuses a file that is not a database, and leaves it alone', async () => {
    const { dir, cleanup } = makeTempDir('rookery-control-');
    try {
      const file = path.join(dir, 'control.db');
      fs.writeFileSync(
        file,
        'not a database, just some text that is long enough to have a header'.repeat(20),
      );
      await expect(openSqliteControlStore(file)).rejects.toThrow(/not a database/);
    } finally {
      cleanup();
    }
  });

  it('is shared by several processes at once: they migrate a new file in turn and their writes all count', async () => {
    const { dir, cleanup } = makeTempDir('rookery-control-');
    try {
      const file = path.join(dir, 'control.db');
      const children = Array.from({ length: 4 }, (_, i) => spawnTs(CHILD, [file, String(i)]));
      const outputs = children.map(
        (child) =>
          new Promise<string>((resolve) => {
            let out = '';
            child.stdout?.on('data', (chunk: Buffer) => {
              out += chunk.toString();
            });
            child.stdout?.on('end', () => resolve(out));
          }),
      );
      const exits = await Promise.all(children.map(waitForExit));
      expect(exits).toEqual(children.map(() => ({ code: 0, signal: null })));
      const reports = (await Promise.all(outputs)).map(
        (out) => JSON.parse(out.trim().split('\n').at(-1) ?? '{}') as { wins: number },
      );
      // Every process claimed the same 10 TOTP steps: each step has exactly one winner overall.
      expect(reports.reduce((sum, r) => sum + r.wins, 0)).toBe(10);

      const store = await openSqliteControlStore(file);
      expect((await store.listTenants()).map((t) => t.id)).toEqual(['shared']);
      const [row] = await store.usage('shared', 0, Number.MAX_SAFE_INTEGER);
      expect(row).toMatchObject({ requests: 4 * 50, bytesIn: 4 * 50 * 10 });
      await store.close();
    } finally {
      cleanup();
    }
  });
});
