// What the engine's benchmarks share to report: a timestamped stderr line, rounding to µs, and p50/p99.

export const log = (message: string): void => {
  process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${message}\n`);
};

/** Milliseconds rounded to the microsecond. */
export const round = (n: number): number => Math.round(n * 1000) / 1000;

/** The value at percentile `p` of values sorted ascending (nearest rank, floor). */
export function percentile(sorted: readonly number[], p: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))] ?? 0;
}

export interface Latency {
  p50: number;
  p99: number;
}

/** p50 and p99 of `times` (ms, any order), logged under `name`. */
export function summary(name: string, times: readonly number[]): Latency {
  const sorted = [...times].sort((a, b) => a - b);
  const result = { p50: round(percentile(sorted, 50)), p99: round(percentile(sorted, 99)) };
  log(`${name}: p50 ${result.p50} ms, p99 ${result.p99} ms (${times.length} queries)`);
  return result;
}
