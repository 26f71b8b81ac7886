// pnpm bench:cold-start — what the first request to a sleeping tenant waits for, on a tenant with 100 MB of
// documents, through the real supervisor and real tenant processes:
//
// - cold_start_p50_ms / cold_start_p99_ms: the tenant stopped, then wake (a spare process takes the tenant,
//   opens its files and listens) plus the first GET of a document over its Unix socket on a new connection.
//   Between runs the benchmark waits until the spare that replaces the used one has loaded the tenant code:
//   the steady state of a host where tenants wake now and then, not dozens in the same second;
// - cold_start_query_p50_ms: the same when the first request is a query (on an automatic index built
//   with the dataset): the tenant starts its indexer process on the first query, not on reads;
// - cold_start_no_spare_p50_ms: the same with no spare (the process boots Node and loads the code first);
// - idle_tenant_rss_mb: RSS of a woken tenant process after a few requests and a moment idle (VmRSS), and
//   idle_indexer_rss_mb, the indexer process the tenant forks when a database is first used.
//
// Flags: --runs (100), --mb (100), --query-runs (20), --no-spare-runs (10). Stages go to stderr; the last stdout line is one
// JSON object.
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import pino from 'pino';
import { defaultTenantCommand, TenantSupervisor } from '../src/index.js';
import { childrenOf, rssMb } from '../src/test-fixtures/proc.js';
import { TenantClient, type TenantReply } from '../src/test-fixtures/tenant-client.js';
import {
  benchHostConfig,
  DATABASE,
  type Dataset,
  ensureDataset,
  mb,
  PACKAGE_QUERY,
  TENANT,
} from './dataset.js';

const arg = (name: string, fallback: number) => {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
};
const RUNS = arg('runs', 100);
const MEGABYTES = arg('mb', 100);
const QUERY_RUNS = arg('query-runs', 20);
const NO_SPARE_RUNS = arg('no-spare-runs', 10);
/** First starts pay for the OS page cache and lazy code paths in the host; they are not counted. */
const WARMUP_RUNS = 3;
const IDLE_MS = 2_000;

