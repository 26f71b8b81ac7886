// The supervisor with real tenant processes: concurrent lazy starts with one slow tenant, idle stop and
// wake, a crash mid-traffic, parallel shutdown, stats without starting, the crash-loop cap, spares, and
// purging a deleted tenant through the internal API.
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { INTERNAL_TOKEN_HEADER, isRookeryError, type RookeryError } from '@rookery/protocol';
import { makeTempDir } from '@rookery/testkit';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { loadHostConfig } from './config.js';
import { buildHostServer } from './server.js';
import { type SupervisorConfig, TenantSupervisor, type WakeResult } from './supervisor.js';
import { commandFor, sourceTenantCommand, type TenantCommand } from './tenant-command.js';
import { childrenOf, commandLineOf } from './test-fixtures/proc.js';
import { TenantClient } from './test-fixtures/tenant-client.js';

const FIXTURE = path.join(path.dirname(fileURLToPath(import.meta.url)), 'test-fixtures', 'tenant-fixture.ts');
const REAL_MAIN = sourceTenantCommand().entry;

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

type CommandFactory = (dataDir: string) => (tenantId: string | null) => TenantCommand;

function setup(overrides: Partial<SupervisorConfig>, command?: CommandFactory) {
  const tmp = makeTempDir('rookery-host-');
  const config = loadHostConfig(
    {},
    {
      dataDir: tmp.dir,
      internalToken: 'test-token-0123456789',
      tenantLogLevel: 'error',
      spareProcesses: 0,
      idleStopMs: 0,
      startDeadlineMs: 1_000,
      ...overrides,
    },
  );
  const supervisor = new TenantSupervisor(config, {
    logger: pino({ level: 'silent' }),
    command: command ? command(tmp.dir) : () => sourceTenantCommand(),
  });
  const clients: TenantClient[] = [];
  cleanups.push(async () => {
    await supervisor.shutdown(5_000);
    await Promise.all(clients.map((c) => c.close()));
    tmp.cleanup();
  });
  const client = (socketPath: string) => {
    const c = new TenantClient(socketPath);
    clients.push(c);
    return c;
  };
  return { supervisor, dir: tmp.dir, client };
}

/** The real tenant through the fixture, with the fixture's hooks set through `env`. */
function fixture(env: Record<string, string>): TenantCommand {
  return { ...commandFor(FIXTURE), env: { ROOKERY_TEST_TENANT_MAIN: REAL_MAIN, ...env } };
}

/** Wakes like the gateway does: a `TenantStarting` answer means "ask again". */
async function wakeUntilReady(supervisor: TenantSupervisor, tenantId: string): Promise<WakeResult> {
  for (;;) {
    try {
      return await supervisor.wake(tenantId);
    } catch (error) {
      if (!(isRookeryError(error) && error.code === 'TenantStarting')) throw error;
    }
  }
}

function nextEvent<K extends 'started' | 'exited' | 'idle'>(
  supervisor: TenantSupervisor,
  event: K,
  tenantId: string,
): Promise<void> {
  return new Promise((resolve) => {
    const listener = (id: string) => {
      if (id !== tenantId) return;
      supervisor.off(event, listener as never);
      resolve();
    };
    supervisor.on(event, listener as never);
  });
}

const user = (name: string) => ({ Name: name, '@metadata': { '@collection': 'Users' } });

