// `npm start -- --hosts 3`'s library (scripts/lib/local-fleet.mjs), run as the launcher runs it but on the
// sources: a real PostgreSQL from the test kit, the CLI's bootstrap (the CA, the first tenant, its admin's
// certificate files), three host processes and two gateway processes in fleet routing. A document written
// through gateway 1 is read through gateway 2; then everything stops cleanly.
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { controlPaths, openPostgresControlStore } from '@rookery/control-store';
import { makeTempDir, startPostgres, tsNodeArgs } from '@rookery/testkit';
import { afterAll, describe, expect, it } from 'vitest';
import { callGateway } from '../../../scripts/lib/gateway-call.mjs';
import { fleetHostsOption, startLocalFleet } from '../../../scripts/lib/local-fleet.mjs';
import { bootstrap } from './bootstrap.js';

const repo = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
const main = (service: string) => path.join(repo, 'services', service, 'src', 'main.ts');

describe('npm start -- --hosts N', () => {
  it('reads the option: absent (one machine, as before), a number of hosts, or an error saying what to write', () => {
    expect(fleetHostsOption([])).toBeNull();
    expect(fleetHostsOption(['--hosts', '3'])).toBe(3);
    expect(() => fleetHostsOption(['--hosts'])).toThrow(/--hosts takes the number of host processes, 1 to 9/);
    expect(() => fleetHostsOption(['--hosts', 'many'])).toThrow(/not "many"/);
  });

  const tmp = makeTempDir('rookery-local-fleet-');
  afterAll(() => tmp.cleanup());

  it('runs three hosts and two gateways on PostgreSQL: written through gateway 1, read through gateway 2, then stopped', async () => {
    const tsx = tsNodeArgs('');
    const fleet = await startLocalFleet({
      dir: path.join(tmp.dir, 'fleet'),
      hosts: 3,
      gatewayPorts: [0, 0],
      tenantId: 'demo',
      modules: { startPostgres, bootstrap, controlPaths, openPostgresControlStore },
      mains: { host: main('host'), gateway: main('gateway') },
      nodeArgs: tsx.slice(0, -1),
      env: { ROOKERY_LOG_LEVEL: 'warn', ROOKERY_TENANT_LOG_LEVEL: 'warn' },
    });
    let stopped = false;
    try {
      expect(fleet.hosts.map((h) => h.id)).toEqual(['h1', 'h2', 'h3']);
      const leases = await fleet.store.listHosts();
      expect(leases.map((h) => h.hostId).sort()).toEqual(['h1', 'h2', 'h3']);
      const [one, two] = fleet.gateways.map((g) => g.url);
      // The first request places the tenant and starts it: a loaded machine may answer TenantStarting first.
      await expect
        .poll(
          async () =>
            (await callGateway(one!, fleet.admin, 'PUT', '/admin/databases', { Name: 'demo' })).status,
          {
            timeout: 120_000,
            interval: 500,
          },
        )
        .toBe(201);
      const written = await callGateway(one!, fleet.admin, 'PUT', '/databases/demo/docs?id=users/1-A', {
        Name: 'Ada Lovelace',
      });
      expect(written.status).toBe(201);
      const read = await callGateway(two!, fleet.admin, 'GET', '/databases/demo/docs?id=users/1-A');
      expect(read.status).toBe(200);
      expect(read.body).toContain('Ada Lovelace');
      const owner = await fleet.ownerOf('demo');
      expect(owner?.host?.child.pid).toBeGreaterThan(0);

      await fleet.stop();
      stopped = true;
      for (const { child } of [...fleet.gateways, ...fleet.hosts]) expect(child.exitCode).toBe(0);
      await expect(callGateway(one!, fleet.admin, 'GET', '/databases')).rejects.toThrow(/ECONNREFUSED/);
    } finally {
      if (!stopped) await fleet.stop();
    }
  }, 300_000);
});