const log = (m: string) => process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${m}\n`);
const logger = pino({ level: 'warn' }, pino.destination(2));

interface ColdStart {
  /** Wake and first request: what the user waits for. */
  totalMs: number;
  wakeMs: number;
  firstRequestMs: number;
}

/** Nearest-rank percentile. */
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

const round1 = (x: number) => Math.round(x * 10) / 10;
const docPath = (id: string) => `/databases/${DATABASE}/docs?id=${encodeURIComponent(id)}`;

/** A user's first request after the wake; run `i` picks its document or package. */
type FirstRequest = (client: TenantClient, dataset: Dataset, i: number) => Promise<TenantReply>;

// A different document each run, spread over the file: no run reads what the previous one did.
const pick = (samples: string[], i: number) => samples[(i * 7_919) % samples.length]!;
const getDocument: FirstRequest = (client, dataset, i) =>
  client.call('GET', docPath(pick(dataset.sampleIds, i)));
const queryPackage: FirstRequest = (client, dataset, i) =>
  client.call('POST', `/databases/${DATABASE}/queries`, {
    Query: PACKAGE_QUERY,
    QueryParameters: { id: pick(dataset.samplePackageIds, i) },
  });

function startSupervisor(dataset: Dataset, spareProcesses: number): TenantSupervisor {
  return new TenantSupervisor(benchHostConfig(dataset.dataDir, { spareProcesses }), {
    logger,
    stdio: 'stderr',
  });
}

/** Stops the tenant and times its next wake plus first request, `runs` times after the warm-up. */
async function coldStarts(
  supervisor: TenantSupervisor,
  dataset: Dataset,
  runs: number,
  first: FirstRequest = getDocument,
): Promise<ColdStart[]> {
  const results: ColdStart[] = [];
  for (let i = 0; i < WARMUP_RUNS + runs; i++) {
    await supervisor.stop(TENANT);
    await supervisor.sparesReady();
    const started = performance.now();
    const { socketPath } = await supervisor.wake(TENANT);
    const woken = performance.now();
    const client = new TenantClient(socketPath);
    const reply = await first(client, dataset, i);
    const answered = performance.now();
    await client.close();
    if (reply.status !== 200) throw new Error(`the first request answered ${reply.status}: ${reply.text}`);
    if (i < WARMUP_RUNS) continue;
    results.push({ totalMs: answered - started, wakeMs: woken - started, firstRequestMs: answered - woken });
    if (results.length % 20 === 0) log(`  ${results.length}/${runs}: last ${round1(answered - started)} ms`);
  }
  return results;
}

/** Wakes the tenant, serves a few GETs, lets it sit idle, then reads its RSS and its indexer's. */
async function idleRss(supervisor: TenantSupervisor, dataset: Dataset) {
  const { socketPath } = await supervisor.wake(TENANT);
  const client = new TenantClient(socketPath);
  for (let i = 0; i < 20; i++) await getDocument(client, dataset, i);
  await client.close();
  await sleep(IDLE_MS);
  const pid = supervisor.info(TENANT).pid!;
  const indexer = childrenOf(pid).reduce((sum, child) => sum + rssMb(child), 0);
  return { tenant: round1(rssMb(pid)), indexer: round1(indexer) };
}

log(`machine: ${os.cpus().length} × ${os.cpus()[0]?.model ?? '?'}, Node ${process.version}`);
const dataset = await ensureDataset(MEGABYTES, log);
log(`tenant processes run ${defaultTenantCommand().description}`);

log(`cold starts with a spare process (the default), ${RUNS} runs after ${WARMUP_RUNS} warm-up`);
const withSpare = startSupervisor(dataset, 1);
let spared: ColdStart[];
let queried: ColdStart[];
let rss: { tenant: number; indexer: number };
try {
  spared = await coldStarts(withSpare, dataset, RUNS);
  rss = await idleRss(withSpare, dataset);
  log(`cold starts with a spare process, the first request a query, ${QUERY_RUNS} runs`);
  queried = await coldStarts(withSpare, dataset, QUERY_RUNS, queryPackage);
} finally {
  await withSpare.shutdown();
}
const summary = (runs: ColdStart[], name: keyof ColdStart) =>
  `${name} p50 ${round1(
    percentile(
      runs.map((r) => r[name]),
      50,
    ),
  )} ms, p99 ${round1(
    percentile(
      runs.map((r) => r[name]),
      99,
    ),
  )} ms`;
for (const [label, runs] of [
  ['GET first', spared],
  ['query first', queried],
] as const)
  log(
    `${label}: ${(['totalMs', 'wakeMs', 'firstRequestMs'] as const).map((n) => summary(runs, n)).join('; ')}`,
  );
log(`idle RSS: tenant ${rss.tenant} MB, its indexer ${rss.indexer} MB`);

log(`cold starts without spares, ${NO_SPARE_RUNS} runs`);
const withoutSpare = startSupervisor(dataset, 0);
let bare: ColdStart[];
try {
  bare = await coldStarts(withoutSpare, dataset, NO_SPARE_RUNS);
} finally {
  await withoutSpare.shutdown();
}

const totals = spared.map((r) => r.totalMs);
console.log(
  JSON.stringify({
    bench: 'cold-start',
    tenant_mb: mb(dataset.bytes),
    documents: dataset.documents,
    runs: RUNS,
    cold_start_p50_ms: round1(percentile(totals, 50)),
    cold_start_p99_ms: round1(percentile(totals, 99)),
    wake_p50_ms: round1(
      percentile(
        spared.map((r) => r.wakeMs),
        50,
      ),
    ),
    first_get_p50_ms: round1(
      percentile(
        spared.map((r) => r.firstRequestMs),
        50,
      ),
    ),
    cold_start_query_p50_ms: round1(
      percentile(
        queried.map((r) => r.totalMs),
        50,
      ),
    ),
    cold_start_no_spare_p50_ms: round1(
      percentile(
        bare.map((r) => r.totalMs),
        50,
      ),
    ),
    idle_tenant_rss_mb: rss.tenant,
    idle_indexer_rss_mb: rss.indexer,
  }),
);