describe('lazy start', () => {
  it('starts 20 tenants woken concurrently once each; a slow one delays nobody, answers TenantStarting, then starts', async () => {
    const slow = 'tenant-slow';
    const ids = Array.from({ length: 19 }, (_, i) => `tenant-${i}`);
    const gateIn = (dir: string) => path.join(dir, 'slow-may-start');
    const startsLog = (dir: string, id: string) => path.join(dir, `starts-${id}.log`);
    // Every tenant runs through the fixture (which logs each process start); only the slow one waits for a gate.
    const { supervisor, dir } = setup(
      {},
      (dir) => (id) =>
        fixture({
          ROOKERY_TEST_STARTS_LOG: startsLog(dir, id ?? 'spare'),
          ...(id === slow ? { ROOKERY_TEST_START_GATE: gateIn(dir) } : {}),
        }),
    );
    const gate = gateIn(dir);

    const normal = Promise.all(
      ids.map((id) => Promise.all([1, 2, 3].map(() => wakeUntilReady(supervisor, id)))),
    );
    const slowWakes = Promise.allSettled([1, 2, 3].map(() => supervisor.wake(slow)));

    const woken = await normal;
    // All 19 are served while the slow one is still held at its gate.
    expect(supervisor.info(slow).state).toBe('starting');
    for (const [i, results] of woken.entries()) {
      expect(new Set(results.map((r) => r.socketPath)).size).toBe(1);
      expect(results[0]!.socketPath).toContain(ids[i]!);
      expect(supervisor.info(ids[i]!).state).toBe('running');
    }
    const slowResults = await slowWakes;
    for (const result of slowResults) {
      expect(result.status).toBe('rejected');
      const error = (result as PromiseRejectedResult).reason as RookeryError;
      expect(error.code).toBe('TenantStarting');
      expect(error.status).toBe(503);
      expect(error.details.retryAfterSeconds).toBeGreaterThan(0);
    }
    expect(supervisor.info(slow).state).toBe('starting');

    fs.writeFileSync(gate, '');
    const late = await wakeUntilReady(supervisor, slow);
    expect(late.socketPath).toContain(slow);
    expect(supervisor.info(slow).state).toBe('running');

    for (const id of [...ids, slow]) {
      expect(fs.readFileSync(startsLog(dir, id), 'utf8').trim().split('\n')).toHaveLength(1);
      expect(supervisor.info(id).starts).toBe(1);
    }
    const again = await supervisor.wake(ids[0]!);
    expect(again.startedNow).toBe(false);
  }, 240_000);
});

describe('idle stop', () => {
  it('stops a tenant nobody uses and wakes it again with its data', async () => {
    const { supervisor, client } = setup({ idleStopMs: 1_000 });
    const first = await wakeUntilReady(supervisor, 'acme');
    expect(first.startedNow).toBe(true);
    const tenant = client(first.socketPath);
    expect((await tenant.call('PUT', '/admin/databases', { Name: 'shop' })).status).toBe(201);
    const put = await tenant.call('PUT', '/databases/shop/docs?id=users/1', user('Ada'));
    expect(put.status).toBe(201);
    // The work the tenant reports for the gateway to meter.
    expect(Number(put.headers['x-rookery-work-units'])).toBeGreaterThanOrEqual(2);

    const idle = nextEvent(supervisor, 'idle', 'acme');
    const exited = nextEvent(supervisor, 'exited', 'acme');
    await idle;
    await exited;
    expect(supervisor.info('acme').state).toBe('stopped');
    expect(fs.existsSync(first.socketPath)).toBe(false);
    expect(supervisor.metrics.idleStops.get()).toBeTruthy();

    const second = await wakeUntilReady(supervisor, 'acme');
    expect(second.startedNow).toBe(true);
    const got = await client(second.socketPath).call('GET', '/databases/shop/docs?id=users/1');
    expect(got.status).toBe(200);
    expect((got.json.Results as Array<{ Name: string }>)[0]!.Name).toBe('Ada');
    expect(supervisor.info('acme').starts).toBe(2);
  }, 120_000);
});

