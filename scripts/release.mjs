// `pnpm release`: the release artifact the instances install (docs/operations.md, "Upload a release").
//
// node-config's units run `node services/<role>/dist/main.js` in the install directory, so the tarball is
// laid out as the repository is, with only what runs: each service's package (its dist/) and its production
// dependencies, made by `pnpm --filter <service> deploy --prod --legacy` (pnpm 10 refuses the non-legacy
// deploy without injected workspace packages: ERR_PNPM_DEPLOY_NONINJECTED_WORKSPACE), and the console's
// static build where the gateway looks for it (services/console/dist). The tenant is in it because the host
// starts tenant processes from services/tenant beside its own package.
//
// better-sqlite3 and isolated-vm are native: the artifact holds the addons built on this machine, so it is
// named after this machine's platform and must be built on the instances' (linux-x64 or linux-arm64).
import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { pnpmCommand } from './lib/bootstrap.mjs';

const repoRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), '..');

/** The services a node runs (gateway, host, worker) and the tenant the host starts. */
export const RELEASE_SERVICES = ['gateway', 'host', 'tenant', 'worker'];

/** What to build the release of: the commit, with `-dirty` when the tree has uncommitted changes. */
function version() {
  const git = (args) => execFileSync('git', args, { cwd: repoRoot, encoding: 'utf8' }).trim();
  const commit = git(['rev-parse', '--short=12', 'HEAD']);
  return git(['status', '--porcelain', '--untracked-files=no']) === '' ? commit : `${commit}-dirty`;
}

/** [command, args] running pnpm with `args`. */
function pnpmArgs(args) {
  const [command, ...prefix] = pnpmCommand();
  return [command, [...prefix, ...args]];
}

function run(command, args) {
  // Lowest priority: a release build must not disturb what else runs on the machine (benchmarks, tests).
  execFileSync('nice', ['-n', '19', command, ...args], {
    cwd: repoRoot,
    stdio: ['ignore', 'inherit', 'inherit'],
  });
}

function sha256(file) {
  const hash = createHash('sha256');
  const fd = fs.openSync(file, 'r');
  const buffer = Buffer.alloc(1 << 20);
  try {
    for (;;) {
      const n = fs.readSync(fd, buffer, 0, buffer.length, null);
      if (n === 0) break;
      hash.update(buffer.subarray(0, n));
    }
  } finally {
    fs.closeSync(fd);
  }
  return hash.digest('hex');
}

/**
 * Builds the release: `turbo run build` (unless `build: false`), one `pnpm deploy` per service into a
 * staging directory, then `rookery-<version>-<platform>-<arch>.tar.gz` and its `.sha256` (sha256sum's
 * format) in `outDir`.
 * @param {{ outDir?: string, build?: boolean }} [options]
 */
export function buildRelease({ outDir = path.join(repoRoot, '.rookery', 'release'), build = true } = {}) {
  if (process.platform !== 'linux')
    throw new Error(
      `the release holds native addons for the machine that builds it, and the instances run Linux: build it on Linux (this is ${process.platform})`,
    );
  const name = `rookery-${version()}-linux-${process.arch}`;
  if (build) run(...pnpmArgs(['exec', 'turbo', 'run', 'build']));
  for (const service of [...RELEASE_SERVICES, 'console'])
    if (!fs.existsSync(path.join(repoRoot, 'services', service, 'dist')))
      throw new Error(
        `services/${service}/dist is missing: run \`pnpm build\` (or \`pnpm release\` without --no-build)`,
      );

  fs.mkdirSync(outDir, { recursive: true });
  const stage = path.join(outDir, name);
  fs.rmSync(stage, { recursive: true, force: true });
  for (const service of RELEASE_SERVICES) {
    const dir = path.join(stage, 'services', service);
    run(...pnpmArgs(['--filter', `@rookery/${service}`, 'deploy', '--prod', '--legacy', dir]));
    // Only dist/ runs. The sources go, and must: the host runs the tenant's src/ through tsx (a development
    // dependency, not in the release) whenever src/ looks newer than dist/, as copied files may.
    for (const dev of ['src', 'bench', 'tsconfig.json', 'tsconfig.build.json', 'vitest.config.ts'])
      fs.rmSync(path.join(dir, dev), { recursive: true, force: true });
  }
  fs.cpSync(
    path.join(repoRoot, 'services', 'console', 'dist'),
    path.join(stage, 'services', 'console', 'dist'),
    {
      recursive: true,
    },
  );

  const tarball = path.join(outDir, `${name}.tar.gz`);
  // The services share most dependencies as hard links to pnpm's store: tar keeps a hard link once.
  run('tar', ['-czf', tarball, '-C', stage, '.']);
  fs.rmSync(stage, { recursive: true, force: true });
  const digest = sha256(tarball);
  fs.writeFileSync(`${tarball}.sha256`, `${digest}  ${path.basename(tarball)}\n`);
  return { tarball, sha256: digest, bytes: fs.statSync(tarball).size };
}

if (process.argv[1] && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const args = process.argv.slice(2);
  const unknown = args.filter((a) => a !== '--no-build');
  if (unknown.length > 0) {
    process.stderr.write(`usage: pnpm release [--no-build]   (unknown: ${unknown.join(' ')})\n`);
    process.exit(2);
  }
  const { tarball, sha256: digest, bytes } = buildRelease({ build: !args.includes('--no-build') });
  process.stdout.write(
    `${path.relative(repoRoot, tarball)}  ${(bytes / 1e6).toFixed(1)} MB\nsha256 ${digest}  (also in ${path.relative(repoRoot, tarball)}.sha256)\n`,
  );
}
