// Shared vitest settings for every package: resolve workspace packages to their
// TypeScript sources (the "@rookery/source" export condition) so tests never
// need a build step, and give real-I/O tests (SQLite, child processes) room.
import { defineConfig } from 'vitest/config';

export const sharedConfig = defineConfig({
  resolve: { conditions: ['@rookery/source'] },
  ssr: { resolve: { conditions: ['@rookery/source'] } },
  test: {
    include: ['src/**/*.test.ts'],
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: 'forks',
    // isolated-vm (the index sandbox) asks for this flag on Node 20+: V8's startup snapshot and its isolates
    // do not mix on every platform.
    // The young generation every Rookery service runs with (scripts/lib/services.mjs): tests that run a
    // gateway in-process and measure its memory measure what production runs.
    execArgv: ['--no-node-snapshot', '--max-semi-space-size=16'],
    // The JSON report lets `npm test` print one "N passed, N failed" line for the whole repository.
    reporters: ['default', 'json'],
    outputFile: { json: '.vitest-report.json' },
  },
});
