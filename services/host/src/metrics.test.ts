// The host's mirror-lag gauges: the worst of what its running tenants report, the aggregation alone and
// then end to end from a real tenant process (its activity reports over IPC) to the host's /metrics text.
import { spawn } from 'node:child_process';
import path from 'node:path';
import { makeTempDir } from '@rookery/testkit';
import pino from 'pino';
import { afterEach, describe, expect, it } from 'vitest';
import { loadHostConfig } from './config.js';
import { HostMetrics } from './metrics.js';
import { TenantSupervisor } from './supervisor.js';
import { sourceTenantCommand } from './tenant-command.js';
import { type MirrorLag, TenantProcess } from './tenant-process.js';
import { TenantClient } from './test-fixtures/tenant-client.js';

const cleanups: Array<() => Promise<void> | void> = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

/** One sample's value from Prometheus text, by its metric name (no labels). */
async function sample(metrics: HostMetrics, name: string): Promise<number> {
  const line = (await metrics.text()).split('\n').find((l) => l.startsWith(`${name} `));
  if (line === undefined) throw new Error(`${name} is not exported`);
  return Number(line.slice(name.length + 1));
}

describe('host metrics: mirror lag', () => {
  it('exports the worst lag among the running tenants, in seconds and in transactions, and how many reported one', async () => {
    let lags: (MirrorLag | null)[] = [];
    const metrics = new HostMetrics(
      () => lags.length,
      () => lags,
    );
    expect(await sample(metrics, 'rookery_host_tenant_mirror_lag_seconds')).toBe(0);
    expect(await sample(metrics, 'rookery_host_tenants_mirrored')).toBe(0);

    // The worst age and the worst count may come from different tenants: each is the worst of its own.
    lags = [{ ms: 2_500, transactions: 3 }, null, { ms: 400, transactions: 90 }];
    expect(await sample(metrics, 'rookery_host_tenant_mirror_lag_seconds')).toBe(2.5);
    expect(await sample(metrics, 'rookery_host_tenant_mirror_lag_transactions')).toBe(90);
    expect(await sample(metrics, 'rookery_host_tenants_mirrored')).toBe(2);

    // Read at every scrape: a tenant that caught up is 0 again.
    lags = [{ ms: 0, transactions: 0 }];
    expect(await sample(metrics, 'rookery_host_tenant_mirror_lag_seconds')).toBe(0);
    expect(await sample(metrics, 'rookery_host_tenant_mirror_lag_transactions')).toBe(0);
    expect(await sample(metrics, 'rookery_host_tenants_mirrored')).toBe(1);
  });

  it("a running tenant's report reaches the host's gauges: none before it opens a mirrored database, then its lag", async () => {
    const tmp = makeTempDir('rookery-host-mirror-lag-');
    cleanups.push(() => tmp.cleanup());
    const config = loadHostConfig(
      {},
      {
        dataDir: tmp.dir,
        internalToken: 'test-token-0123456789',
        tenantLogLevel: 'error',
        spareProcesses: 0,
        idleStopMs: 0,
        startDeadlineMs: 60_000,
      },
    );
    const supervisor = new TenantSupervisor(config, {
      logger: pino({ level: 'silent' }),
      command: () => sourceTenantCommand(),
      env: { ...process.env, ROOKERY_MIRROR: path.join(tmp.dir, 'mirror'), ROOKERY_MIRROR_MODE: 'sync' },
    });
    cleanups.push(() => supervisor.shutdown(5_000).then(() => undefined));
    const woken = await supervisor.wake('acme');
    const tenant = new TenantClient(woken.socketPath);
    cleanups.push(() => tenant.close());
    const { metrics } = supervisor;
    expect(await sample(metrics, 'rookery_host_tenants_running')).toBe(1);
    expect(await sample(metrics, 'rookery_host_tenants_mirrored')).toBe(0);

    expect((await tenant.call('PUT', '/admin/databases', { Name: 'shop' })).status).toBe(201);
    const put = await tenant.call('PUT', '/databases/shop/docs?id=orders/1', { Total: 1 });
    expect(put.status).toBe(201);
    // The tenant reports every second (services/tenant/src/main.ts). A report taken while the PUT waited for
    // the mirror says 1 transaction behind; sync mode acknowledges only what is on the mirror, so every
    // report after the answer says 0.
    await expect
      .poll(
        async () => [
          await sample(metrics, 'rookery_host_tenants_mirrored'),
          await sample(metrics, 'rookery_host_tenant_mirror_lag_transactions'),
        ],
        { timeout: 30_000 },
      )
      .toEqual([1, 0]);
  }, 120_000);

  it("ignores a tenant process's report whose lag is not a count and an age (it keeps the last good one)", async () => {
    // A real child process speaking the tenant's IPC: hostile reports around one good one, then `spare`,
    // which the host handles after everything sent before it (one channel, in order).
    const activity = (mirrorLag: unknown) => ({ type: 'activity', lastRequestAt: 1, inFlight: 0, mirrorLag });
    const messages = [
      activity({ ms: -5, transactions: 1 }),
      activity({ ms: 10, transactions: 1.5 }),
      activity('far behind'),
      activity({ ms: 250, transactions: 2 }),
      activity({ ms: 1e12, transactions: -1 }),
      activity({ ms: null, transactions: 3 }),
      { spare: true },
    ];
    const script = `for (const m of ${JSON.stringify(messages)}) process.send(m); process.on('disconnect', () => process.exit(0));`;
    const child = spawn(process.execPath, ['-e', script], { stdio: ['ignore', 'ignore', 'inherit', 'ipc'] });
    const proc = new TenantProcess(child, pino({ level: 'silent' }));
    cleanups.push(async () => {
      child.disconnect();
      await proc.exited;
    });
    await proc.spareReady;
    expect(proc.mirrorLag).toEqual({ ms: 250, transactions: 2 });
  });
});
