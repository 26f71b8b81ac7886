// `pnpm loadtest <set> [flags]`: see options.ts for the flags and README.md for the sets.
import { log } from './log.js';
import { parseRunOptions, type ScenarioSet } from './options.js';
import { runScenarioSet, type Thresholds } from './run.js';
import { authSet } from './sets/auth.js';
import { coldStartSet } from './sets/cold-start.js';
import { nugetSet } from './sets/nuget.js';
import type { ScenarioSetDefinition } from './sets/types.js';
import { writesSet } from './sets/writes.js';

const SETS: Record<ScenarioSet, ScenarioSetDefinition> = {
  nuget: nugetSet,
  smoke: nugetSet,
  writes: writesSet,
  'cold-start': coldStartSet,
  auth: authSet,
};

/** CI's smoke fails on any failed page, or a p95 far above what this machine gives (~100 ms). */
const SMOKE_THRESHOLDS: Thresholds = { p95Ms: 2_000 };

try {
  const options = parseRunOptions(process.argv.slice(2));
  const smoke = options.set === 'smoke';
  const result = await runScenarioSet(SETS[options.set], options, smoke ? SMOKE_THRESHOLDS : null);
  if (smoke && (result.k6Exit !== 0 || result.summary.failures > 0 || result.summary.pages_per_s === 0)) {
    log(`smoke FAILED: k6 exit ${result.k6Exit}, ${result.summary.failures} failed pages (details above)`);
    process.exitCode = 1;
  }
} catch (error) {
  log(`load test failed: ${(error as Error).message}`);
  process.exitCode = 1;
}
