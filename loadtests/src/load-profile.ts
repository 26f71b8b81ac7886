// How many virtual users run when: a warm-up (results kept apart), then a
// step-up in steps of `step` users (as the seed's 3,000-user run stepped up by
// 50), then every user at once until the end. Pure: k6 scenario objects out.

export interface LoadProfileInput {
  users: number;
  /** The measured part, after the warm-up: ramp + full load. */
  durationMs: number;
  warmupMs: number;
  /** Users added per step. */
  step: number;
  /** Share of the duration spent stepping up (the rest runs at full load). */
  rampShare: number;
  /** The k6 function the scenarios run (`default` unless a script has several). */
  exec?: string;
}

export interface LoadProfile {
  /** k6 `scenarios`: `warmup` (if any) and `main`. */
  scenarios: Record<string, Record<string, unknown>>;
  /** Milliseconds after `main` starts when every user runs: the start of the `full` phase. */
  fullLoadAfterMs: number;
  /** Length of the `full` phase. */
  fullLoadMs: number;
  startUsers: number;
}

const seconds = (ms: number) => `${Math.max(0, Math.round(ms / 1000))}s`;

export function loadProfile(input: LoadProfileInput): LoadProfile {
  const { users, durationMs, warmupMs, step } = input;
  const startUsers = Math.min(users, step);
  const steps = Math.ceil((users - startUsers) / step);
  // Whole seconds per step: k6 stages take durations, and a step of under a second is no step.
  const stepMs =
    steps === 0 ? 0 : Math.max(1000, Math.floor((durationMs * input.rampShare) / steps / 1000) * 1000);
  const rampMs = steps * stepMs;
  if (rampMs >= durationMs) {
    throw new Error(
      `${steps} steps of ${step} users need at least ${seconds(rampMs)}; give a longer --duration than ${seconds(durationMs)}`,
    );
  }
  const stages: { duration: string; target: number }[] = [];
  for (let i = 1; i <= steps; i++) {
    const target = Math.min(users, startUsers + i * step);
    // Up within a second, then held: steps, not a slope.
    stages.push({ duration: '1s', target }, { duration: seconds(stepMs - 1000), target });
  }
  stages.push({ duration: seconds(durationMs - rampMs), target: users });
  const exec = input.exec ? { exec: input.exec } : {};
  const scenarios: Record<string, Record<string, unknown>> = {};
  if (warmupMs > 0) {
    scenarios['warmup'] = {
      executor: 'constant-vus',
      vus: startUsers,
      duration: seconds(warmupMs),
      // Warm-up users stop by themselves after the page they are on (think() in k6/lib.js).
      gracefulStop: '30s',
      ...exec,
    };
  }
  scenarios['main'] = {
    executor: 'ramping-vus',
    startTime: seconds(warmupMs),
    startVUs: startUsers,
    stages: stages.filter((s) => s.duration !== '0s'),
    gracefulRampDown: '0s',
    // Users stop by themselves once the duration is over (think() in k6/lib.js); this only bounds a last slow page.
    gracefulStop: '30s',
    ...exec,
  };
  return { scenarios, fullLoadAfterMs: rampMs, fullLoadMs: durationMs - rampMs, startUsers };
}
