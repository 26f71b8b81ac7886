// `pnpm loadtest <set> [--users N] [--duration 2m] …`: the command line, read
// with node:util's parseArgs and validated with zod, with defaults sized for a
// 2-core machine that runs the server and k6 together.
import { parseArgs } from 'node:util';
import { z } from 'zod';

export const SCENARIO_SETS = ['nuget', 'smoke', 'writes', 'cold-start', 'auth'] as const;
export type ScenarioSet = (typeof SCENARIO_SETS)[number];

/** `30s`, `2m`, `1h`, `500ms` → milliseconds. */
export const DurationSchema = z
  .string()
  .regex(/^\d+(ms|s|m|h)$/, 'a duration like 30s, 2m or 1h')
  .transform((text) => {
    const [, amount, unit] = /^(\d+)(ms|s|m|h)$/.exec(text)!;
    const factor = { ms: 1, s: 1000, m: 60_000, h: 3_600_000 }[unit as 'ms' | 's' | 'm' | 'h'];
    return Number(amount) * factor;
  });

const count = (min: number, max: number) => z.coerce.number().int().min(min).max(max);

const FlagsSchema = z
  .object({
    users: count(1, 20_000).optional(),
    duration: DurationSchema.optional(),
    warmup: DurationSchema.optional(),
    /** Mean think time between pages. */
    think: DurationSchema.optional(),
    /** Users added per step of the step-up. */
    step: count(1, 10_000).optional(),
    /** Package versions in the NuGet dataset. */
    docs: count(100, 2_000_000).optional(),
    seed: z.coerce.number().int().optional(),
    /** Tenants for cold-start. */
    tenants: count(1, 2_000).optional(),
    'keep-data': z.boolean().optional(),
  })
  .strict();

export interface RunOptions {
  set: ScenarioSet;
  users: number;
  durationMs: number;
  warmupMs: number;
  thinkMs: number;
  step: number;
  docs: number;
  seed: number;
  tenants: number;
  keepData: boolean;
}

type Defaults = Omit<RunOptions, 'set' | 'keepData'>;

const NUGET: Defaults = {
  users: 300,
  durationMs: 120_000,
  warmupMs: 20_000,
  // 3.9 s between pages per user: the seed's 77 pages/s for 300 users and 741 for 3,000 both come to ~4 s per page.
  thinkMs: 3_900,
  step: 50,
  docs: 100_000,
  seed: 1,
  tenants: 0,
};

/** Per set: what `pnpm loadtest <set>` runs without flags. */
export const DEFAULTS: Record<ScenarioSet, Defaults> = {
  nuget: NUGET,
  // CI: 30 s with 50 users on 10,000 documents; a short warm-up, the same pages.
  smoke: { ...NUGET, users: 50, durationMs: 30_000, warmupMs: 5_000, docs: 10_000 },
  // Writers save as soon as the last save is acknowledged, with a short pause: write pressure, not browsing.
  writes: { ...NUGET, users: 100, durationMs: 60_000, warmupMs: 5_000, thinkMs: 100, step: 100, docs: 0 },
  'cold-start': {
    ...NUGET,
    users: 20,
    durationMs: 60_000,
    warmupMs: 0,
    thinkMs: 500,
    step: 20,
    docs: 0,
    tenants: 200,
  },
  auth: { ...NUGET, users: 50, durationMs: 60_000, warmupMs: 5_000, thinkMs: 200, step: 50, docs: 0 },
};

export const USAGE = `Usage: pnpm loadtest <${SCENARIO_SETS.join('|')}> [--users N] [--duration 2m] [--warmup 20s]
  [--think 3900ms] [--step 50] [--docs 100000] [--seed 1] [--tenants 200] [--keep-data]`;

export function parseRunOptions(argv: readonly string[]): RunOptions {
  const { values, positionals } = parseArgs({
    args: [...argv],
    allowPositionals: true,
    strict: true,
    options: {
      users: { type: 'string' },
      duration: { type: 'string' },
      warmup: { type: 'string' },
      think: { type: 'string' },
      step: { type: 'string' },
      docs: { type: 'string' },
      seed: { type: 'string' },
      tenants: { type: 'string' },
      'keep-data': { type: 'boolean' },
    },
  });
  const set = z.enum(SCENARIO_SETS).safeParse(positionals[0]);
  if (!set.success || positionals.length !== 1) {
    throw new Error(`name one scenario set.\n${USAGE}`);
  }
  const flags = FlagsSchema.safeParse(values);
  if (!flags.success) {
    const problems = flags.error.issues.map((i) => `--${i.path.join('.')}: ${i.message}`);
    throw new Error(`${problems.join('; ')}\n${USAGE}`);
  }
  const defaults = DEFAULTS[set.data];
  const f = flags.data;
  return {
    set: set.data,
    users: f.users ?? defaults.users,
    durationMs: f.duration ?? defaults.durationMs,
    warmupMs: f.warmup ?? defaults.warmupMs,
    thinkMs: f.think ?? defaults.thinkMs,
    step: f.step ?? defaults.step,
    docs: f.docs ?? defaults.docs,
    seed: f.seed ?? defaults.seed,
    tenants: f.tenants ?? defaults.tenants,
    keepData: f['keep-data'] ?? false,
  };
}
