// The summary of a run, in the shape of the seed's published figures (tests/s,
// pages/s, average page time, failures) with p95 beside the average: a table
// for people, and one JSON object for scripts as the last line of stdout.
import { PHASES, type Phase, type SampleSet } from './samples.js';

export interface RunShape {
  scenario: string;
  users: number;
  warmupMs: number;
  /** Ramp (step-up) length, then full load: together the measured duration. */
  rampMs: number;
  fullMs: number;
}

export interface Figures {
  pages: number;
  tests: number;
  failures: number;
  avgMs: number;
  p95Ms: number;
  seconds: number;
}

export interface Summary {
  scenario: string;
  vus: number;
  pages_per_s: number;
  avg_ms: number;
  p95_ms: number;
  /** Failed pages in the whole run, warm-up included. */
  failures: number;
  tests_per_s: number;
  /** The phase the rates and times are of: `full` (every user running), or `ramp` when a run has no full phase. */
  phase: Phase;
  measured_s: number;
  /** Cores used during that phase by this run's processes and by everything else (null: not measured). */
  cpu_ours: number | null;
  cpu_others: number | null;
}

/** Average CPU during the reported phase, in cores. */
export interface CpuShare {
  ours: number;
  others: number;
}

/** Nearest-rank percentile of unsorted values (sorted here; the input is not changed). */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return 0;
  const sorted = Float64Array.from(values).sort();
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil(p * sorted.length) - 1))]!;
}

export function mean(values: readonly number[]): number {
  if (values.length === 0) return 0;
  let sum = 0;
  for (const v of values) sum += v;
  return sum / values.length;
}

const round = (n: number, digits = 1) => Math.round(n * 10 ** digits) / 10 ** digits;

function phaseSeconds(shape: RunShape, phase: Phase): number {
  return { warmup: shape.warmupMs, ramp: shape.rampMs, full: shape.fullMs }[phase] / 1000;
}

/** Figures over one or more phases, optionally one page only. */
export function figuresOf(
  samples: SampleSet,
  shape: RunShape,
  phases: readonly Phase[],
  page?: string,
): Figures {
  const times: number[] = [];
  let failures = 0;
  let tests = 0;
  for (const phase of phases) {
    for (const [name, entry] of samples.pages.get(phase) ?? []) {
      if (page !== undefined && name !== page) continue;
      for (const t of entry.times) times.push(t);
      failures += entry.failures;
    }
    for (const count of samples.tests.get(phase)?.values() ?? []) tests += count;
  }
  return {
    pages: times.length,
    tests,
    failures,
    avgMs: mean(times),
    p95Ms: percentile(times, 0.95),
    seconds: phases.reduce((sum, p) => sum + phaseSeconds(shape, p), 0),
  };
}

export function summarise(samples: SampleSet, shape: RunShape, cpu: CpuShare | null = null): Summary {
  const phase: Phase = shape.fullMs > 0 ? 'full' : 'ramp';
  const f = figuresOf(samples, shape, [phase]);
  const all = figuresOf(samples, shape, PHASES);
  return {
    scenario: shape.scenario,
    vus: shape.users,
    pages_per_s: round(f.pages / f.seconds),
    avg_ms: round(f.avgMs, 2),
    p95_ms: round(f.p95Ms, 2),
    failures: all.failures,
    tests_per_s: round(f.tests / f.seconds, 2),
    phase,
    measured_s: f.seconds,
    cpu_ours: cpu ? round(cpu.ours, 2) : null,
    cpu_others: cpu ? round(cpu.others, 2) : null,
  };
}

const pad = (text: string, width: number) => text.padStart(width);
const fmt = (n: number, digits = 1) =>
  n.toLocaleString('en', { maximumFractionDigits: digits, minimumFractionDigits: digits });

function row(label: string, cells: string[]): string {
  return label.padEnd(28) + cells.map((c) => pad(c, 10)).join('');
}

/** The table printed after a run. */
export function formatTable(
  samples: SampleSet,
  shape: RunShape,
  seedLine: string | null,
  cpu: CpuShare | null = null,
): string {
  const lines: string[] = [];
  const header = row('', ['tests/s', 'pages/s', 'avg ms', 'p95 ms', 'failures']);
  const phaseRow = (label: string, phases: readonly Phase[]) => {
    const f = figuresOf(samples, shape, phases);
    if (f.seconds === 0) return;
    lines.push(
      row(label, [
        fmt(f.tests / f.seconds, 2),
        fmt(f.pages / f.seconds),
        fmt(f.avgMs, 2),
        fmt(f.p95Ms, 2),
        String(f.failures),
      ]),
    );
  };
  lines.push(header);
  phaseRow(`at ${shape.users} users (${shape.fullMs / 1000} s)`, ['full']);
  phaseRow(`step-up (${shape.rampMs / 1000} s)`, ['ramp']);
  phaseRow(`measured (${(shape.rampMs + shape.fullMs) / 1000} s)`, ['ramp', 'full']);
  phaseRow(`warm-up (${shape.warmupMs / 1000} s, not measured)`, ['warmup']);

  const phase: Phase = shape.fullMs > 0 ? 'full' : 'ramp';
  const pageNames = [...(samples.pages.get(phase)?.keys() ?? [])].sort();
  if (pageNames.length > 0) {
    lines.push(
      '',
      row(`page (${phase === 'full' ? 'at full load' : 'step-up'})`, [
        'pages',
        'pages/s',
        'avg ms',
        'p95 ms',
        'failures',
      ]),
    );
    for (const name of pageNames) {
      const f = figuresOf(samples, shape, [phase], name);
      lines.push(
        row(`  ${name}`, [
          String(f.pages),
          fmt(f.pages / f.seconds),
          fmt(f.avgMs, 2),
          fmt(f.p95Ms, 2),
          String(f.failures),
        ]),
      );
    }
  }
  const tests = samples.tests.get(phase);
  if (tests && tests.size > 0) {
    lines.push('', row('test', ['tests', 'tests/s']));
    const seconds = phaseSeconds(shape, phase);
    for (const [name, count] of [...tests.entries()].sort()) {
      lines.push(row(`  ${name}`, [String(count), fmt(count / seconds, 2)]));
    }
  }
  if (cpu) {
    lines.push(
      '',
      `CPU ${phase === 'full' ? 'at full load' : 'during the step-up'}: this run's processes ${fmt(cpu.ours, 2)} cores, ` +
        `other processes on the machine ${fmt(cpu.others, 2)} cores`,
    );
  }
  if (seedLine) lines.push('', seedLine);
  return lines.join('\n');
}
