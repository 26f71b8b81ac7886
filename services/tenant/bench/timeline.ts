// What bench/put-timeline.ts's marks say about the single writer during the measured PUTs (issue [13]):
// per group commit, how many PUTs it held, how long its statements and its COMMIT (with the WAL's fsync)
// held the event loop, and how long the loop then worked (CPU) and waited between two groups. The ceiling
// the loop allows is a group's PUTs over the loop time it costs: statements + COMMIT + settling the
// answers + the CPU between groups (parsing the next requests, writing answers) — what requests per second
// would be with requests always waiting, if nothing else changed.
import type { GroupMarks } from './put-timeline.js';

const round = (value: number, digits = 3) => Number(value.toFixed(digits));
const mean = (values: number[]) => values.reduce((a, b) => a + b, 0) / Math.max(1, values.length);
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(sorted.length * p))] ?? 0;
}

/** The last groups that hold `puts` writes (the measured ones: the warm-up came before). */
export function summarizeTimeline(marks: GroupMarks[], puts: number) {
  let units = 0;
  let first = marks.length;
  while (first > 0 && units < puts) units += marks[--first]!.units;
  const groups = marks.slice(first);
  const between = groups.slice(1).map((g, i) => ({
    wall: g.start - groups[i]!.end,
    cpu: (g.cpuStart - groups[i]!.cpuEnd) / 1000,
  }));
  const statements = groups.map((g) => g.commitStart - g.start);
  const commit = groups.map((g) => g.commitEnd - g.commitStart);
  const settle = groups.map((g) => g.end - g.commitEnd);
  const groupCpu = groups.map((g) => (g.cpuEnd - g.cpuStart) / 1000);
  const size = groups.map((g) => g.units);
  const span = groups.length > 0 ? groups.at(-1)!.end - groups[0]!.start : 0;
  const loopMs = mean(statements) + mean(commit) + mean(settle) + mean(between.map((b) => b.cpu));
  return {
    groups: groups.length,
    puts: units,
    per_s: round((units / span) * 1000, 0),
    group_puts: { mean: round(mean(size), 1), p50: percentile(size, 0.5), p90: percentile(size, 0.9) },
    /** ms the event loop spent per group, by phase (means; p50/p90 for the COMMIT). */
    ms: {
      statements: round(mean(statements)),
      commit: round(mean(commit)),
      commit_p50: round(percentile(commit, 0.5)),
      commit_p90: round(percentile(commit, 0.9)),
      commit_cpu_share: round(mean(groupCpu) / (mean(statements) + mean(commit) + mean(settle)), 2),
      settle: round(mean(settle)),
      between_cpu: round(mean(between.map((b) => b.cpu))),
      between_wall: round(mean(between.map((b) => b.wall))),
    },
    /** PUTs per second if every group cost only its loop time: group / (statements + commit + settle + between CPU). */
    ceiling_per_s: round((mean(size) / loopMs) * 1000, 0),
  };
}