describe('crash', () => {
  it('restarts a tenant killed mid-traffic; other tenants are unaffected and acknowledged writes survive', async () => {
    const { supervisor, client } = setup({ restartBackoffMs: 50 });
    const [a, b] = await Promise.all([
      wakeUntilReady(supervisor, 'alpha'),
      wakeUntilReady(supervisor, 'beta'),
    ]);
    for (const woken of [a, b]) {
      expect((await client(woken.socketPath).call('PUT', '/admin/databases', { Name: 'db' })).status).toBe(
        201,
      );
    }
    const betaPid = supervisor.info('beta').pid;
    const alphaPid = supervisor.info('alpha').pid!;

    let running = true;
    const acknowledged = { alpha: [] as string[], beta: [] as string[] };
    const failures = { alpha: 0, beta: 0 };
    const writer = async (tenantId: 'alpha' | 'beta') => {
      let n = 0;
      while (running) {
        const id = `items/${++n}`;
        try {
          // Like the gateway: ask the host for the socket (it restarts the tenant if needed), then send.
          const { socketPath } = await wakeUntilReady(supervisor, tenantId);
          const reply = await client(socketPath).call('PUT', `/databases/db/docs?id=${id}`, { N: n });
          if (reply.status === 201) acknowledged[tenantId].push(id);
          else failures[tenantId]++;
        } catch {
          failures[tenantId]++;
        }
      }
    };
    const writers = [writer('alpha'), writer('beta')];
    while (acknowledged.alpha.length < 20) await new Promise((resolve) => setTimeout(resolve, 10));

    const restarted = nextEvent(supervisor, 'started', 'alpha');
    process.kill(alphaPid, 'SIGKILL');
    await restarted;
    const afterRestart = acknowledged.alpha.length;
    while (acknowledged.alpha.length < afterRestart + 20)
      await new Promise((resolve) => setTimeout(resolve, 10));
    running = false;
    await Promise.all(writers);

    expect(supervisor.info('alpha').pid).not.toBe(alphaPid);
    expect(supervisor.info('alpha').crashes).toBe(1);
    expect(supervisor.info('alpha').state).toBe('running');
    expect(supervisor.info('beta').pid).toBe(betaPid);
    expect(failures.beta).toBe(0);
    expect(supervisor.metrics.crashes.get()).toBeTruthy();

    const alpha = client(supervisor.info('alpha').socketPath);
    for (const id of acknowledged.alpha) {
      expect((await alpha.call('GET', `/databases/db/docs?id=${id}`)).status, id).toBe(200);
    }
  }, 120_000);

  it('stops restarting a tenant that keeps crashing, and says so to wakes', async () => {
    const { supervisor } = setup(
      { restartBackoffMs: 10, maxRestartsPerMinute: 2 },
      () => () => fixture({ ROOKERY_TEST_EXIT_AFTER_READY_MS: '300' }),
    );
    let exits = 0;
    const thirdExit = new Promise<void>((resolve) =>
      supervisor.on('exited', () => {
        if (++exits === 3) resolve();
      }),
    );
    await wakeUntilReady(supervisor, 'crashy');
    await thirdExit;
    const info = supervisor.info('crashy');
    expect(info.state).toBe('stopped');
    expect(info.starts).toBe(3);
    expect(info.suspendedUntil).not.toBeNull();
    const refused = await supervisor.wake('crashy').catch((error: RookeryError) => error);
    expect((refused as RookeryError).code).toBe('TenantUnavailable');
    expect((refused as RookeryError).details.retryAfterSeconds).toBeGreaterThan(0);
  }, 120_000);
});

