// pnpm bench:put-cpu [--puts N] [--seed S] — where a durable single-document PUT's CPU goes (issue [13]).
// The same generated package versions and the same 64-connection client as bench:vs-postgres-writes, sent
// to a real tenant process (src/main.ts, default durability) and then to the no-op fastify process
// (bench/noop-server.ts: a PUT route that does nothing), each after a warm-up. Reported: CPU µs per PUT of
// each server process and its descendants (the tenant's indexer), per thread, read from /proc before and
// after the measured requests — a figure the shared, loaded machine moves far less than requests per second.
// With ROOKERY_BENCH_CPU_PROF=<dir>, the tenant and its indexer write V8 CPU profiles there on exit.
// Stages go to stderr; the last stdout line is one JSON object.
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeTempDir } from '@rookery/testkit';
import { Pool } from 'undici';
import { cpuByThread, cpuPerOperation } from './process-cpu.js';
import { putDocuments, rookeryPuts } from './put-load.js';
import { startServer } from './server-process.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
const PUTS = arg('puts', 20_000);
const SEED = arg('seed', 1);
const WARMUP_PUTS = 5_000;
const log = (line: Record<string, unknown>) => process.stderr.write(`${JSON.stringify(line)}\n`);

const docs = putDocuments(PUTS, SEED, 'put/');
const warmup = putDocuments(WARMUP_PUTS, SEED + 1, 'warm-put/');

/** Warms `url` up, then returns the CPU per PUT of the process `pid` over PUTS requests, and their rate. */
async function measure(url: string, pid: number) {
  const pool = new Pool(url, { connections: 64, pipelining: 1 });
  try {
    await rookeryPuts(pool, warmup);
    const before = cpuByThread(pid);
    const perSecond = await rookeryPuts(pool, docs);
    return { per_s: Math.round(perSecond), cpu_us: cpuPerOperation(before, cpuByThread(pid), docs.length) };
  } finally {
    await pool.close();
  }
}

const tmp = makeTempDir('rookery-bench-put-cpu-');
const profileDir = process.env.ROOKERY_BENCH_CPU_PROF;
const tenant = await startServer(path.join(here, '..', 'src', 'main.ts'), {
  ROOKERY_DATA: tmp.dir,
  ROOKERY_PORT: '0',
  ROOKERY_LOG_LEVEL: 'warn',
  ...(profileDir ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profileDir}` } : {}),
});
let rookery: Awaited<ReturnType<typeof measure>>;
try {
  const created = await fetch(`${tenant.url}/admin/databases`, {
    method: 'PUT',
    headers: { 'content-type': 'application/json' },
    body: '{"Name":"bench"}',
  });
  if (created.status >= 400) throw new Error(`create database: ${created.status} ${await created.text()}`);
  rookery = await measure(tenant.url, tenant.pid);
  log({ stage: 'tenant', ...rookery });
} finally {
  await tenant.stop();
  tmp.cleanup();
}
const noopServer = await startServer(path.join(here, 'noop-server.ts'));
let noop: Awaited<ReturnType<typeof measure>>;
try {
  noop = await measure(noopServer.url, noopServer.pid);
  log({ stage: 'noop', ...noop });
} finally {
  await noopServer.stop();
}
console.log(
  JSON.stringify({
    bench: 'put-cpu',
    puts: PUTS,
    cpu_us_per_put: { tenant: rookery.cpu_us.total, noop: noop.cpu_us.total },
    of_noop: Number((rookery.cpu_us.total! / noop.cpu_us.total!).toFixed(2)),
    tenant_threads: rookery.cpu_us,
    noop_threads: noop.cpu_us,
    per_s: { tenant: rookery.per_s, noop: noop.per_s },
    loadavg: os.loadavg().map((l) => Number(l.toFixed(1))),
  }),
);
