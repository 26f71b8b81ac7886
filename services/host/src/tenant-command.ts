// How a tenant process is started: which entry point, with which Node flags. The built tenant (dist/) in
// production; its TypeScript source through tsx in development and tests, or when dist/ is older than the
// source (a stale build would run yesterday's code). Tests override the command with fixtures.
import fs from 'node:fs';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export interface TenantCommand {
  /** The script `node` runs (`.js`, or `.ts` when execArgv loads tsx). */
  entry: string;
  /** Node flags before the script. */
  execArgv: string[];
  /** Extra environment for the process (on top of what the supervisor sets). */
  env?: Record<string, string>;
  /** Where the command came from, for the start-up log. */
  description: string;
}

/**
 * `--no-node-snapshot`: isolated-vm (the index sandbox in the tenant's indexer) needs it on Node 20+.
 * `--max-semi-space-size=16`: Node 20's young generation. Node 24's V8 lets it grow much larger, and a
 * tenant streaming a large answer then held 40-70 MB more of short-lived chunks between scavenges
 * (packages/client's stream-memory test: +46 to +72 MB, against +11 MB with a small young generation).
 * A host runs many tenant processes, so it keeps each one's garbage small.
 */
const NODE_FLAGS = ['--no-node-snapshot', '--max-semi-space-size=16'];

/** services/tenant, beside this package in the repository (the same path from src/ and dist/). */
export function tenantPackageDir(): string {
  return path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..', 'tenant');
}

/** Runs a `.ts` entry through tsx with workspace packages resolved to their sources, a `.js` one as is. */
export function commandFor(entry: string, description = entry): TenantCommand {
  if (!entry.endsWith('.ts')) return { entry, execArgv: [...NODE_FLAGS], description };
  const require = createRequire(import.meta.url);
  return {
    entry,
    execArgv: [...NODE_FLAGS, '--conditions=@rookery/source', '--import', require.resolve('tsx')],
    description,
  };
}

/** The tenant's TypeScript source, run through tsx (what the tests run). */
export function sourceTenantCommand(): TenantCommand {
  return commandFor(path.join(tenantPackageDir(), 'src', 'main.ts'), 'services/tenant/src/main.ts (tsx)');
}

/** The built tenant if dist/main.js exists and is newer than every source file, else the source. */
export function defaultTenantCommand(): TenantCommand {
  const dir = tenantPackageDir();
  const built = path.join(dir, 'dist', 'main.js');
  let builtAt: number;
  try {
    builtAt = fs.statSync(built).mtimeMs;
  } catch {
    return { ...sourceTenantCommand(), description: 'services/tenant/src/main.ts (tsx; no build found)' };
  }
  const newestSource = newestMtime(path.join(dir, 'src'));
  if (newestSource > builtAt) {
    return {
      ...sourceTenantCommand(),
      description: 'services/tenant/src/main.ts (tsx; dist/ is older than src/, run `pnpm build`)',
    };
  }
  return commandFor(built, 'services/tenant/dist/main.js');
}

function newestMtime(dir: string): number {
  let newest = 0;
  let entries: fs.Dirent[];
  try {
    entries = fs.readdirSync(dir, { withFileTypes: true });
  } catch {
    return newest;
  }
  for (const entry of entries) {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) newest = Math.max(newest, newestMtime(full));
    else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.test.ts'))
      newest = Math.max(newest, fs.statSync(full).mtimeMs);
  }
  return newest;
}