describe('shutdown', () => {
  it('stops every tenant in parallel, each committing its writes', async () => {
    const ids = ['s-1', 's-2', 's-3', 's-4'];
    // Each tenant holds its SIGTERM until all four got theirs: a shutdown that waited for one tenant
    // before signalling the next would hit its deadline and kill them.
    const { supervisor, dir, client } = setup(
      {},
      (dir) => () =>
        fixture({
          ROOKERY_TEST_TERM_BARRIER: path.join(dir, 'terminated'),
          ROOKERY_TEST_TERM_BARRIER_COUNT: String(ids.length),
        }),
    );
    const barrier = path.join(dir, 'terminated');
    fs.mkdirSync(barrier);
    const woken = await Promise.all(ids.map((id) => wakeUntilReady(supervisor, id)));
    for (const w of woken) {
      const tenant = client(w.socketPath);
      expect((await tenant.call('PUT', '/admin/databases', { Name: 'db' })).status).toBe(201);
      expect((await tenant.call('PUT', '/databases/db/docs?id=k/1', { V: 1 })).status).toBe(201);
    }
    const result = await supervisor.shutdown(30_000);
    expect(result).toEqual({ stopped: 4, killed: 0 });
    expect(fs.readdirSync(barrier)).toHaveLength(4);
    for (const id of ids) expect(supervisor.info(id).state).toBe('stopped');
    const stats = await supervisor.stats('s-1');
    expect(stats.databases).toMatchObject([{ name: 'db', documents: 1 }]);
    await expect(supervisor.wake('s-1')).rejects.toMatchObject({ code: 'TenantUnavailable' });
  }, 120_000);

  it('kills what is left at the deadline', async () => {
    // The barrier waits for a second tenant that never comes: this one ignores SIGTERM until killed.
    const { supervisor, dir } = setup(
      {},
      (dir) => () =>
        fixture({
          ROOKERY_TEST_TERM_BARRIER: path.join(dir, 'terminated'),
          ROOKERY_TEST_TERM_BARRIER_COUNT: '2',
        }),
    );
    fs.mkdirSync(path.join(dir, 'terminated'));
    await wakeUntilReady(supervisor, 'stubborn');
    expect(await supervisor.shutdown(500)).toEqual({ stopped: 0, killed: 1 });
    expect(supervisor.info('stubborn').state).toBe('stopped');
  }, 120_000);
});

describe('stats', () => {
  it('reads the stats of a stopped tenant without starting it', async () => {
    const { supervisor, client } = setup({});
    const woken = await wakeUntilReady(supervisor, 'quiet');
    const tenant = client(woken.socketPath);
    await tenant.call('PUT', '/admin/databases', { Name: 'Orders' });
    await tenant.call('PUT', '/databases/orders/docs?id=users/1', user('A'));
    await tenant.call('PUT', '/databases/orders/docs?id=users/2', user('B'));
    await tenant.call('DELETE', '/databases/orders/docs?id=users/2');
    const fromTenant = (await tenant.call('GET', '/databases/orders/stats')).json;
    expect(await supervisor.stop('quiet')).toBe(true);

    const stats = await supervisor.stats('quiet');
    expect(stats.state).toBe('stopped');
    expect(stats.databases).toEqual([
      {
        name: 'Orders',
        databaseId: fromTenant.DatabaseId,
        documents: 1,
        tombstones: 1,
        collections: { Users: 1 },
        lastEtag: fromTenant.LastDocEtag,
        bytesOnDisk: expect.any(Number),
      },
    ]);
    expect(stats.bytesOnDisk).toBeGreaterThan(0);
    expect(supervisor.info('quiet')).toMatchObject({ state: 'stopped', starts: 1, pid: null });

    const never = await supervisor.stats('never-started');
    expect(never).toEqual({ tenantId: 'never-started', state: 'stopped', databases: [], bytesOnDisk: 0 });
    expect(supervisor.info('never-started').starts).toBe(0);
    expect(supervisor.list().map((t) => t.tenantId)).toContain('quiet');
  }, 120_000);

  it('refuses tenant ids that are not ids', async () => {
    const { supervisor } = setup({});
    for (const bad of ['', 'Upper', '-dash', 'a/b', '../x', 'x'.repeat(64)]) {
      await expect(supervisor.wake(bad)).rejects.toMatchObject({ code: 'InvalidTenantId' });
      await expect(supervisor.stats(bad)).rejects.toMatchObject({ code: 'InvalidTenantId' });
    }
  });
});

