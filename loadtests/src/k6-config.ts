// The config file the k6 scripts read (k6/lib.js `config`): where the gateway
// is, the client certificate, the load profile's scenarios, thresholds, and
// whatever the scenario set prepared (queries, terms, tenants, codes).
import type { LoadProfile } from './load-profile.js';
import type { RunOptions } from './options.js';
import type { Prepared } from './sets/types.js';
import type { RookeryStack } from './stack.js';

/** Thresholds that fail the run (k6 exits 99): CI's smoke has them; measuring runs report instead. */
export interface Thresholds {
  /** p95 page time bound at full load, ms. */
  p95Ms: number;
}

export interface K6ConfigInput {
  stack: RookeryStack;
  database: string;
  options: RunOptions;
  profile: LoadProfile;
  prepared: Prepared;
  thresholds: Thresholds | null;
  summaryFile: string;
}

export function k6Config(input: K6ConfigInput): Record<string, unknown> {
  const { stack, options, profile, prepared, thresholds } = input;
  return {
    baseUrl: stack.url,
    port: stack.port,
    database: input.database,
    thinkMs: options.thinkMs,
    warmupMs: options.warmupMs,
    durationMs: options.durationMs,
    fullLoadAfterMs: profile.fullLoadAfterMs,
    summaryFile: input.summaryFile,
    tlsAuth: prepared.tlsAuth ?? { cert: stack.certFile, key: stack.keyFile },
    options: {
      scenarios: profile.scenarios,
      thresholds: thresholds
        ? {
            // Every page answered as expected, and p95 under a generous bound: a smoke test, not a benchmark.
            page_failed: ['rate==0'],
            'page_duration{phase:full}': [`p(95)<${thresholds.p95Ms}`],
          }
        : {},
      // Fewer tags on every sample: the raw output stays smaller and k6 spends less on it.
      systemTags: ['scenario', 'status', 'name', 'expected_response'],
      summaryTrendStats: ['avg', 'min', 'med', 'p(95)', 'p(99)', 'max'],
      ...prepared.k6Options,
    },
    ...prepared.config,
  };
}
