// `npm start -- --hosts N` (scripts/start.mjs hands over here): build, start a local fleet
// (local-fleet.mjs) under .rookery/fleet, create the first tenant's `demo` database through the first
// gateway, print how to reach each gateway, which host owns the tenant and how to watch a failover, and
// stop everything on Ctrl+C. A host that exits meanwhile is part of the demonstration, not a reason to stop.
import path from 'node:path';
import { ensureDependencies, ensurePostgres, root, runPnpm, step } from './bootstrap.mjs';
import { callGateway } from './gateway-call.mjs';
import { startLocalFleet } from './local-fleet.mjs';
import { ensureNativeModulesMatchNode } from './node-runtime.mjs';
import { describePortInUse, firstPortInUse } from './ports.mjs';

const dist = (...parts) => import(path.join(root, ...parts, 'dist', 'index.js'));

/** Resolves once the fleet has stopped (Ctrl+C); exits the process with 1 if it could not start. */
export async function runLocalFleet(hosts) {
  const dir = path.resolve(process.env.ROOKERY_FLEET_DIR ?? path.join(root, '.rookery', 'fleet'));
  const first = Number(process.env.ROOKERY_GATEWAY_PORT ?? '8443');
  const gatewayPorts = [first, first + 1];
  const tenantId = process.env.ROOKERY_FIRST_TENANT ?? 'demo';
  const clash = await firstPortInUse(
    gatewayPorts.map((port, i) => ({
      name: `gateway ${i + 1}`,
      variable: 'ROOKERY_GATEWAY_PORT',
      host: '127.0.0.1',
      port: String(port),
    })),
  );
  if (clash !== null) {
    process.stderr.write(`\n✖ ${describePortInUse(clash)}`);
    process.exit(1);
  }
  ensureDependencies();
  ensureNativeModulesMatchNode(runPnpm);
  ensurePostgres();
  step('Building');
  runPnpm(['exec', 'turbo', 'run', 'build', '--output-logs=errors-only']);

  step(`Starting PostgreSQL, ${hosts} hosts and 2 gateways in ${dir} (made anew at every start)`);
  const [{ startPostgres }, { bootstrap }, { controlPaths, openPostgresControlStore }] = await Promise.all([
    dist('packages', 'testkit'),
    dist('packages', 'cli'),
    dist('packages', 'control-store'),
  ]);
  let stopping = false;
  const stopped = new Promise((resolve) => {
    for (const signal of ['SIGINT', 'SIGTERM']) process.once(signal, resolve);
  });
  const fleet = await startLocalFleet({
    dir,
    hosts,
    gatewayPorts,
    tenantId,
    modules: { startPostgres, bootstrap, controlPaths, openPostgresControlStore },
    mains: {
      host: path.join(root, 'services', 'host', 'dist', 'main.js'),
      gateway: path.join(root, 'services', 'gateway', 'dist', 'main.js'),
    },
  }).catch((error) => {
    process.stderr.write(`\n✖ The fleet did not start: ${error.message}\n`);
    process.exit(1);
  });
  for (const host of fleet.hosts) {
    host.child.once('exit', (code, signal) => {
      if (stopping) return;
      process.stderr.write(
        `\n▶ host ${host.id} exited (${signal ?? `exit ${code}`}): once its lease has expired (10 s) and the grace (2 s), another host's reaper re-places its tenants; the next request is answered there.\n`,
      );
    });
  }

  const urls = fleet.gateways.map((g) => g.url.replace('127.0.0.1', 'localhost'));
  // The first request places the tenant and wakes it on its host.
  const created = await callGateway(urls[0], fleet.admin, 'PUT', '/admin/databases', { Name: 'demo' }).catch(
    (error) => ({ status: 0, body: error.message }),
  );
  if (created.status !== 201 && created.status !== 409) {
    process.stderr.write(`Could not create the demo database: ${created.status} ${created.body}\n`);
  }
  const owner = await fleet.ownerOf(tenantId);
  const tls = `--cacert ${fleet.admin.caFile} --cert ${fleet.admin.certFile} --key ${fleet.admin.keyFile}`;
  const hostLines = fleet.hosts
    .map((h) => `  ${h.id}  pid ${h.child.pid}  relay ${h.relayAddress}  internal ${h.address}`)
    .join('\n');
  process.stdout.write(`
A Rookery fleet is running: ${hosts} hosts, 2 gateways, PostgreSQL at ${fleet.databaseUrl},
one mirror directory shared by the hosts (${fleet.mirror}).

Gateways (any of them serves any tenant):
${urls.map((url, i) => `  gateway ${i + 1}: ${url}`).join('\n')}

Hosts:
${hostLines}

Tenant "${tenantId}" (database "demo") is placed on host ${owner?.hostId ?? '(none yet)'} (pid ${owner?.host?.child.pid ?? '?'}), epoch ${owner?.epoch ?? '?'}.
Write through gateway 1, read through gateway 2:

  curl ${tls} -X PUT '${urls[0]}/databases/demo/docs?id=users/1-A' \\
       -H 'content-type: application/json' -d '{"Name": "Ada Lovelace"}'
  curl ${tls} '${urls[1]}/databases/demo/docs?id=users/1-A'

Watch a failover: kill the owner (its tenant processes stop when their host is gone), then read again:

  kill -9 ${owner?.host?.child.pid ?? '<pid>'}
  curl ${tls} '${urls[1]}/databases/demo/docs?id=users/1-A'

It answers 503 (Retry-After) until the host's lease has expired (10 s) and the grace (2 s) has passed,
then from another host, restored from the mirror, under a higher epoch. Where it is now:

  ROOKERY_CONTROL_DATABASE_URL=${fleet.databaseUrl} ./rookery host list

Drain a host (its tenants move one by one, no request fails): ./rookery host drain h2 --wait
Stop with Ctrl+C.
`);
  await stopped;
  stopping = true;
  step('Stopping the gateways, the hosts (tenants commit queued writes first) and PostgreSQL');
  await fleet.stop();
}