describe('spare processes', () => {
  it('hands a tenant to a spare and refills the pool', async () => {
    const { supervisor, client } = setup({ spareProcesses: 1 });
    const started = new Promise<boolean>((resolve) =>
      supervisor.once('started', (_id, info) => resolve(info.fromSpare)),
    );
    const woken = await wakeUntilReady(supervisor, 'warm');
    expect(await started).toBe(true);
    // The spare booted its indexer before it had a tenant: it runs before any write or query asked for it.
    const indexers = childrenOf(supervisor.info('warm').pid!).filter((pid) =>
      commandLineOf(pid).includes('indexer-main'),
    );
    expect(indexers).toHaveLength(1);
    const tenant = client(woken.socketPath);
    expect((await tenant.call('PUT', '/admin/databases', { Name: 'db' })).status).toBe(201);
    expect((await tenant.call('GET', '/databases')).json).toEqual({ Databases: ['db'] });
    // The spare served its tenant's own directory, not a scratch one.
    expect((await supervisor.stats('warm')).databases).toMatchObject([{ name: 'db' }]);
    // The used spare is replaced (shortly after the start it served, not during it).
    await supervisor.sparesReady();
    const second = new Promise<boolean>((resolve) =>
      supervisor.once('started', (_id, info) => resolve(info.fromSpare)),
    );
    await wakeUntilReady(supervisor, 'warm-2');
    expect(await second).toBe(true);
  }, 120_000);
});

describe('purging a deleted tenant (DELETE /tenants/{id} on the internal API)', () => {
  it('stops its process (a spare it was given), deletes its files, and is idempotent and safe', async () => {
    const { supervisor, dir, client } = setup({ spareProcesses: 1, startDeadlineMs: 30_000 });
    const token = 'test-token-0123456789';
    const host = buildHostServer({ supervisor, internalToken: token, logger: pino({ level: 'silent' }) });
    cleanups.push(() => host.close());
    const purge = (id: string) =>
      host.inject({ method: 'DELETE', url: `/tenants/${id}`, headers: { [INTERNAL_TOKEN_HEADER]: token } });

    const startedFromSpare = new Promise<boolean>((resolve) =>
      supervisor.once('started', (_id, info) => resolve(info.fromSpare)),
    );
    const woken = await wakeUntilReady(supervisor, 'doomed');
    expect(await startedFromSpare).toBe(true);
    expect((await client(woken.socketPath).call('PUT', '/admin/databases', { Name: 'db' })).status).toBe(201);
    const pid = supervisor.info('doomed').pid!;
    const tenantDir = path.join(dir, 'tenants', 'doomed');
    expect(fs.existsSync(tenantDir)).toBe(true);

    const first = await purge('doomed');
    expect([first.statusCode, first.json()]).toEqual([
      200,
      { tenantId: 'doomed', wasRunning: true, removedFiles: true },
    ]);
    expect(fs.existsSync(tenantDir)).toBe(false);
    expect(fs.existsSync(woken.socketPath)).toBe(false);
    expect(() => process.kill(pid, 0)).toThrow(); // the process is gone, not just forgotten
    expect(supervisor.info('doomed')).toMatchObject({ state: 'stopped', pid: null, starts: 0 });
    expect(supervisor.list().map((t) => t.tenantId)).not.toContain('doomed');

    // Again, and for a tenant this host never ran: nothing to do, still a success (the job retries).
    const again = await purge('doomed');
    expect([again.statusCode, again.json()]).toEqual([
      200,
      { tenantId: 'doomed', wasRunning: false, removedFiles: false },
    ]);
    expect((await purge('never-here')).json()).toMatchObject({ removedFiles: false });

    // Ids that are not tenant ids never reach the file system: the data directory is untouched.
    const sibling = path.join(dir, 'tenants', 'keep');
    fs.mkdirSync(sibling);
    // (A `..` segment, even encoded, never reaches the route: the URL is normalized first.)
    for (const bad of ['a..b', 'Keep', '-x', '..%2Fkeep']) {
      const refused = await purge(bad);
      expect([bad, refused.statusCode, refused.json().code]).toEqual([bad, 400, 'InvalidTenantId']);
    }
    expect(() => supervisor.purge('..')).toThrow(expect.objectContaining({ code: 'InvalidTenantId' }));
    expect(fs.existsSync(sibling)).toBe(true);
    const noToken = await host.inject({ method: 'DELETE', url: '/tenants/keep' });
    expect(noToken.statusCode).toBe(401);
    expect(fs.existsSync(sibling)).toBe(true);
  }, 120_000);
});
