// One run of a scenario set, end to end: k6 installed, services built, a fresh
// Rookery started, the set's data and principals prepared, k6 run through the
// gateway with client certificates, then the report: a table on stdout, the
// k6 JSON summary, a chart and a summary file under loadtests/results/, and
// one JSON line last.
import fs from 'node:fs';
import path from 'node:path';
import { chartHtml } from './chart.js';
import { averageCpu, CpuSampler } from './cpu-sampler.js';
import { GatewayClient } from './gateway-client.js';
import { ensureK6, runK6 } from './k6.js';
import { loadProfile } from './load-profile.js';
import { log } from './log.js';
import type { RunOptions } from './options.js';
import { k6ScriptsDir, resultsDir } from './paths.js';
import { formatTable, type RunShape, type Summary, summarise } from './report.js';
import { readSamples } from './samples.js';
import type { ScenarioSetDefinition } from './sets/types.js';
import { buildServices, startStack } from './stack.js';

/** CPU use is sampled this often: often enough to see a stall of a second or two. */
const CPU_SAMPLE_MS = 1000;
/** About this many points on the chart, whatever the run's length. */
const CHART_POINTS = 200;
const TENANT = 'loadtest';

/** Thresholds that fail the run (k6 exits 99): CI's smoke has them; measuring runs report instead. */
export interface Thresholds {
  /** p95 page time bound at full load, ms. */
  p95Ms: number;
}

export interface RunResult {
  summary: Summary;
  /** k6's exit code: 0, or 99 when a threshold failed. */
  k6Exit: number;
  dir: string;
}

export async function runScenarioSet(
  set: ScenarioSetDefinition,
  options: RunOptions,
  thresholds: Thresholds | null,
): Promise<RunResult> {
  const k6 = ensureK6();
  buildServices();
  const profile = loadProfile({
    users: options.users,
    durationMs: options.durationMs,
    warmupMs: options.warmupMs,
    step: options.step,
    rampShare: 1 / 3,
  });
  const stamp = new Date().toISOString().replace(/[:.]/g, '-').slice(0, 19);
  const dir = path.join(resultsDir, `${options.set}-${options.users}u-${stamp}`);
  fs.mkdirSync(dir, { recursive: true });

  const stack = await startStack({
    tenantId: TENANT,
    keepData: options.keepData,
    env: set.stackEnv?.(options) ?? {},
  });
  try {
    log(`Rookery is up at ${stack.url} (data in ${stack.dataDir})`);
    const client = new GatewayClient(stack.url, stack);
    let prepared: Awaited<ReturnType<ScenarioSetDefinition['prepare']>>;
    try {
      await client.expect('PUT', '/admin/databases', { Name: set.database }, [201]);
      prepared = await set.prepare(stack, client, options);
    } finally {
      await client.close();
    }

    const configFile = path.join(dir, 'k6-config.json');
    const summaryFile = path.join(dir, 'k6-summary.json');
    const samplesFile = path.join(dir, 'k6-samples.json');
    const k6Thresholds = thresholds
      ? {
          // Every page answered as expected, and p95 under a generous bound: a smoke test, not a benchmark.
          page_failed: ['rate==0'],
          'page_duration{phase:full}': [`p(95)<${thresholds.p95Ms}`],
        }
      : {};
    const config = {
      baseUrl: stack.url,
      port: stack.port,
      database: set.database,
      thinkMs: options.thinkMs,
      warmupMs: options.warmupMs,
      durationMs: options.durationMs,
      fullLoadAfterMs: profile.fullLoadAfterMs,
      summaryFile,
      tlsAuth: prepared.tlsAuth ?? { cert: stack.certFile, key: stack.keyFile },
      options: {
        scenarios: profile.scenarios,
        thresholds: k6Thresholds,
        // Fewer tags on every sample: the raw output stays smaller and k6 spends less on it.
        systemTags: ['scenario', 'status', 'name', 'expected_response'],
        summaryTrendStats: ['avg', 'min', 'med', 'p(95)', 'p(99)', 'max'],
        ...prepared.k6Options,
      },
      ...prepared.config,
    };
    fs.writeFileSync(configFile, `${JSON.stringify(config, null, 2)}\n`);
    log(
      `k6: ${options.users} users (${profile.startUsers} during a ${options.warmupMs / 1000} s warm-up, ` +
        `then +${options.step} per step over ${profile.fullLoadAfterMs / 1000} s, ` +
        `then ${profile.fullLoadMs / 1000} s at full load)`,
    );
    const cpu = new CpuSampler();
    cpu.start(CPU_SAMPLE_MS);
    const k6Exit = await runK6(k6, {
      script: path.join(k6ScriptsDir, set.script),
      configFile,
      caFile: stack.caFile,
      samplesFile,
    });
    cpu.stop();
    if (k6Exit !== 0 && k6Exit !== 99) throw new Error(`k6 exited with ${k6Exit}`);

    const shape: RunShape = {
      scenario: options.set,
      users: options.users,
      warmupMs: options.warmupMs,
      rampMs: profile.fullLoadAfterMs,
      fullMs: profile.fullLoadMs,
    };
    const totalMs = options.warmupMs + options.durationMs;
    const intervalMs = Math.max(1000, Math.ceil(totalMs / CHART_POINTS / 1000) * 1000);
    const samples = await readSamples(samplesFile, intervalMs);
    const origin = samples.startedAt ?? 0;
    // The reported phase: full load, or the step-up when a run has none (as in summarise).
    const phaseStart = origin + options.warmupMs + (shape.fullMs > 0 ? shape.rampMs : 0);
    const phaseEnd = origin + options.warmupMs + shape.rampMs + shape.fullMs;
    const cpuShare = cpu.samples.length > 0 ? averageCpu(cpu.samples, phaseStart, phaseEnd) : null;
    const summary = summarise(samples, shape, cpuShare);
    const table = formatTable(samples, shape, prepared.seedLine ?? null, cpuShare);
    const cpuPoints = cpu.samples
      .map((c) => ({ at: (c.at - origin) / 1000, ours: c.ours, others: c.others }))
      .filter((c) => c.at >= 0);
    const title = `Rookery load test: ${options.set}, ${options.users} users`;
    const subtitle =
      `${prepared.description}; ${options.warmupMs / 1000} s warm-up, step-up by ${options.step} over ` +
      `${profile.fullLoadAfterMs / 1000} s, ${profile.fullLoadMs / 1000} s at full load; ` +
      `mean think time ${options.thinkMs} ms; ${new Date().toISOString()}`;
    fs.writeFileSync(
      path.join(dir, 'chart.html'),
      chartHtml(title, subtitle, samples.intervals, intervalMs, cpuPoints),
    );
    fs.writeFileSync(
      path.join(dir, 'summary.txt'),
      `${title}\n${subtitle}\n\n${table}\n\n${JSON.stringify(summary)}\n`,
    );
    // The raw samples are large (a few hundred bytes per request): kept only when asked for.
    if (!options.keepData) fs.rmSync(samplesFile, { force: true });

    process.stdout.write(
      `\n${title}\n${subtitle}\n\n${table}\n\nresults: ${path.relative(process.cwd(), dir)}\n`,
    );
    process.stdout.write(`${JSON.stringify(summary)}\n`);
    return { summary, k6Exit, dir };
  } finally {
    await stack.stop();
  }
}
