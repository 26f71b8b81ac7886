// What a new index over a large database costs the host (issue [10]): CPU seconds of the tenant's
// processes — the tenant and its indexer, read from /proc/<pid>/stat — from the index's PUT until every
// index answers non-stale, when it is built beside the tenant vs by the worker fleet. Real parts: the
// host's supervisor starts the real tenant process (with its indexer), the host's IndexBuildQueue puts the
// job on a real SQLite queue, a real worker process (services/worker's main) builds it from the mirror.
// Used by services/worker/bench/restore-indexes.ts (pnpm bench:restore-indexes).
import type { ChildProcess } from 'node:child_process';
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { fileURLToPath } from 'node:url';
import { Database } from '@rookery/engine';
import { jobQueueFile, openSqliteJobQueue } from '@rookery/jobs';
import { type IndexDefinition, ROOKERY_JOB_TYPES } from '@rookery/protocol';
import { spawnTs, untilReady, waitForExit } from '@rookery/testkit';
import pino from 'pino';
import { loadHostConfig } from '../src/config.js';
import { IndexBuildQueue } from '../src/index-builds.js';
import { TenantSupervisor } from '../src/supervisor.js';
import { sourceTenantCommand } from '../src/tenant-command.js';
import { childrenOf } from '../src/test-fixtures/proc.js';
import { TenantClient } from '../src/test-fixtures/tenant-client.js';

const WORKER_MAIN = fileURLToPath(new URL('../../worker/src/main.ts', import.meta.url));
const TENANT = 'bench';
const DATABASE = 'nuget';
const IDLE_MS = 20_000;
const CLOCK_TICKS = Number(execFileSync('getconf', ['CLK_TCK'], { encoding: 'utf8' }).trim()) || 100;

export interface NewIndexCpuOptions {
  /** Where this measure's directories go (removed by the caller). */
  directory: string;
  documents: readonly { id: string }[];
  definitions: readonly IndexDefinition[];
  log: (line: Record<string, unknown>) => void;
}

export interface NewIndexCpu {
  host_cpu_s_new_index_local: number;
  host_cpu_s_new_index_worker: number;
  new_index_ms_local: number;
  new_index_ms_worker: number;
  /** The same processes' CPU per second of wall time with nothing to do, after the worker run (their floor). */
  host_cpu_ms_per_s_idle: number;
}

/** user + system CPU seconds of `pid` and its descendants now (0 for one that is gone). */
function cpuSecondsOfTree(pid: number): number {
  let ticks = 0;
  const pending = [pid];
  while (pending.length > 0) {
    const next = pending.pop()!;
    try {
      const stat = fs.readFileSync(`/proc/${next}/stat`, 'utf8');
      // Fields after the command name: state is field 3, utime 14 and stime 15 (1-based, man 5 proc).
      const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
      ticks += Number(fields[11]) + Number(fields[12]);
    } catch {
      continue; // exited meanwhile
    }
    pending.push(...childrenOf(next));
  }
  return ticks / CLOCK_TICKS;
}

/** A mirrored database with the documents, made before any tenant process runs (not measured). */
async function prepareDatabase(dataDir: string, mirror: string, documents: NewIndexCpuOptions['documents']) {
  const db = Database.create(path.join(dataDir, 'tenants', TENANT, 'databases', DATABASE), DATABASE, {
    mirror: { directory: path.join(mirror, TENANT, DATABASE), mode: 'async' },
  });
  const CHUNK = 5_000;
  for (let i = 0; i < documents.length; i += CHUNK) {
    await db.insertMany(
      documents
        .slice(i, i + CHUNK)
        .map(({ id, ...body }) => ({ Id: id, Document: body as Record<string, unknown> })),
    );
  }
  await db.mirror!.flushed();
  await db.close();
}

async function startWorker(dataDir: string, mirror: string): Promise<ChildProcess> {
  const child = spawnTs(WORKER_MAIN, [], {
    ROOKERY_DATA: dataDir,
    ROOKERY_MIRROR: mirror,
    ROOKERY_MASTER_KEY_FILE: path.join(dataDir, 'master.key'),
    ROOKERY_WORKER_PORT: '0',
    ROOKERY_WORKER_POLL_MS: '200',
    // Both indexes at once, as a fleet of two workers (or one with two slots) would build them.
    ROOKERY_WORKER_CONCURRENCY: '2',
    ROOKERY_WORKER_TENANT_CONCURRENCY: '2',
    ROOKERY_BACKUP_EVERY_MINUTES: '0',
    ROOKERY_SWEEP_EVERY_MINUTES: '0',
    ROOKERY_LOG_LEVEL: 'warn',
  });
  child.stdout?.resume();
  await untilReady(child, 'the worker');
  return child;
}

