// The tools that check infra/terraform: OpenTofu, tflint and checkov. Installed
// by the suite the way k6 is (loadtests/src/k6.ts): from source or from the
// package registries through their ordinary clients, never as a downloaded
// prebuilt binary, cached in the gitignored <repo>/.tools and reused while the
// pinned version matches.
import { execFileSync, spawnSync } from 'node:child_process';
import { existsSync, mkdirSync, readFileSync, writeFileSync } from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { findGo } from './tools.mjs';

const root = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..', '..');
export const toolsDir = path.join(root, '.tools');
export const toolsBinDir = path.join(toolsDir, 'bin');
export const terraformDir = path.join(root, 'infra', 'terraform');

export const TOFU_VERSION = 'v1.12.6';
export const TFLINT_VERSION = 'v0.64.0';
export const CHECKOV_VERSION = '3.3.30';

const TOFU_MODULE = 'github.com/opentofu/opentofu';
// OpenTofu's own go.mod (at v1.12.6) carries this replace; a `go install mod@version`
// ignores replace directives, so a wrapper module repeats it and builds the tool.
const TOFU_HCL_REPLACE =
  'github.com/hashicorp/hcl/v2 v2.20.1 => github.com/opentofu/hcl/v2 v2.20.2-0.20251021132045-587d123c2828';

const log = (message) => process.stderr.write(`[infra-tools] ${message}\n`);

/**
 * The environment every tofu/tflint/checkov run gets: the project's CLI config
 * (no registry, no plugin cache; machines here preset TF_CLI_CONFIG_FILE to a
 * missing file), no upgrade checks, and the tools directory first on PATH.
 */
export function infraEnv(base = process.env) {
  return {
    ...base,
    PATH: [toolsBinDir, path.join(checkovVenv(), 'bin'), base.PATH ?? ''].join(path.delimiter),
    TF_CLI_CONFIG_FILE: path.join(terraformDir, 'tofu.rc'),
    TF_IN_AUTOMATION: '1',
    CHECKPOINT_DISABLE: '1',
    TFLINT_DISABLE_VERSION_CHECK: '1',
  };
}

function requireGo(tool) {
  const go = findGo();
  if (go === null) {
    throw new Error(
      `${tool} is not installed in ${toolsBinDir} and there is no Go toolchain to build it: ` +
        'install Go 1.26 or newer (https://go.dev/doc/install) and run again.',
    );
  }
  return go;
}

/** Runs a Go command at the lowest CPU and I/O priority: a cold OpenTofu build takes minutes on 2 cores. */
function goNiced(go, args, cwd, extraEnv = {}) {
  const result = spawnSync('nice', ['-n', '19', 'ionice', '-c3', go, ...args], {
    cwd,
    env: { ...process.env, GOFLAGS: '-buildvcs=false', GOTOOLCHAIN: 'local', ...extraEnv },
    stdio: ['ignore', process.stderr, process.stderr],
  });
  if (result.status !== 0) {
    throw new Error(`go ${args.join(' ')} failed in ${cwd} (exit ${result.status ?? result.signal})`);
  }
}

/** The first line a tool prints, run with the project's settings (a CLI config warning would come first otherwise). */
function firstLine(command, args) {
  try {
    return execFileSync(command, args, {
      encoding: 'utf8',
      env: infraEnv(),
      stdio: ['ignore', 'pipe', 'ignore'],
    }).split('\n')[0];
  } catch {
    return null;
  }
}

