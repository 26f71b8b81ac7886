import { describe, expect, it } from 'vitest';
import { averageCpu, CpuSampler, parseMachineTicks, parseProcessStat } from './cpu-sampler.js';

describe('parseMachineTicks', () => {
  it('counts busy ticks: everything but idle and iowait', () => {
    const stat = 'cpu  100 5 50 1000 20 3 2 1 0 0\ncpu0 50 2 25 500 10 1 1 0 0 0\n';
    expect(parseMachineTicks(stat)).toBe(100 + 5 + 50 + 3 + 2 + 1);
  });
});

describe('parseProcessStat', () => {
  it('reads ppid, utime and stime after a name with spaces and parentheses', () => {
    const stat = '4242 (node (tenant) x) S 4000 4242 4242 0 -1 4194304 100 0 0 0 250 70 0 0 20 0 11 0';
    expect(parseProcessStat(stat)).toEqual({ ppid: 4000, ticks: 320 });
    expect(parseProcessStat('garbage')).toBeNull();
  });
});

describe('averageCpu', () => {
  it('averages the samples inside the window only', () => {
    const samples = [1000, 2000, 3000, 4000].map((at, i) => ({ at, ours: i, others: 2 * i }));
    expect(averageCpu(samples, 1000, 3000)).toEqual({ ours: 1.5, others: 3 });
    expect(averageCpu(samples, 5000, 6000)).toEqual({ ours: 0, others: 0 });
  });
});

describe('CpuSampler', () => {
  it('sees this process using a core while it spins', async () => {
    const sampler = new CpuSampler();
    sampler.start(200);
    const until = Date.now() + 700;
    while (Date.now() < until) {
      // spin: this process is the sampler's tree
    }
    await new Promise((resolve) => setTimeout(resolve, 250));
    sampler.stop();
    expect(sampler.samples.length).toBeGreaterThan(0);
    expect(Math.max(...sampler.samples.map((s) => s.ours))).toBeGreaterThan(0);
  });
});
