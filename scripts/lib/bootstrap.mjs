// Shared by `npm start` and `npm test`: make a fresh machine (Node 20 and build
// tools only) ready, installing pnpm and the locked dependencies if missing.
import { execFileSync, spawnSync } from 'node:child_process';
import { readdirSync, readFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

export const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const pnpmVersion = JSON.parse(readFileSync(path.join(root, 'package.json'), 'utf8')).packageManager.split(
  '@',
)[1];

export function step(message) {
  process.stderr.write(`\n\x1b[1m▶ ${message}\x1b[0m\n`);
}

/** The command that runs the project's pinned pnpm: a matching global one, or the exact version through npm exec. */
function pnpmCommand() {
  try {
    const version = execFileSync('pnpm', ['--version'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    if (version === pnpmVersion) return ['pnpm'];
  } catch {
    // not installed
  }
  return ['npm', 'exec', '--yes', `pnpm@${pnpmVersion}`, '--'];
}

const pnpm = pnpmCommand();
const env = { ...process.env, TURBO_TELEMETRY_DISABLED: '1', DO_NOT_TRACK: '1' };

/**
 * Runs pnpm with the given arguments in the repository root. On failure it exits
 * with pnpm's status, unless `allowFailure` is set: then it returns the status.
 */
export function runPnpm(args, { allowFailure = false } = {}) {
  const [command, ...prefix] = pnpm;
  const result = spawnSync(command, [...prefix, ...args], { cwd: root, stdio: 'inherit', env });
  if (result.status !== 0 && allowFailure) return result.status ?? 1;
  if (result.status !== 0) {
    process.stderr.write(`\n✖ pnpm ${args.join(' ')} failed (exit ${result.status ?? result.signal})\n`);
    process.exit(result.status ?? 1);
  }
  return 0;
}

/** Every workspace package directory (packages/* and services/*), relative to the root. */
export function workspaceDirectories() {
  return ['packages', 'services'].flatMap((group) =>
    readdirSync(path.join(root, group), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => path.join(group, entry.name)),
  );
}

export function ensureDependencies() {
  const major = Number(process.versions.node.split('.')[0]);
  if (major < 20) {
    process.stderr.write(`Rookery needs Node.js 20 or newer; this is ${process.version}.\n`);
    process.exit(1);
  }
  step(
    `Installing dependencies (pnpm ${pnpmVersion}, locked versions; native modules compile on first install)`,
  );
  runPnpm(['install', '--frozen-lockfile', '--prefer-offline']);
}