/** `.tools/bin/tofu` at TOFU_VERSION, built first if missing or another version. */
export function ensureTofu() {
  const tofu = path.join(toolsBinDir, 'tofu');
  if (firstLine(tofu, ['version']) === `OpenTofu ${TOFU_VERSION}`) return tofu;
  const go = requireGo('OpenTofu');
  const started = Date.now();
  log(`building OpenTofu ${TOFU_VERSION} with ${go} (about 8 minutes cold on 2 cores, about 1 warm)`);
  // The wrapper module lives under .tools so its go.sum and the tool line stay out of the repository.
  const wrapper = path.join(toolsDir, `opentofu-build-${TOFU_VERSION}`);
  mkdirSync(wrapper, { recursive: true });
  const goMod = path.join(wrapper, 'go.mod');
  if (!existsSync(goMod)) {
    writeFileSync(goMod, `module rookery.invalid/tofu-build\n\ngo 1.26\n\nreplace ${TOFU_HCL_REPLACE}\n`);
  }
  if (!readFileSync(goMod, 'utf8').includes(`${TOFU_MODULE}/cmd/tofu`)) {
    goNiced(go, ['get', '-tool', `${TOFU_MODULE}/cmd/tofu@${TOFU_VERSION}`], wrapper);
  }
  mkdirSync(toolsBinDir, { recursive: true });
  goNiced(
    go,
    [
      'build',
      '-trimpath',
      '-ldflags',
      `-X ${TOFU_MODULE}/version.dev=no`,
      '-o',
      tofu,
      `${TOFU_MODULE}/cmd/tofu`,
    ],
    wrapper,
  );
  const built = firstLine(tofu, ['version']);
  if (built !== `OpenTofu ${TOFU_VERSION}`) throw new Error(`the build left "${built}" in ${tofu}`);
  log(`OpenTofu ${TOFU_VERSION} built in ${Math.round((Date.now() - started) / 1000)} s`);
  return tofu;
}

/** `.tools/bin/tflint` at TFLINT_VERSION (core rules only: the plugins come from a registry we cannot reach). */
export function ensureTflint() {
  const tflint = path.join(toolsBinDir, 'tflint');
  const found = firstLine(tflint, ['--version']);
  if (found === `TFLint version ${TFLINT_VERSION.slice(1)}`) return tflint;
  const go = requireGo('tflint');
  const started = Date.now();
  log(`installing tflint ${TFLINT_VERSION} with go install`);
  mkdirSync(toolsBinDir, { recursive: true });
  goNiced(go, ['install', `github.com/terraform-linters/tflint@${TFLINT_VERSION}`], root, {
    GOBIN: toolsBinDir,
  });
  log(`tflint ${TFLINT_VERSION} installed in ${Math.round((Date.now() - started) / 1000)} s`);
  return tflint;
}

function checkovVenv() {
  return path.join(toolsDir, `checkov-${CHECKOV_VERSION}`);
}

/** checkov at CHECKOV_VERSION in its own virtualenv under .tools (pip, from the Python package index). */
export function ensureCheckov() {
  const venv = checkovVenv();
  const checkov = path.join(venv, 'bin', 'checkov');
  if (firstLine(checkov, ['--version']) === CHECKOV_VERSION) return checkov;
  const started = Date.now();
  log(`installing checkov ${CHECKOV_VERSION} into ${venv}`);
  const python = firstLine('python3', ['--version']) === null ? null : 'python3';
  if (python === null) throw new Error('checkov needs python3 (3.9 or newer) with the venv module');
  for (const [command, args] of [
    [python, ['-m', 'venv', venv]],
    [
      path.join(venv, 'bin', 'pip'),
      ['install', '--quiet', '--disable-pip-version-check', `checkov==${CHECKOV_VERSION}`],
    ],
  ]) {
    const result = spawnSync('nice', ['-n', '19', command, ...args], {
      stdio: ['ignore', process.stderr, process.stderr],
    });
    if (result.status !== 0) throw new Error(`${command} ${args.join(' ')} failed (exit ${result.status})`);
  }
  log(`checkov ${CHECKOV_VERSION} installed in ${Math.round((Date.now() - started) / 1000)} s`);
  return checkov;
}

// `node scripts/lib/infra-tools.mjs` installs all three (for operators and for timing the cold build).
if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  for (const ensure of [ensureTofu, ensureTflint, ensureCheckov]) log(ensure());
}
