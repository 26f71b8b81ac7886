// After k6: the raw samples read into the summary, the table, the chart and
// summary.txt in the run's results directory, the table on stdout and the
// JSON line last.
import fs from 'node:fs';
import path from 'node:path';
import { chartHtml } from './chart.js';
import { averageCpu, type CpuSample } from './cpu-sampler.js';
import type { LoadProfile } from './load-profile.js';
import type { RunOptions } from './options.js';
import { formatTable, type RunShape, type Summary, summarise } from './report.js';
import { readSamples } from './samples.js';
import type { Prepared } from './sets/types.js';

/** About this many points on the chart, whatever the run's length. */
const CHART_POINTS = 200;

export interface RunReportInput {
  dir: string;
  samplesFile: string;
  options: RunOptions;
  profile: LoadProfile;
  prepared: Prepared;
  cpu: readonly CpuSample[];
}

export async function writeRunReport(input: RunReportInput): Promise<Summary> {
  const { dir, options, profile, prepared } = input;
  const shape: RunShape = {
    scenario: options.set,
    users: options.users,
    warmupMs: options.warmupMs,
    rampMs: profile.fullLoadAfterMs,
    fullMs: profile.fullLoadMs,
  };
  const totalMs = options.warmupMs + options.durationMs;
  const intervalMs = Math.max(1000, Math.ceil(totalMs / CHART_POINTS / 1000) * 1000);
  const samples = await readSamples(input.samplesFile, intervalMs);
  const origin = samples.startedAt ?? 0;
  // The reported phase: full load, or the step-up when a run has none (as in summarise).
  const phaseStart = origin + options.warmupMs + (shape.fullMs > 0 ? shape.rampMs : 0);
  const phaseEnd = origin + options.warmupMs + shape.rampMs + shape.fullMs;
  const cpuShare = input.cpu.length > 0 ? averageCpu(input.cpu, phaseStart, phaseEnd) : null;
  const summary = summarise(samples, shape, cpuShare);
  const table = formatTable(samples, shape, prepared.seedLine ?? null, cpuShare);
  const cpuPoints = input.cpu
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
  if (!options.keepData) fs.rmSync(input.samplesFile, { force: true });

  process.stdout.write(
    `\n${title}\n${subtitle}\n\n${table}\n\nresults: ${path.relative(process.cwd(), dir)}\n`,
  );
  process.stdout.write(`${JSON.stringify(summary)}\n`);
  return summary;
}
