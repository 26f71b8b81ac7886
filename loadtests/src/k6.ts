// k6 itself: installed by the suite from source with the Go toolchain (no
// prebuilt binaries are fetched; `go install` goes through Go's module proxy as
// configured on the machine), cached in <repo>/.tools/bin, and run with the
// config file the scripts read and TLS trust set to Rookery's CA.
import { execFileSync, spawn } from 'node:child_process';
import path from 'node:path';
import { findGo } from '../../scripts/lib/tools.mjs';
import { log } from './log.js';
import { toolsBinDir } from './paths.js';

export const K6_VERSION = 'v1.8.1';
const K6_MODULE = 'go.k6.io/k6';
const k6Binary = path.join(toolsBinDir, 'k6');

function installedVersion(): string | null {
  try {
    return execFileSync(k6Binary, ['version'], { encoding: 'utf8' }).split(/\s+/)[1] ?? null;
  } catch {
    return null;
  }
}

/** The path of k6 at the pinned version, installing it first if missing or another version. */
export function ensureK6(): string {
  const found = installedVersion();
  if (found === K6_VERSION) return k6Binary;
  const go = findGo();
  if (!go) {
    throw new Error(
      `k6 ${K6_VERSION} is not installed in ${toolsBinDir} and there is no Go toolchain to build it: ` +
        'install Go 1.24 or newer (https://go.dev/doc/install, or Debian\'s "golang" package) and run again.',
    );
  }
  log(
    `installing k6 ${K6_VERSION} with ${go} install (builds from source: about 80 s the first time, then cached)`,
  );
  execFileSync(go, ['install', `${K6_MODULE}@${K6_VERSION}`], {
    env: { ...process.env, GOBIN: toolsBinDir, GOFLAGS: '-buildvcs=false' },
    stdio: ['ignore', process.stderr, process.stderr],
  });
  const installed = installedVersion();
  if (installed !== K6_VERSION)
    throw new Error(`go install left k6 ${installed ?? 'missing'} in ${toolsBinDir}`);
  return k6Binary;
}

export interface K6Run {
  script: string;
  configFile: string;
  /** Rookery's CA: k6 (Go) trusts exactly the certificates in SSL_CERT_FILE. */
  caFile: string;
  /** Raw samples, one JSON object a line (k6's `--out json`). */
  samplesFile: string;
}

/** Runs k6 to the end; resolves with its exit code (99: a threshold failed). k6's own output goes to stderr. */
export function runK6(k6: string, run: K6Run): Promise<number> {
  const child = spawn(
    k6,
    ['run', '--no-usage-report', '--quiet', `--out=json=${run.samplesFile}`, run.script],
    {
      env: {
        ...process.env,
        ROOKERY_K6_CONFIG: run.configFile,
        SSL_CERT_FILE: run.caFile,
        K6_NO_USAGE_REPORT: 'true',
      },
      stdio: ['ignore', process.stderr, process.stderr],
    },
  );
  // Ctrl+C stops k6 first (it writes its summary), then the runner cleans up.
  const forward = () => child.kill('SIGINT');
  process.once('SIGINT', forward);
  return new Promise((resolve, reject) => {
    child.once('error', reject);
    child.once('exit', (code, signal) => {
      process.off('SIGINT', forward);
      resolve(code ?? (signal ? 128 : 1));
    });
  });
}
