// `npm test` (and .ci/run): install what is missing, then lint, type-check,
// build and run every package's tests. Ends with one "N passed, N failed" line.
import { existsSync, readFileSync, rmSync } from 'node:fs';
import path from 'node:path';
import {
  ensureDependencies,
  ensurePostgres,
  root,
  runPnpm,
  step,
  workspaceDirectories,
} from './lib/bootstrap.mjs';

const REPORT = '.vitest-report.json';
const reports = () => workspaceDirectories().map((dir) => path.join(root, dir, REPORT));

ensureDependencies();
ensurePostgres();
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
process.stdout.write(`\n${passed} passed, ${failed} failed${skipped > 0 ? `, ${skipped} skipped` : ''}\n`);
if (status !== 0 || failed > 0 || passed === 0) process.exit(1);
