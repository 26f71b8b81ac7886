import { describe, expect, it } from 'vitest';
import { formatTable, mean, percentile, type RunShape, summarise } from './report.js';
import { SampleSet } from './samples.js';

const shape: RunShape = { scenario: 'nuget', users: 300, warmupMs: 10_000, rampMs: 10_000, fullMs: 20_000 };

function samples(): SampleSet {
  const set = new SampleSet(1000);
  const t0 = Date.parse('2026-11-23T10:00:00Z');
  for (let i = 0; i < 100; i++) {
    const tags = { phase: 'full', page: i % 2 ? 'listing-0' : 'search-common', test: 'browsing' };
    set.add('page_duration', t0 + i * 100, i + 1, tags);
    set.add('page_failed', t0 + i * 100, i === 7 ? 1 : 0, tags);
  }
  set.add('page_duration', t0, 1000, { phase: 'warmup', page: 'listing-0', test: 'browsing' });
  set.add('page_failed', t0, 1, { phase: 'warmup', page: 'listing-0', test: 'browsing' });
  set.add('tests', t0 + 5000, 1, { phase: 'full', test: 'browsing' });
  set.add('tests', t0 + 6000, 1, { phase: 'full', test: 'browsing' });
  set.add('vus', t0 + 2000, 300, {});
  return set;
}

describe('percentile and mean', () => {
  it('nearest rank, without changing the input', () => {
    const values = [5, 1, 4, 2, 3];
    expect(percentile(values, 0.5)).toBe(3);
    expect(percentile(values, 0.95)).toBe(5);
    expect(percentile(values, 0.2)).toBe(1);
    expect(values).toEqual([5, 1, 4, 2, 3]);
    expect(percentile([], 0.95)).toBe(0);
    expect(mean([1, 2, 3, 6])).toBe(3);
  });
});

describe('summarise', () => {
  it('reports the full-load phase, and failures of the whole run', () => {
    const summary = summarise(samples(), shape);
    expect(summary).toEqual({
      scenario: 'nuget',
      vus: 300,
      pages_per_s: 5, // 100 pages in 20 s
      avg_ms: 50.5,
      p95_ms: 95,
      failures: 2, // one at full load, one in the warm-up
      tests_per_s: 0.1,
      phase: 'full',
      measured_s: 20,
      cpu_ours: null,
      cpu_others: null,
    });
    expect(summarise(samples(), shape, { ours: 1.234, others: 0.456 })).toMatchObject({
      cpu_ours: 1.23,
      cpu_others: 0.46,
    });
  });

  it('the table has the phases, each page and each test', () => {
    const table = formatTable(samples(), shape, 'seed: 77 pages/s');
    expect(table).toContain('at 300 users (20 s)');
    expect(table).toMatch(/listing-0\s+50\s+2\.5\s+51\.00/);
    expect(table).toMatch(/browsing\s+2\s+0\.10/);
    expect(table.split('\n').at(-1)).toBe('seed: 77 pages/s');
    expect(formatTable(samples(), shape, null, { ours: 1.5, others: 0.25 })).toContain(
      "CPU at full load: this run's processes 1.50 cores, other processes on the machine 0.25 cores",
    );
  });
});

describe('SampleSet intervals', () => {
  it('buckets pages, failures and users by time', () => {
    const set = samples();
    expect(set.intervals.map((i) => i.pages).slice(0, 3)).toEqual([11, 10, 10]);
    expect(set.intervals[0]!.failures).toBe(2);
    expect(set.intervals[2]!.vus).toBe(300);
  });
});
