// `npm start -- --hosts N`: a fleet on one machine (docs/scale-out.md, "Run a fleet on one machine"). A
// PostgreSQL server as the control store, started the way the tests start theirs (packages/testkit), N host
// processes in fleet mode (each its own data directory, lease and relay port on mutual TLS), two gateways in
// fleet routing, and one mirror directory shared by every host, all under one directory that every start
// makes anew: the PostgreSQL server is a throwaway one, and tenants' files and mirror generations of an
// earlier fleet would not match a new control store's placements.
import fs from 'node:fs';
import path from 'node:path';
import { readOrCreateSecret, spawnService } from './services.mjs';

/** The hosts' ids: h1, h2, … */
export const hostId = (n) => `h${n}`;

/**
 * `--hosts N` among the arguments: N (1 to 9), null when absent. Anything else after `--hosts` is an error
 * that says what to write.
 */
export function fleetHostsOption(args) {
  const at = args.indexOf('--hosts');
  if (at === -1) return null;
  const value = args[at + 1];
  if (value === undefined || !/^[1-9]$/.test(value)) {
    throw new Error(
      `--hosts takes the number of host processes, 1 to 9 (e.g. npm start -- --hosts 3), not "${value ?? ''}"`,
    );
  }
  return Number(value);
}

/**
 * Starts the fleet under `dir` (emptied first) and resolves once every process is ready.
 *
 * - `modules`: `startPostgres` (packages/testkit), `bootstrap` (packages/cli: the CA, the master key, the
 *   first tenant and its admin's certificate), `controlPaths` and `openPostgresControlStore`
 *   (packages/control-store) — the built ones for `npm start`, the sources in a test.
 * - `mains`: `{ host, gateway }` entry files, run with `nodeArgs` (a test runs the sources through tsx).
 * - `gatewayPorts`: one gateway per port (0 takes a free one).
 * - `stdio`: where the services' output goes ('inherit', 'ignore' or a file descriptor).
 *
 * Answers `{ databaseUrl, admin, hosts: [{ id, child, address, relayAddress }], gateways: [{ url, child }],
 * store, ownerOf(tenantId), stop() }`; `stop()` ends the gateways, then the hosts (their tenants commit
 * queued writes first), then PostgreSQL.
 */
export async function startLocalFleet({
  dir,
  hosts,
  gatewayPorts,
  tenantId,
  modules,
  mains,
  nodeArgs = [],
  stdio = 'inherit',
  env = {},
}) {
  fs.rmSync(dir, { recursive: true, force: true });
  fs.mkdirSync(dir, { recursive: true });
  const postgres = await modules.startPostgres();
  const started = { hosts: [], gateways: [] };
  let store = null;
  let stopping = null;
  async function stop() {
    stopping ??= (async () => {
      for (const { child } of [...started.gateways, ...started.hosts]) await stopProcess(child);
      await store?.close();
      await postgres.stop();
    })();
    return stopping;
  }
  try {
    const databaseUrl = postgres.connectionString;
    // The CA, the master key, the internal token and the admin's certificate: the gateways' data directory.
    const controlDir = path.join(dir, 'control');
    const admin = await modules.bootstrap({ dataDir: controlDir, tenantId, databaseUrl });
    const paths = modules.controlPaths(controlDir);
    const common = {
      ...process.env,
      ...env,
      ROOKERY_CONTROL_DATABASE_URL: databaseUrl,
      ROOKERY_INTERNAL_TOKEN: readOrCreateSecret(paths.internalToken),
      ROOKERY_CA_DIR: paths.certificateAuthority,
    };
    const mirror = path.join(dir, 'mirror');
    for (let n = 1; n <= hosts; n++) {
      const id = hostId(n);
      const { child, ready } = spawnService(`host ${id}`, mains.host, {
        nodeArgs,
        stdio,
        env: {
          ...common,
          ROOKERY_DATA: path.join(dir, 'hosts', id),
          ROOKERY_HOST_ID: id,
          ROOKERY_HOST_PORT: '0',
          ROOKERY_HOST_RELAY_PORT: '0',
          ROOKERY_MIRROR: mirror,
          // Every acknowledged write is on the mirror first: a killed host loses none of them.
          ROOKERY_MIRROR_MODE: 'sync',
        },
      });
      const host = { id, child };
      started.hosts.push(host);
      Object.assign(host, await ready);
    }
    // One after another: both keep their server certificate in the same directory, made by the first.
    for (const port of gatewayPorts) {
      const { child, ready } = spawnService('gateway', mains.gateway, {
        nodeArgs,
        stdio,
        env: {
          ...common,
          ROOKERY_DATA: controlDir,
          ROOKERY_GATEWAY_ROUTING: 'fleet',
          ROOKERY_GATEWAY_PORT: String(port),
          // Not used in fleet routing (the placements say where each tenant is), but part of the settings.
          ROOKERY_HOST_URL: started.hosts[0].address,
        },
      });
      const gateway = { child };
      started.gateways.push(gateway);
      gateway.url = (await ready).url;
    }
    store = await modules.openPostgresControlStore(databaseUrl);
    const opened = store;
    return {
      dir,
      mirror,
      databaseUrl,
      admin,
      hosts: started.hosts,
      gateways: started.gateways,
      store: opened,
      /** The host process the control store places the tenant on now (undefined if unplaced). */
      async ownerOf(tenant) {
        const placement = await opened.getPlacement(tenant);
        return placement
          ? { ...placement, host: started.hosts.find((h) => h.id === placement.hostId) }
          : undefined;
      },
      stop,
    };
  } catch (error) {
    await stop();
    throw error;
  }
}

/** SIGTERM (SIGCONT first, should it be paused) and the exit; nothing if it has exited already. */
export async function stopProcess(child) {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGCONT');
  child.kill('SIGTERM');
  await exited;
}
