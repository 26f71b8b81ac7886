// pnpm bench:gateway — what the gateway costs, measured side by side in one run:
//
// - direct_get_per_s: GETs of one document straight to the tenant's Unix
//   socket (no TLS, no auth), 32 concurrent keep-alive connections;
// - gateway_get_per_s: the same GETs through the gateway (TLS with a client
//   certificate, principal lookup, authorisation, quota, metering, proxy),
//   the gateway running in its own process as in production (this process
//   only sends requests);
// - gateway_overhead_p50_ms: p50 of single sequential GETs through the
//   gateway minus p50 of direct ones, alternating the two;
// - cold_start_p50_ms, cold_start_p99_ms, idle_tenant_rss_mb: from the host's
//   cold-start benchmark (a tenant with 100 MB of data), run as a child.
//
// Stages go to stderr; the last stdout line is one JSON object.
import { execFileSync, fork } from 'node:child_process';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { Pool } from 'undici';
import { startStack, TOKEN } from '../src/test-fixtures/stack.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
const REQUESTS = arg('requests', 20_000);
const SEQUENTIAL = arg('sequential', 2_000);
const CONCURRENCY = 32;
const log = (m: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${m}\n`);

const stack = await startStack({ tenantCacheMs: 1_000 }); // the gateway's production default
try {
  await stack.store.createTenant({
    id: 'bench',
    name: 'Bench',
    quota: { requestsPerSecond: 1e9, storageBytes: 2 ** 40 },
  });
  const client = await stack.client({
    tenantId: 'bench',
    kind: 'program',
    name: 'bench',
    role: { kind: 'tenant-admin' },
  });
  await client.call('PUT', '/admin/databases', { Name: 'db' });
  const put = await client.call('PUT', '/databases/db/docs?id=packages/1', {
    Title: 'Newtonsoft.Json',
    Tags: ['json', 'serialization'],
    '@metadata': { '@collection': 'Packages' },
  });
  if (put.status !== 201) throw new Error(`setup failed: ${put.status} ${put.text}`);
  const socketPath = stack.supervisor.info('bench').socketPath;
  const gatewayProcess = fork(
    path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'src', 'main.ts'),
    [],
    {
      execArgv: ['--conditions=@rookery/source', '--import', 'tsx'],
      env: {
        ...process.env,
        ROOKERY_DATA: stack.dir,
        ROOKERY_GATEWAY_PORT: '0',
        ROOKERY_HOST_URL: stack.hostUrl,
        ROOKERY_INTERNAL_TOKEN: TOKEN,
        ROOKERY_LOG_LEVEL: 'warn',
      },
    },
  );
  const gatewayUrl = await new Promise<string>((resolve, reject) => {
    gatewayProcess.once('message', (m) => resolve((m as { url: string }).url));
    gatewayProcess.once('exit', (code) => reject(new Error(`the gateway exited (${code})`)));
  });
  const docPath = '/databases/db/docs?id=packages/1';

  const direct = new Pool('http://tenant', { socketPath, connections: CONCURRENCY });
  const viaGateway = new Pool(gatewayUrl, {
    connections: CONCURRENCY,
    connect: { ca: stack.ca.certPem, cert: client.certPem, key: client.keyPem, servername: 'localhost' },
  });
  const get = async (pool: Pool) => {
    const r = await pool.request({ method: 'GET', path: docPath });
    await r.body.dump();
    if (r.statusCode !== 200) throw new Error(`GET answered ${r.statusCode}`);
  };
  const throughput = async (pool: Pool, n: number) => {
    let next = 0;
    const started = performance.now();
    await Promise.all(
      Array.from({ length: CONCURRENCY }, async () => {
        while (next++ < n) await get(pool);
      }),
    );
    return Math.round(n / ((performance.now() - started) / 1000));
  };
  // Warm both paths, then alternate halves so drift on a shared machine hits both alike.
  await throughput(direct, 2_000);
  await throughput(viaGateway, 2_000);
  const rates = { direct: [] as number[], gateway: [] as number[] };
  for (let round = 0; round < 4; round++) {
    rates.direct.push(await throughput(direct, REQUESTS / 4));
    rates.gateway.push(await throughput(viaGateway, REQUESTS / 4));
    log(`round ${round + 1}: direct ${rates.direct.at(-1)}/s, gateway ${rates.gateway.at(-1)}/s`);
  }
  const median = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
  const times = { direct: [] as number[], gateway: [] as number[] };
  for (let i = 0; i < SEQUENTIAL; i++) {
    for (const [name, pool] of [
      ['direct', direct],
      ['gateway', viaGateway],
    ] as const) {
      const t0 = performance.now();
      await get(pool);
      times[name].push(performance.now() - t0);
    }
  }
  const p50 = (xs: number[]) => [...xs].sort((a, b) => a - b)[Math.floor(xs.length * 0.5)]!;
  await direct.close();
  await viaGateway.close();
  gatewayProcess.kill('SIGTERM');

  const directRate = median(rates.direct);
  const gatewayRate = median(rates.gateway);
  const overhead = p50(times.gateway) - p50(times.direct);
  log(`direct p50 ${p50(times.direct).toFixed(3)} ms, gateway p50 ${p50(times.gateway).toFixed(3)} ms`);

  log('cold starts (host benchmark, a tenant with 100 MB of data)');
  const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', '..');
  const coldOutput = execFileSync('pnpm', ['-s', 'bench:cold-start'], {
    cwd: root,
    encoding: 'utf8',
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const cold = JSON.parse(coldOutput.trim().split('\n').at(-1)!) as Record<string, number>;

  console.log(
    JSON.stringify({
      machine: {
        cpus: os.cpus().length,
        model: os.cpus()[0]?.model.split(' ').slice(0, 2).join(' '),
        node: process.version,
      },
    }),
  );
  console.log(
    JSON.stringify({
      bench: 'gateway',
      direct_get_per_s: directRate,
      gateway_get_per_s: gatewayRate,
      of_direct: Math.round((gatewayRate / directRate) * 100) / 100,
      gateway_overhead_p50_ms: Math.round(overhead * 1000) / 1000,
      cold_start_p50_ms: cold.cold_start_p50_ms,
      cold_start_p99_ms: cold.cold_start_p99_ms,
      idle_tenant_rss_mb: cold.idle_tenant_rss_mb,
    }),
  );
} finally {
  await stack.close();
}
