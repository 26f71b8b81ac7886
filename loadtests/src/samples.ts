// Reads k6's raw samples (`--out json`: one JSON object a line) and keeps what
// the report needs: every page time and failure by phase and page, the tests
// completed, and per-interval figures for the chart. Only the suite's own
// metrics (page_duration, page_failed, tests) and vus are parsed; k6's many
// http_* samples are skipped by a cheap text test before JSON.parse.
import fs from 'node:fs';
import { createInterface } from 'node:readline';
import { z } from 'zod';

export const PHASES = ['warmup', 'ramp', 'full'] as const;
export type Phase = (typeof PHASES)[number];

const PointSchema = z.object({
  type: z.literal('Point'),
  metric: z.string(),
  data: z.object({
    time: z.string(),
    value: z.number(),
    tags: z.record(z.string(), z.string()).nullish(),
  }),
});

export interface PageTimes {
  /** Page times in ms, in arrival order. */
  times: number[];
  failures: number;
}

export interface Interval {
  /** Seconds since the first sample. */
  at: number;
  pages: number;
  failures: number;
  times: number[];
  vus: number;
}

export class SampleSet {
  /** phase → page name → times and failures. */
  readonly pages = new Map<Phase, Map<string, PageTimes>>();
  /** phase → test name → tests completed. */
  readonly tests = new Map<Phase, Map<string, number>>();
  readonly intervals: Interval[] = [];
  private origin: number | null = null;

  constructor(readonly intervalMs: number) {}

  add(metric: string, timeMs: number, value: number, tags: Record<string, string>): void {
    this.origin ??= timeMs;
    const interval = this.intervalAt(timeMs);
    if (metric === 'vus') {
      interval.vus = Math.max(interval.vus, value);
      return;
    }
    const phase = PHASES.find((p) => p === tags['phase']);
    if (!phase) return;
    if (metric === 'tests') {
      const byTest = mapOf(this.tests, phase, () => new Map<string, number>());
      const test = tags['test'] ?? '?';
      byTest.set(test, (byTest.get(test) ?? 0) + value);
      return;
    }
    const byPage = mapOf(this.pages, phase, () => new Map<string, PageTimes>());
    const page = mapOf(byPage, tags['page'] ?? '?', () => ({ times: [], failures: 0 }));
    if (metric === 'page_duration') {
      page.times.push(value);
      interval.pages++;
      interval.times.push(value);
    } else if (metric === 'page_failed' && value !== 0) {
      page.failures++;
      interval.failures++;
    }
  }

  /** Epoch ms of the first sample (about when k6 started its first scenario), or null before any. */
  get startedAt(): number | null {
    return this.origin;
  }

  private intervalAt(timeMs: number): Interval {
    const index = Math.max(0, Math.floor((timeMs - this.origin!) / this.intervalMs));
    while (this.intervals.length <= index) {
      this.intervals.push({
        at: (this.intervals.length * this.intervalMs) / 1000,
        pages: 0,
        failures: 0,
        times: [],
        vus: 0,
      });
    }
    return this.intervals[index]!;
  }
}

const WANTED = ['"metric":"page_duration"', '"metric":"page_failed"', '"metric":"tests"', '"metric":"vus"'];

/** Reads a k6 `--out json` file. */
export async function readSamples(file: string, intervalMs: number): Promise<SampleSet> {
  const set = new SampleSet(intervalMs);
  const lines = createInterface({ input: fs.createReadStream(file), crlfDelay: Number.POSITIVE_INFINITY });
  for await (const line of lines) {
    if (!WANTED.some((w) => line.includes(w))) continue;
    const point = PointSchema.safeParse(JSON.parse(line));
    if (!point.success) continue; // a metric definition line
    const { data, metric } = point.data;
    set.add(metric, Date.parse(data.time), data.value, data.tags ?? {});
  }
  return set;
}

function mapOf<K, V>(map: Map<K, V>, key: K, make: () => V): V {
  let value = map.get(key);
  if (value === undefined) {
    value = make();
    map.set(key, value);
  }
  return value;
}
