// pnpm bench:gateway — what the gateway costs, measured side by side in one run:
//
// - direct_get_per_s: GETs of one document straight to the tenant's Unix
//   socket (no TLS, no auth), 32 concurrent keep-alive connections;
// - gateway_get_per_s: the same GETs through the gateway (TLS with a client
//   certificate, principal lookup, authorisation, quota, metering, proxy),
//   the gateway running in its own process as in production (this process
//   only sends requests); of_direct is the median of the rounds' ratios;
// - gateway_overhead_p50_ms: p50 of single sequential GETs through the
//   gateway minus p50 of direct ones, alternating the two;
// - the ceilings, measured in the same rounds (bench/bare-proxy.ts):
//   bare_proxy_get_per_s, the same TLS termination and the gateway's proxy
//   code with no authentication, authorisation, quotas or metering (no gateway
//   can beat it: it is what TLS plus one more HTTP hop cost on this machine);
//   tls_only_get_per_s, an HTTPS server answering the same document itself;
// - cold_start_p50_ms, cold_start_p99_ms, idle_tenant_rss_mb: from the host's
//   cold-start benchmark (a tenant with 100 MB of data), run as a child.
//
// Stages go to stderr; the last stdout line is one JSON object.
import { type ChildProcess, execFileSync, fork } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { issueServerCertificate } from '@rookery/pki';
import { Pool } from 'undici';
import { forkGateway } from '../src/test-fixtures/gateway-process.js';
import { startStack } from '../src/test-fixtures/stack.js';
import { arg, CONCURRENCY, get, log, machine, throughput } from './load.js';

const REQUESTS = arg('requests', 20_000);
const SEQUENTIAL = arg('sequential', 2_000);
const here = path.dirname(fileURLToPath(import.meta.url));

/** Forks a ceiling server (bare-proxy.ts), hands it its setup and waits for its `{ url }`. */
async function forkCeiling(setup: object): Promise<{ url: string; child: ChildProcess }> {
  const child = fork(path.join(here, 'bare-proxy.ts'), [], {
    execArgv: ['--conditions=@rookery/source', '--import', 'tsx'],
  });
  child.send(setup);
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (m) => resolve((m as { url: string }).url));
    child.once('exit', (code) => reject(new Error(`bare-proxy.ts exited (${code})`)));
  });
  return { url, child };
}

const stack = await startStack({ tenantCacheMs: 1_000 }); // the gateway's production default
try {
  const client = await stack.tenantAdmin(
    { id: 'bench', name: 'Bench', quota: { requestsPerSecond: 1e9, storageBytes: 2 ** 40 } },
    'bench',
  );
  await client.call('PUT', '/admin/databases', { Name: 'db' });
  const put = await client.call('PUT', '/databases/db/docs?id=packages/1', {
    Title: 'Newtonsoft.Json',
    Tags: ['json', 'serialization'],
    '@metadata': { '@collection': 'Packages' },
  });
  if (put.status !== 201) throw new Error(`setup failed: ${put.status} ${put.text}`);
  const docPath = '/databases/db/docs?id=packages/1';
  const document = await client.call('GET', docPath);
  const socketPath = stack.supervisor.info('bench').socketPath;
  const gateway = await forkGateway(stack);
  // The ceilings get a server certificate of their own from the same CA: the client trusts them alike.
  const serverCertificate = await issueServerCertificate(stack.ca, {
    hosts: ['localhost', '127.0.0.1'],
    validDays: 1,
  });
  const ceiling = (mode: 'proxy' | 'tls') =>
    forkCeiling({
      mode,
      socketPath,
      caPem: stack.ca.certPem,
      certPem: serverCertificate.certPem,
      keyPem: serverCertificate.keyPem,
      body: document.text,
    });
  const bareProxy = await ceiling('proxy');
  const tlsOnly = await ceiling('tls');

  const overTls = (url: string) =>
    new Pool(url, {
      connections: CONCURRENCY,
      connect: { ca: stack.ca.certPem, cert: client.certPem, key: client.keyPem, servername: 'localhost' },
    });
  const targets = {
    direct: new Pool('http://tenant', { socketPath, connections: CONCURRENCY }),
    gateway: overTls(gateway.url),
    bareProxy: overTls(bareProxy.url),
    tlsOnly: overTls(tlsOnly.url),
  };
  type Target = keyof typeof targets;
  const names = Object.keys(targets) as Target[];
  const oneDocument = () => docPath;
  // Warm every path, then alternate them round by round so drift on a shared machine hits all alike.
  for (const name of names) await throughput(targets[name], 2_000, oneDocument);
  const rates = Object.fromEntries(names.map((name) => [name, [] as number[]])) as Record<Target, number[]>;
  for (let round = 0; round < 4; round++) {
    for (const name of names) rates[name].push(await throughput(targets[name], REQUESTS / 4, oneDocument));
    log(`round ${round + 1}: ${names.map((name) => `${name} ${rates[name].at(-1)}/s`).join(', ')}`);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const times = { direct: [] as number[], gateway: [] as number[] };
  for (let i = 0; i < SEQUENTIAL; i++) {
    for (const name of ['direct', 'gateway'] as const) {
      const t0 = performance.now();
      await get(targets[name], docPath);
      times[name].push(performance.now() - t0);
    }
  }
  const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.5)]!;
  for (const pool of Object.values(targets)) await pool.close();
  await gateway.stop();
  for (const server of [bareProxy, tlsOnly]) server.child.kill('SIGTERM');

  const rate = Object.fromEntries(names.map((name) => [name, median(rates[name])])) as Record<Target, number>;
  // Each round measures every path back to back: the median of the rounds' ratios holds up when the
  // shared machine slows down mid-run, where a ratio of two medians from different rounds would not.
  const ofDirect = (name: Target) =>
    Math.round(median(rates[name].map((perSecond, round) => perSecond / rates.direct[round]!)) * 100) / 100;
  const overhead = p50(times.gateway) - p50(times.direct);
  log(`direct p50 ${p50(times.direct).toFixed(3)} ms, gateway p50 ${p50(times.gateway).toFixed(3)} ms`);
  log(`of direct: gateway ${ofDirect('gateway')}, bare proxy ${ofDirect('bareProxy')}`);

  log('cold starts (host benchmark, a tenant with 100 MB of data)');
  const root = path.resolve(here, '..', '..', '..');
  const coldOutput = execFileSync('pnpm', ['-s', 'bench:cold-start'], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const cold = JSON.parse(coldOutput.trim().split('\n').at(-1)!) as Record<string, number>;

  console.log(
    JSON.stringify({
      machine: machine(),
    }),
  );
  console.log(
    JSON.stringify({
      bench: 'gateway',
      direct_get_per_s: rate.direct,
      gateway_get_per_s: rate.gateway,
      of_direct: ofDirect('gateway'),
      bare_proxy_get_per_s: rate.bareProxy,
      bare_proxy_of_direct: ofDirect('bareProxy'),
      tls_only_get_per_s: rate.tlsOnly,
      gateway_overhead_p50_ms: Math.round(overhead * 1000) / 1000,
      cold_start_p50_ms: cold.cold_start_p50_ms,
      cold_start_p99_ms: cold.cold_start_p99_ms,
      idle_tenant_rss_mb: cold.idle_tenant_rss_mb,
    }),
  );
} finally {
  await stack.close();
}
