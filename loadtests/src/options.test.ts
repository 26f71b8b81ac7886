import { describe, expect, it } from 'vitest';
import { DEFAULTS, DurationSchema, parseRunOptions } from './options.js';

describe('parseRunOptions', () => {
  it('takes the set defaults sized for this machine', () => {
    const options = parseRunOptions(['nuget']);
    expect(options).toMatchObject({
      set: 'nuget',
      users: 300,
      durationMs: 120_000,
      warmupMs: 20_000,
      docs: 100_000,
    });
    expect(parseRunOptions(['smoke'])).toMatchObject({ users: 50, durationMs: 30_000, docs: 10_000 });
  });

  it('reads the flags of `pnpm loadtest nuget --users 3000 --duration 10m`', () => {
    const options = parseRunOptions([
      'nuget',
      '--users',
      '3000',
      '--duration',
      '10m',
      '--docs',
      '200000',
      '--keep-data',
    ]);
    expect(options).toMatchObject({ users: 3000, durationMs: 600_000, docs: 200_000, keepData: true });
    expect(options.warmupMs).toBe(DEFAULTS.nuget.warmupMs);
  });

  it('refuses unknown sets, flags and bad values with the usage', () => {
    expect(() => parseRunOptions(['browsing'])).toThrow(/Usage: pnpm loadtest/);
    expect(() => parseRunOptions([])).toThrow(/name one scenario set/);
    expect(() => parseRunOptions(['nuget', '--users', '-3'])).toThrow(/--users/);
    expect(() => parseRunOptions(['nuget', '--duration', '10 minutes'])).toThrow(
      /--duration: a duration like/,
    );
    expect(() => parseRunOptions(['nuget', '--vus', '3'])).toThrow(/vus/);
  });
});

describe('DurationSchema', () => {
  it('reads ms, s, m and h', () => {
    expect(DurationSchema.parse('500ms')).toBe(500);
    expect(DurationSchema.parse('30s')).toBe(30_000);
    expect(DurationSchema.parse('2m')).toBe(120_000);
    expect(DurationSchema.parse('1h')).toBe(3_600_000);
    expect(DurationSchema.safeParse('2.5m').success).toBe(false);
  });
});
