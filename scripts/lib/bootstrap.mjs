// Shared by `npm start` and `npm test`: make a fresh machine (Node 20 and build
// tools only) ready, installing pnpm and the locked dependencies if missing.
import { execFileSync, spawnSync } from 'node:child_process';
import {
  accessSync,
  closeSync,
  constants,
  existsSync,
  mkdirSync,
  openSync,
  readdirSync,
  readFileSync,
  realpathSync,
  statSync,
} from 'node:fs';
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
export function pnpmCommand() {
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
 * With `logFile`, pnpm's output goes to that file and is shown only if it fails.
 */
export function runPnpm(args, { allowFailure = false, logFile } = {}) {
  const [command, ...prefix] = pnpm;
  const log = logFile === undefined ? null : openLog(logFile);
  const stdio = log === null ? 'inherit' : ['inherit', log, log];
  const result = spawnSync(command, [...prefix, ...args], { cwd: root, stdio, env });
  if (log !== null) {
    closeSync(log);
    if (result.status !== 0) process.stderr.write(readFileSync(logFile));
  }
  if (result.status !== 0 && allowFailure) return result.status ?? 1;
  if (result.status !== 0) {
    process.stderr.write(`\n✖ pnpm ${args.join(' ')} failed (exit ${result.status ?? result.signal})\n`);
    process.exit(result.status ?? 1);
  }
  return 0;
}

function openLog(file) {
  mkdirSync(path.dirname(file), { recursive: true });
  return openSync(file, 'w');
}

/** Every workspace package directory (packages/*, services/*, loadtests, examples, infra's tests), relative to the root. */
export function workspaceDirectories() {
  const grouped = ['packages', 'services'].flatMap((group) =>
    readdirSync(path.join(root, group), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => path.join(group, entry.name)),
  );
  return [...grouped, 'loadtests', 'examples', path.join('infra', 'terraform', 'test')];
}

export function ensureDependencies() {
  const major = Number(process.versions.node.split('.')[0]);
  if (major < 20) {
    process.stderr.write(`Rookery needs Node.js 20 or newer; this is ${process.version}.\n`);
    process.exit(1);
  }
  // The first install compiles better-sqlite3 and isolated-vm from source: pages of compiler warnings
  // that mean nothing when it works. They go to a log, shown in full if the install fails.
  const logFile = path.join(root, '.rookery', 'install.log');
  step(
    `Installing dependencies (pnpm ${pnpmVersion}, locked versions; native modules compile on first install, ` +
      `about two minutes; output in ${path.relative(process.cwd(), logFile)})`,
  );
  runPnpm(['install', '--frozen-lockfile', '--prefer-offline'], { logFile });
}

function isExecutable(file) {
  try {
    accessSync(file, constants.X_OK);
    return statSync(file).isFile();
  } catch {
    return false;
  }
}

/** Where initdb and postgres live (as packages/testkit's findPostgresBin looks), or null. */
function findPostgresBin() {
  const candidates = [];
  if (process.env.ROOKERY_PG_BIN) candidates.push(process.env.ROOKERY_PG_BIN);
  for (const dir of (process.env.PATH ?? '').split(path.delimiter)) {
    if (dir && isExecutable(path.join(dir, 'initdb'))) {
      candidates.push(path.dirname(realpathSync(path.join(dir, 'initdb'))));
    }
  }
  const debian = '/usr/lib/postgresql';
  if (existsSync(debian)) {
    const majors = readdirSync(debian)
      .filter((name) => /^\d+(\.\d+)?$/.test(name))
      .sort((a, b) => Number(b) - Number(a));
    for (const major of majors) candidates.push(path.join(debian, major, 'bin'));
  }
  return (
    candidates.find(
      (dir) => isExecutable(path.join(dir, 'initdb')) && isExecutable(path.join(dir, 'postgres')),
    ) ?? null
  );
}

/**
 * The control store's tests run against a real PostgreSQL server (started by
 * packages/testkit). On a fresh Debian machine, as root, install Debian's
 * package; otherwise say what to install.
 */
export function ensurePostgres() {
  if (findPostgresBin()) return;
  installDebianPackages(
    ['postgresql'],
    'PostgreSQL (Debian package "postgresql"; the tests start their own throwaway server)',
    'or set ROOKERY_PG_BIN to a directory holding initdb and postgres',
  );
  if (!findPostgresBin()) {
    process.stderr.write(
      '\n✖ PostgreSQL was installed but initdb and postgres were not found under /usr/lib/postgresql.\n',
    );
    process.exit(1);
  }
}

/** Debian's Chromium for the console's browser tests (services/console/e2e), at ROOKERY_CHROMIUM or /usr/bin/chromium. */
export function ensureChromium() {
  const chromium = process.env.ROOKERY_CHROMIUM ?? '/usr/bin/chromium';
  if (existsSync(chromium)) return;
  // fonts-liberation (only recommended by the package): without a font the screenshots the tests save show boxes.
  installDebianPackages(
    ['chromium', 'fonts-liberation'],
    'Chromium (Debian package "chromium", for the web console\'s browser tests)',
    'or set ROOKERY_CHROMIUM to a Chromium binary',
  );
  if (!existsSync(chromium)) {
    process.stderr.write(`\n✖ The chromium package was installed but ${chromium} is not there.\n`);
    process.exit(1);
  }
}

/** `apt-get install` as root (as CI runs); elsewhere, stops with the command to run and the alternative. */
function installDebianPackages(names, what, otherwise) {
  const root = typeof process.getuid === 'function' && process.getuid() === 0;
  if (!root || !existsSync('/usr/bin/apt-get')) {
    process.stderr.write(
      `\n✖ ${what} is needed by the tests and is not installed. Install it with ` +
        `\`sudo apt-get install -y --no-install-recommends ${names.join(' ')}\` (Debian/Ubuntu), ${otherwise}.\n`,
    );
    process.exit(1);
  }
  step(`Installing ${what}`);
  const aptEnv = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
  for (const args of [['update'], ['install', '-y', '--no-install-recommends', ...names]]) {
    const result = spawnSync('apt-get', args, { stdio: 'inherit', env: aptEnv });
    if (result.status !== 0) {
      process.stderr.write(`\n✖ apt-get ${args.join(' ')} failed (exit ${result.status ?? result.signal})\n`);
      process.exit(result.status ?? 1);
    }
  }
}
