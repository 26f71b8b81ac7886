// `npm start`: install what is missing, build, then bring up the whole service
// on embedded defaults — the host (which starts one process per tenant on
// demand) and the gateway (HTTPS with client certificates, the only public
// endpoint), both reading a SQLite control plane — create a first tenant,
// its admin certificate and a `demo` database, and print how to connect.
// First: re-runs this script under Node 24 (fetched into .tools/) when the system node is older.
import './lib/node-runtime.mjs';
import path from 'node:path';
import { ensureDependencies, root, runPnpm, step } from './lib/bootstrap.mjs';
import { callGateway as callGatewayWith } from './lib/gateway-call.mjs';
import { fleetHostsOption } from './lib/local-fleet.mjs';
import { ensureNativeModulesMatchNode } from './lib/node-runtime.mjs';
import { describePortInUse, firstPortInUse } from './lib/ports.mjs';
import { readOrCreateSecret, spawnService } from './lib/services.mjs';

// `npm start -- --hosts N`: a local fleet instead (scripts/lib/start-fleet.mjs); without it, one machine.
const fleetHosts = (() => {
  try {
    return fleetHostsOption(process.argv.slice(2));
  } catch (error) {
    process.stderr.write(`\n✖ ${error.message}\n`);
    process.exit(1);
  }
})();
if (fleetHosts !== null) {
  const { runLocalFleet } = await import('./lib/start-fleet.mjs');
  await runLocalFleet(fleetHosts);
  process.exit(0);
}

const dataDir = path.resolve(process.env.ROOKERY_DATA ?? path.join(root, '.rookery', 'data'));
const port = process.env.ROOKERY_GATEWAY_PORT ?? '8443';
const hostPort = process.env.ROOKERY_HOST_PORT ?? '8081';
const workerPort = process.env.ROOKERY_WORKER_PORT ?? '8082';
const tenantId = process.env.ROOKERY_FIRST_TENANT ?? 'demo';

// Checked first, before minutes of install and build: a clash (often a Rookery still running) is one
// clear line. The addresses are the services' own defaults (127.0.0.1 for each).
const clash = await firstPortInUse([
  {
    name: 'gateway',
    variable: 'ROOKERY_GATEWAY_PORT',
    host: process.env.ROOKERY_GATEWAY_HOST ?? '127.0.0.1',
    port,
  },
  {
    name: 'host',
    variable: 'ROOKERY_HOST_PORT',
    host: process.env.ROOKERY_HOST_ADDRESS ?? '127.0.0.1',
    port: hostPort,
  },
  {
    name: 'worker',
    variable: 'ROOKERY_WORKER_PORT',
    host: process.env.ROOKERY_WORKER_HOST ?? '127.0.0.1',
    port: workerPort,
  },
]);
if (clash !== null) {
  process.stderr.write(`\n✖ ${describePortInUse(clash)}`);
  process.exit(1);
}

ensureDependencies();
ensureNativeModulesMatchNode(runPnpm);
step('Building');
runPnpm(['exec', 'turbo', 'run', 'build', '--output-logs=errors-only']);

step(`Preparing the control plane, the CA and the first tenant (${tenantId}) in ${dataDir}`);
const { bootstrap } = await import(path.join(root, 'packages', 'cli', 'dist', 'index.js'));
const { controlPaths } = await import(path.join(root, 'packages', 'control-store', 'dist', 'index.js'));
// The same control store the gateway will open: PostgreSQL if configured, the embedded SQLite file otherwise.
// A first tenant deleted a moment ago is being purged (the worker, started below, finishes that): start
// without it rather than create it again under the purge.
let purging = null;
const admin = await bootstrap({
  dataDir,
  tenantId,
  databaseUrl: process.env.ROOKERY_CONTROL_DATABASE_URL || undefined,
}).catch((error) => {
  if (error?.code !== 'TenantPurgePending') throw error;
  purging = error.message;
  return null;
});
const internalToken = readOrCreateSecret(controlPaths(dataDir).internalToken);

