// `npm test` (and .ci/run): install what is missing, then lint, type-check,
// build and run every package's tests. Ends with one "N passed, N failed" line.
// First: re-runs this script under Node 24 (fetched into .tools/) when the system node is older.
import './lib/node-runtime.mjs';
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import {
  ensureChromium,
  ensureDependencies,
  ensurePostgres,
  root,
  runPnpm,
  step,
  workspaceDirectories,
} from './lib/bootstrap.mjs';
import { runInfraChecks } from './lib/infra-check.mjs';
import { ensureNativeModulesMatchNode } from './lib/node-runtime.mjs';
import { findGo } from './lib/tools.mjs';

const REPORT = '.vitest-report.json';
const reports = () => workspaceDirectories().map((dir) => path.join(root, dir, REPORT));

ensureDependencies();
ensureNativeModulesMatchNode(runPnpm);
ensurePostgres();
ensureChromium();
step('Lint (Biome)');
runPnpm(['exec', 'biome', 'check', '.']);
step('Type-check and build');
runPnpm(['exec', 'turbo', 'run', 'typecheck', 'build', '--output-logs=errors-only']);

for (const report of reports()) rmSync(report, { force: true });
step('Tests (vitest, one package at a time: several spawn real processes and fsync real files)');
const status = runPnpm(['exec', 'turbo', 'run', 'test', '--concurrency=1', '--continue'], {
  allowFailure: true,
});

let passed = 0;
let failed = 0;
let skipped = 0;
for (const report of reports().filter((file) => existsSync(file))) {
  const data = JSON.parse(readFileSync(report, 'utf8'));
  passed += data.numPassedTests;
  failed += data.numFailedTests;
  skipped += data.numPendingTests + (data.numTodoTests ?? 0);
}

// The k6 smoke (loadtests/): 30 s with 50 users through the gateway, with thresholds, so the load
// tests never rot. About 2 minutes, plus about 80 s once to build k6 with Go. Counted as one test.
step('Load test smoke (k6: 30 s, 50 users, 10,000 documents; builds k6 with Go the first time)');
if (findGo() === null && !existsSync(path.join(root, '.tools', 'bin', 'k6'))) {
  process.stderr.write(
    '\n✖ The load test smoke needs k6, which the suite builds with Go (1.24 or newer), and there is no `go` ' +
      "on PATH or in /usr/local/go/bin. Install Go (https://go.dev/doc/install, or Debian's golang package).\n",
  );
  failed += 1;
} else if (runPnpm(['-s', 'loadtest', 'smoke'], { allowFailure: true }) === 0) {
  passed += 1;
} else {
  failed += 1;
}
// infra/terraform: tofu fmt/validate/test of the provider-free modules, tflint, checkov (each one test).
// Builds OpenTofu and tflint with Go and installs checkov with pip the first time (about 10 minutes), then cached.
step('Infrastructure checks (OpenTofu, tflint, checkov over infra/terraform)');
const infra = runInfraChecks();
passed += infra.passed;
failed += infra.failed;
process.stdout.write(`\n${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}\n`);
if (status !== 0 || failed > 0 || passed === 0) process.exit(1);
