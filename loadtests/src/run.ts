// One run of a scenario set, end to end: k6 installed, services built, a fresh
// Rookery started, the set's data and principals prepared, k6 run through the
// gateway with client certificates, then the report: a table on stdout, the
// k6 JSON summary, a chart and a summary file under loadtests/results/, and
// one JSON line last.
import fs from 'node:fs';
import path from 'node:path';
import { CpuSampler } from './cpu-sampler.js';
import { GatewayClient } from './gateway-client.js';
import { ensureK6, runK6 } from './k6.js';
import { k6Config, type Thresholds } from './k6-config.js';
import { loadProfile } from './load-profile.js';
import { log } from './log.js';
import type { RunOptions } from './options.js';
import { k6ScriptsDir, resultsDir } from './paths.js';
import type { Summary } from './report.js';
import { writeRunReport } from './run-report.js';
import type { Prepared, ScenarioSetDefinition } from './sets/types.js';
import { buildServices, startStack } from './stack.js';

/** CPU use is sampled this often: often enough to see a stall of a second or two. */
const CPU_SAMPLE_MS = 1000;
const TENANT = 'loadtest';

export type { Thresholds };

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
    let prepared: Prepared;
    try {
      await client.expect('PUT', '/admin/databases', { Name: set.database }, [201]);
      prepared = await set.prepare(stack, client, options);
    } finally {
      await client.close();
    }

    const configFile = path.join(dir, 'k6-config.json');
    const samplesFile = path.join(dir, 'k6-samples.json');
    const config = k6Config({
      stack,
      database: set.database,
      options,
      profile,
      prepared,
      thresholds,
      summaryFile: path.join(dir, 'k6-summary.json'),
    });
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
    const summary = await writeRunReport({ dir, samplesFile, options, profile, prepared, cpu: cpu.samples });
    return { summary, k6Exit, dir };
  } finally {
    await stack.stop();
  }
}