const env = {
  ...process.env,
  ROOKERY_DATA: dataDir,
  ROOKERY_INTERNAL_TOKEN: internalToken,
  ROOKERY_HOST_PORT: hostPort,
  ROOKERY_WORKER_PORT: workerPort,
  ROOKERY_GATEWAY_PORT: port,
  // A local directory stands in for the network disk: every committed transaction is mirrored
  // there (asynchronously unless ROOKERY_MIRROR_MODE says sync) and restored from it if lost.
  ROOKERY_MIRROR: path.resolve(process.env.ROOKERY_MIRROR ?? path.join(dataDir, 'mirror')),
};
const children = [];
// Installed before anything starts: a Ctrl+C during start-up must stop what
// already runs too, not leave a host or a gateway behind without its parent.
let stopping = false;
for (const signal of ['SIGINT', 'SIGTERM']) {
  process.on(signal, () => {
    stopping = true;
    for (const child of [...children].reverse()) child.kill('SIGTERM');
  });
}
step('Starting the host, the worker and the gateway');
const host = await startService('host', path.join(root, 'services', 'host', 'dist', 'main.js'));
// Where the host listens as it says (ROOKERY_HOST_PORT=0 picks a free port): the worker and the gateway call it there.
env.ROOKERY_HOST_URL = host.address;
// Backups from the mirror on a schedule, and the backup/restore jobs of the control API.
await startService('worker', path.join(root, 'services', 'worker', 'dist', 'main.js'));
const { url } = await startService('gateway', path.join(root, 'services', 'gateway', 'dist', 'main.js'));
const publicUrl = url.replace('127.0.0.1', 'localhost');

if (admin === null) {
  process.stdout.write(`
Rookery is running at ${publicUrl} (data in ${dataDir}), without its first tenant:
${purging}
Run npm start again once the purge has finished to get a new "${tenantId}" tenant, or set ROOKERY_FIRST_TENANT.
Stop with Ctrl+C.
`);
} else {
  await createDemoDatabaseAndPrintHowToConnect(admin);
}

async function createDemoDatabaseAndPrintHowToConnect(admin) {
  // The first request wakes the tenant: give it the host's start deadline and then some.
  const created = await callGateway('PUT', '/admin/databases', { Name: 'demo' }).catch((error) => ({
    status: 0,
    body: error.message,
  }));
  if (created.status !== 201 && created.status !== 409) {
    process.stderr.write(`Could not create the demo database: ${created.status} ${created.body}\n`);
  }

  const tls = `--cacert ${admin.caFile} --cert ${admin.certFile} --key ${admin.keyFile}`;
  process.stdout.write(`
Rookery is running at ${publicUrl} (data in ${dataDir}, mirrored to ${env.ROOKERY_MIRROR}).
Tenant "${tenantId}" has a database "demo"; its admin certificate is in ${admin.certDir}. Try:

  curl ${tls} -X PUT '${publicUrl}/databases/demo/docs?id=users/1-A' \\
       -H 'content-type: application/json' \\
       -d '{"Name": "Ada Lovelace", "@metadata": {"@collection": "Users"}}'

  curl ${tls} '${publicUrl}/databases/demo/docs?id=users/1-a'
  curl ${tls} -X POST '${publicUrl}/databases/demo/queries' \\
       -H 'content-type: application/json' \\
       -d '{"Query": "from Users where Name = \\"Ada Lovelace\\"", "WaitForNonStaleResults": true}'
  curl ${tls} '${publicUrl}/usage'

From TypeScript (sessions, queries, caching, changes, streams, subscriptions): packages/client/README.md
More tenants, people with TOTP, certificates and usage:  ./rookery --help
Stop with Ctrl+C (tenants commit queued writes before exiting).
`);
}

/**
 * Starts a service's built main and resolves with its `ready` IPC message. If it exits first, the start
 * ends here with one line (the service has printed why); the services already up are stopped by the exit
 * handler below.
 */
function startService(name, entry) {
  const { child, ready } = spawnService(name, entry, { env });
  children.push(child);
  child.once('exit', (code) => {
    // Asked to stop (Ctrl+C): done once the last service has finished its shutdown.
    if (stopping) {
      if (children.every((c) => c.exitCode !== null || c.signalCode !== null)) process.exit(0);
      return;
    }
    // Once running, one service stopping stops the others: a half-up Rookery helps nobody.
    for (const other of children) if (other !== child) other.kill('SIGTERM');
    process.exitCode = code ?? 1;
  });
  return ready.catch(async (error) => {
    process.stderr.write(`\n✖ Rookery did not start: ${error.message}; see its output above.\n`);
    // The exit handler above has asked the others to stop: leave once they have.
    await Promise.all(
      children.map((c) =>
        c.exitCode !== null || c.signalCode !== null ? null : new Promise((done) => c.once('exit', done)),
      ),
    );
    process.exit(1);
  });
}

function callGateway(method, urlPath, body) {
  return callGatewayWith(url, admin, method, urlPath, body);
}
