// pnpm bench:put-cpu [--puts N] [--seed S] [--compare <checkout> [--rounds R]] [--timeline true] [--index true]
// — where a durable single-document PUT's CPU goes (issue [13]).
// The same generated package versions and the same 64-connection client as bench:vs-postgres-writes, sent
// to a real tenant process (src/main.ts, default durability) and then to the no-op fastify process
// (bench/noop-server.ts: a PUT route that does nothing), each after a warm-up. Reported: CPU µs per PUT of
// each server process and its descendants (the tenant's indexer), per thread, read from /proc before and
// after the measured requests — a figure the shared, loaded machine moves far less than requests per second.
// With ROOKERY_BENCH_CPU_PROF=<dir>, the tenant and its indexer write V8 CPU profiles there on exit.
// --compare <checkout>: an A/B in one run — the tenant of another checkout of this repository (its
// services/tenant/src/main.ts, e.g. a `git worktree` of the commit before a change, its node_modules copied
// in) and this checkout's, alternating, R rounds each (default 3; the order flips every round); the figures
// are each side's medians, and every round is printed. --timeline true: one more run of this checkout's tenant
// started through bench/put-timeline.ts, which marks every group commit; summarized by bench/timeline.ts.
// --index true: each tenant's database gets a map index (PackageId, Version) before the warm-up.
// Stages go to stderr; the last stdout line is one JSON object.
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { makeTempDir } from '@rookery/testkit';
import { Pool } from 'undici';
import { cpuByThread, cpuPerOperation } from './process-cpu.js';
import { putDocuments, rookeryPuts } from './put-load.js';
import { startServer } from './server-process.js';
import { summarizeTimeline } from './timeline.js';

const here = path.dirname(fileURLToPath(import.meta.url));
const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
const argText = (name: string) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? undefined : process.argv[i + 1];
};
const PUTS = arg('puts', 20_000);
const COMPARE = argText('compare');
const ROUNDS = arg('rounds', COMPARE ? 3 : 1);
const TIMELINE = argText('timeline') === 'true';
/** --index true: the database gets one map index first, so the indexer has work behind every commit. */
const INDEX = argText('index') === 'true';
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

type Measured = Awaited<ReturnType<typeof measure>>;
const profileDir = process.env.ROOKERY_BENCH_CPU_PROF;
const thisCheckout = path.join(here, '..', '..', '..');

/** Starts the tenant at `entry`, creates the database, measures it, stops it. */
async function measureTenant(entry: string, env: NodeJS.ProcessEnv = {}): Promise<Measured> {
  const tmp = makeTempDir('rookery-bench-put-cpu-');
  const tenant = await startServer(entry, {
    ROOKERY_DATA: tmp.dir,
    ROOKERY_PORT: '0',
    ROOKERY_LOG_LEVEL: 'warn',
    ...(profileDir ? { NODE_OPTIONS: `--cpu-prof --cpu-prof-dir=${profileDir}` } : {}),
    ...env,
  });
  try {
    const created = await fetch(`${tenant.url}/admin/databases`, {
      method: 'PUT',
      headers: { 'content-type': 'application/json' },
      body: '{"Name":"bench"}',
    });
    if (created.status >= 400) throw new Error(`create database: ${created.status} ${await created.text()}`);
    if (INDEX) {
      const index = await fetch(`${tenant.url}/databases/bench/indexes`, {
        method: 'PUT',
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({
          Name: 'Packages/ByIdAndVersion',
          Maps: [{ Collection: 'Packages', Fields: { PackageId: 'PackageId', Version: 'Version' } }],
        }),
      });
      if (index.status >= 400) throw new Error(`define index: ${index.status} ${await index.text()}`);
    }
    return await measure(tenant.url, tenant.pid);
  } finally {
    await tenant.stop();
    tmp.cleanup();
  }
}

const tenantOf = (checkout: string) => path.join(checkout, 'services', 'tenant', 'src', 'main.ts');
const sides = COMPARE ? { this: thisCheckout, compare: path.resolve(COMPARE) } : { this: thisCheckout };
const runs: Record<string, Measured[]> = {};
for (let round = 0; round < ROUNDS; round++) {
  const order = Object.entries(sides);
  if (round % 2 === 1) order.reverse();
  for (const [side, checkout] of order) {
    const measured = await measureTenant(tenantOf(checkout));
    runs[side] = [...(runs[side] ?? []), measured];
    log({ stage: 'tenant', side, round, ...measured });
  }
}
const median = (values: number[]) => {
  const sorted = [...values].sort((a, b) => a - b);
  const mid = Math.floor(sorted.length / 2);
  return sorted.length % 2 === 1 ? sorted[mid]! : (sorted[mid - 1]! + sorted[mid]!) / 2;
};
/** A side's figures: its only run, or per thread the median over its rounds. */
function combined(measured: Measured[]): Measured {
  if (measured.length === 1) return measured[0]!;
  const names = new Set(measured.flatMap((m) => Object.keys(m.cpu_us)));
  const cpu_us: Record<string, number> = {};
  for (const name of names) cpu_us[name] = median(measured.map((m) => m.cpu_us[name] ?? 0));
  return { per_s: median(measured.map((m) => m.per_s)), cpu_us };
}
const rookery = combined(runs.this!);
let timeline: ReturnType<typeof summarizeTimeline> | undefined;
if (TIMELINE) {
  const marksFile = path.join(os.tmpdir(), `rookery-put-timeline-${process.pid}.json`);
  const measured = await measureTenant(path.join(here, 'put-timeline.ts'), {
    ROOKERY_BENCH_TIMELINE: marksFile,
  });
  timeline = summarizeTimeline(JSON.parse(fs.readFileSync(marksFile, 'utf8')), PUTS);
  fs.rmSync(marksFile, { force: true });
  log({ stage: 'timeline', ...measured, timeline });
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
    ...(INDEX ? { index: 'Packages/ByIdAndVersion' } : {}),
    cpu_us_per_put: { tenant: rookery.cpu_us.total, noop: noop.cpu_us.total },
    of_noop: Number((rookery.cpu_us.total! / noop.cpu_us.total!).toFixed(2)),
    tenant_threads: rookery.cpu_us,
    noop_threads: noop.cpu_us,
    per_s: { tenant: rookery.per_s, noop: noop.per_s },
    ...(COMPARE
      ? {
          compare: {
            checkout: path.resolve(COMPARE),
            rounds: ROUNDS,
            cpu_us_per_put: combined(runs.compare!).cpu_us.total,
            threads: combined(runs.compare!).cpu_us,
            per_s: combined(runs.compare!).per_s,
            this_rounds: runs.this!.map((m) => m.cpu_us.total),
            compare_rounds: runs.compare!.map((m) => m.cpu_us.total),
          },
        }
      : {}),
    ...(timeline ? { timeline } : {}),
    loadavg: os.loadavg().map((l) => Number(l.toFixed(1))),
  }),
);
