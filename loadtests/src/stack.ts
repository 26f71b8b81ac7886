// A whole Rookery for one load test run: a fresh data directory in the system's
// temp directory, the control plane bootstrapped with one tenant and its admin
// certificate (as `npm start` does), then the built host and gateway started
// on ephemeral ports. The tenant's quotas are raised out of the way: a load
// test measures the service, not the default request-rate limit (200/s).
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import os from 'node:os';
import path from 'node:path';
import { bootstrap } from '@rookery/cli';
import { type ControlStore, controlPaths, openControlStore } from '@rookery/control-store';
import { z } from 'zod';
import { readOrCreateSecret, spawnService } from '../../scripts/lib/services.mjs';
import { log } from './log.js';
import { repoRoot } from './paths.js';

export interface RookeryStack {
  dataDir: string;
  /** The gateway, as clients reach it: `https://localhost:<port>`. */
  url: string;
  port: number;
  tenantId: string;
  caFile: string;
  certFile: string;
  keyFile: string;
  /** Stops the gateway and the host (tenants commit queued writes) and removes the data unless kept. */
  stop(): Promise<void>;
}

export interface StackOptions {
  tenantId: string;
  /** Extra environment for the host and the gateway (ROOKERY_IDLE_STOP_MS, ROOKERY_GATEWAY_NAMES, …). */
  env?: Record<string, string>;
  /** Keep the data directory after the run (for looking at it). */
  keepData?: boolean;
}

/** Quotas out of the way: a load test measures the service, not the default rate limit. */
export const UNLIMITED_QUOTA = { requestsPerSecond: Number.MAX_SAFE_INTEGER, storageBytes: 2 ** 45 };
const STOP_DEADLINE_MS = 30_000;
const HOST_MAIN = path.join(repoRoot, 'services', 'host', 'dist', 'main.js');
const GATEWAY_MAIN = path.join(repoRoot, 'services', 'gateway', 'dist', 'main.js');
const SERVICE_MAINS = [HOST_MAIN, GATEWAY_MAIN, path.join(repoRoot, 'services', 'tenant', 'dist', 'main.js')];

const HostReadySchema = z.object({ ready: z.literal(true), address: z.string().url() });
const GatewayReadySchema = z.object({ url: z.string().url() });

/** Builds what the stack runs (turbo: a no-op when nothing changed). */
export function buildServices(): void {
  log('building the gateway, the host and the tenant service (turbo; cached when unchanged)');
  const filters = ['gateway', 'host', 'tenant'].map((name) => `--filter=@rookery/${name}`);
  try {
    // --continue: a package of someone else's that does not compile right now must not stop the others building.
    execFileSync(
      'pnpm',
      ['exec', 'turbo', 'run', 'build', ...filters, '--continue', '--output-logs=errors-only'],
      {
        cwd: repoRoot,
        stdio: ['ignore', process.stderr, process.stderr],
      },
    );
  } catch (error) {
    // A work tree mid-change may not compile; an earlier build still measures the service.
    const missing = SERVICE_MAINS.filter((main) => !fs.existsSync(main));
    if (missing.length > 0) throw error;
    log('the build failed (above): running the services as last built');
  }
}

export async function startStack(options: StackOptions): Promise<RookeryStack> {
  const dataDir = fs.mkdtempSync(path.join(os.tmpdir(), 'rookery-loadtest-'));
  const admin = await bootstrap({ dataDir, tenantId: options.tenantId });
  await raiseQuota(dataDir, options.tenantId);
  const logFd = fs.openSync(path.join(dataDir, 'services.log'), 'a');
  const env = {
    ...process.env,
    ROOKERY_DATA: dataDir,
    ROOKERY_INTERNAL_TOKEN: readOrCreateSecret(controlPaths(dataDir).internalToken),
    ROOKERY_LOG_LEVEL: 'warn',
    ROOKERY_HOST_PORT: '0',
    ROOKERY_GATEWAY_PORT: '0',
    ...options.env,
  };
  const children: ReturnType<typeof spawnService>['child'][] = [];
  const stop = async () => {
    await Promise.all(children.map((child) => stopChild(child)));
    fs.closeSync(logFd);
    if (options.keepData) log(`data kept in ${dataDir}`);
    else fs.rmSync(dataDir, { recursive: true, force: true });
  };
  try {
    const host = spawnService('host', HOST_MAIN, {
      env,
      stdio: logFd,
    });
    children.push(host.child);
    const { address } = HostReadySchema.parse(await host.ready);
    const gateway = spawnService('gateway', GATEWAY_MAIN, {
      env: { ...env, ROOKERY_HOST_URL: address },
      stdio: logFd,
    });
    children.push(gateway.child);
    const { url } = GatewayReadySchema.parse(await gateway.ready);
    const port = Number(new URL(url).port);
    // The server certificate names localhost, not 127.0.0.1 alone: clients verify it against the CA.
    return {
      dataDir,
      url: `https://localhost:${port}`,
      port,
      tenantId: options.tenantId,
      caFile: admin.caFile,
      certFile: admin.certFile,
      keyFile: admin.keyFile,
      stop,
    };
  } catch (error) {
    await stop();
    throw new Error(
      `Rookery did not start: ${(error as Error).message} (service logs: ${dataDir}/services.log)`,
    );
  }
}

async function raiseQuota(dataDir: string, tenantId: string): Promise<void> {
  await withControlStore(dataDir, (store) => store.updateQuota(tenantId, UNLIMITED_QUOTA));
}

/** Opens the control store of `dataDir` for the duration of `use`. */
export async function withControlStore<T>(
  dataDir: string,
  use: (store: ControlStore) => Promise<T>,
): Promise<T> {
  const store = await openControlStore({ dataDir });
  try {
    return await use(store);
  } finally {
    await store.close();
  }
}

function stopChild(child: ReturnType<typeof spawnService>['child']): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => {
    const timer = setTimeout(() => child.kill('SIGKILL'), STOP_DEADLINE_MS);
    child.once('exit', () => {
      clearTimeout(timer);
      resolve();
    });
    child.kill('SIGTERM');
  });
}