/** One run: the tenant started by a supervisor, the indexes put, CPU counted until every one is non-stale. */
async function measure(
  options: NewIndexCpuOptions,
  mode: 'local' | 'worker',
): Promise<{ cpuS: number; ms: number; idleMsPerS: number }> {
  const dataDir = path.join(options.directory, mode);
  const mirror = path.join(dataDir, 'mirror');
  await prepareDatabase(dataDir, mirror, options.documents);
  const logger = pino({ level: 'warn' });
  const queue =
    mode === 'worker'
      ? await openSqliteJobQueue({ file: jobQueueFile(dataDir), types: ROOKERY_JOB_TYPES })
      : null;
  const indexBuilds = queue && new IndexBuildQueue(queue, 1_000, logger);
  const worker = queue ? await startWorker(dataDir, mirror) : null;
  const supervisor = new TenantSupervisor(
    loadHostConfig(
      {},
      {
        dataDir,
        internalToken: 'bench-token-0123456789',
        tenantLogLevel: 'warn',
        spareProcesses: 0,
        idleStopMs: 0,
        startDeadlineMs: 120_000,
        // No cgroup limit: the same room for both runs, whatever the machine allows.
        tenantCpus: 0,
        tenantMemoryMb: 0,
      },
    ),
    {
      logger,
      command: () => sourceTenantCommand(),
      stdio: 'stderr',
      env: { ...process.env, ROOKERY_MIRROR: mirror, ROOKERY_MIRROR_MODE: 'async' },
      ...(indexBuilds && { indexBuilds }),
    },
  );
  const woken = await supervisor.wake(TENANT);
  const tenant = new TenantClient(woken.socketPath);
  try {
    // Starts the database's indexing (the indexer process opens it) before the clock starts.
    const first = await tenant.call('GET', `/databases/${DATABASE}/indexes`);
    if (first.status !== 200) throw new Error(`the tenant answered ${first.status}: ${first.text}`);
    const pid = supervisor.info(TENANT).pid!;
    const cpuBefore = cpuSecondsOfTree(pid);
    const started = performance.now();
    for (const definition of options.definitions) {
      const put = await tenant.call('PUT', `/databases/${DATABASE}/indexes`, definition);
      if (put.status !== 201) throw new Error(`PUT index answered ${put.status}: ${put.text}`);
    }
    for (const definition of options.definitions) {
      // One waiting query per index (not a polling loop, which would cost the tenant CPU of its own).
      const answer = await tenant.call('POST', `/databases/${DATABASE}/queries`, {
        Query: `from index '${definition.Name}' limit 1`,
        WaitForNonStaleResults: true,
        WaitForNonStaleResultsTimeoutMs: 600_000,
      });
      if (answer.status !== 200 || answer.json.IsStale !== false)
        throw new Error(
          `the query on ${definition.Name} answered ${answer.status}: ${answer.text.slice(0, 300)}`,
        );
    }
    const ms = performance.now() - started;
    const cpuS = cpuSecondsOfTree(pid) - cpuBefore;
    const jobs = queue ? await queue.list({ type: 'index-build' }) : [];
    options.log({
      stage: `new indexes built (${mode})`,
      ms: Math.round(ms),
      host_cpu_s: Math.round(cpuS * 100) / 100,
      jobs: jobs.map((j) => j.state),
    });
    if (
      mode === 'worker' &&
      jobs.filter((j) => j.state === 'completed').length !== options.definitions.length
    )
      throw new Error('the worker did not build the indexes');
    if (mode === 'local' && jobs.length > 0) throw new Error('a local build enqueued jobs');
    // The floor: what the tenant and its indexer cost doing nothing (heartbeats, the indexer's look at
    // each database every second, the mirror's fencing check), over IDLE_MS.
    const idleBefore = cpuSecondsOfTree(pid);
    await sleep(IDLE_MS);
    const idleMsPerS = ((cpuSecondsOfTree(pid) - idleBefore) * 1000) / (IDLE_MS / 1000);
    return { cpuS, ms, idleMsPerS };
  } finally {
    await tenant.close();
    await supervisor.shutdown(10_000);
    indexBuilds?.close();
    if (worker) {
      worker.kill('SIGTERM');
      await waitForExit(worker);
    }
    await queue?.close();
  }
}

export async function measureNewIndexHostCpu(options: NewIndexCpuOptions): Promise<NewIndexCpu> {
  const local = await measure(options, 'local');
  const worker = await measure(options, 'worker');
  return {
    host_cpu_s_new_index_local: Math.round(local.cpuS * 100) / 100,
    host_cpu_s_new_index_worker: Math.round(worker.cpuS * 100) / 100,
    new_index_ms_local: Math.round(local.ms),
    new_index_ms_worker: Math.round(worker.ms),
    host_cpu_ms_per_s_idle: Math.round(worker.idleMsPerS * 10) / 10,
  };
}
