import { describe, expect, it } from 'vitest';
import { loadProfile } from './load-profile.js';

type Stage = { duration: string; target: number };
const seconds = (d: string) => Number(d.replace('s', ''));

describe('loadProfile', () => {
  it('warms up with the first step, steps up by `step` users, then holds every user', () => {
    const profile = loadProfile({
      users: 300,
      durationMs: 120_000,
      warmupMs: 20_000,
      step: 50,
      rampShare: 1 / 3,
    });
    expect(profile.scenarios['warmup']).toMatchObject({ executor: 'constant-vus', vus: 50, duration: '20s' });
    const main = profile.scenarios['main']!;
    expect(main).toMatchObject({ executor: 'ramping-vus', startTime: '20s', startVUs: 50 });
    const stages = main['stages'] as Stage[];
    const targets = [...new Set(stages.map((s) => s.target))];
    expect(targets).toEqual([100, 150, 200, 250, 300]);
    expect(stages.reduce((sum, s) => sum + seconds(s.duration), 0)).toBe(120);
    expect(profile.fullLoadAfterMs).toBe(40_000);
    expect(profile.fullLoadMs).toBe(80_000);
  });

  it('steps of 50 up to 3,000 users', () => {
    const profile = loadProfile({
      users: 3000,
      durationMs: 300_000,
      warmupMs: 20_000,
      step: 50,
      rampShare: 1 / 3,
    });
    const stages = profile.scenarios['main']!['stages'] as Stage[];
    const targets = [...new Set(stages.map((s) => s.target))];
    expect(targets).toHaveLength(59);
    expect(targets.at(-1)).toBe(3000);
    expect(stages.reduce((sum, s) => sum + seconds(s.duration), 0)).toBe(300);
    expect(profile.fullLoadAfterMs + profile.fullLoadMs).toBe(300_000);
  });

  it('no step-up when the users fit in one step; no warm-up scenario when there is none', () => {
    const profile = loadProfile({ users: 50, durationMs: 30_000, warmupMs: 0, step: 50, rampShare: 1 / 3 });
    expect(Object.keys(profile.scenarios)).toEqual(['main']);
    expect(profile.scenarios['main']!['stages']).toEqual([{ duration: '30s', target: 50 }]);
    expect(profile.fullLoadAfterMs).toBe(0);
  });

  it('refuses a duration too short for its steps', () => {
    expect(() =>
      loadProfile({ users: 3000, durationMs: 30_000, warmupMs: 0, step: 10, rampShare: 1 / 3 }),
    ).toThrow(/give a longer --duration/);
  });
});
