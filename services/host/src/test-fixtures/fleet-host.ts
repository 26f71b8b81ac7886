// A real host process in fleet mode (ROOKERY_HOST_ID), its tenants from the tenant's source, for the
// fleet tests: started, asked over HTTP with the internal token, and stopped (also when paused).
import { type ChildProcess, spawn } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { loadOrCreateCertificateAuthority } from '@rookery/pki';
import { INTERNAL_TOKEN_HEADER, ProblemSchema } from '@rookery/protocol';
import { tsNodeArgs, waitForExit } from '@rookery/testkit';
import { request } from 'undici';
import { sourceTenantCommand } from '../tenant-command.js';

const HOST_MAIN = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'main.ts');
export const FLEET_TOKEN = 'fleet-token-0123456789';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** Asks until `done` holds for the answer; fails naming `what` and the last answer after `giveUpMs`. */
export async function until<T>(
  what: string,
  ask: () => Promise<T>,
  done: (value: T) => boolean,
  giveUpMs = 60_000,
): Promise<T> {
  const giveUpAt = Date.now() + giveUpMs;
  for (;;) {
    const value = await ask();
    if (done(value)) return value;
    if (Date.now() > giveUpAt) throw new Error(`${what}: still ${JSON.stringify(value)}`);
    await sleep(50);
  }
}

export interface FleetHost {
  process: ChildProcess;
  /** The internal API on plain HTTP (this machine only). */
  address: string;
  /** The relay port (mutual TLS), which the host registers with its lease: https://127.0.0.1:<port>. */
  relayAddress: string;
  /** Rookery's CA the relay's certificate comes from (ROOKERY_CA_DIR). */
  caDir: string;
  call(method: 'GET' | 'POST', url: string): Promise<{ status: number; body: unknown }>;
  /** Wakes the tenant, asking again while it answers TenantStarting. */
  wake(tenantId: string): Promise<{ status: number; body: unknown }>;
  /** SIGTERM (after SIGCONT, should the test have paused it), and waits for the exit. */
  stop(): Promise<void>;
}

export interface FleetHostLaunch {
  /**
   * A command the host's `node` runs under, e.g. `['ip', 'netns', 'exec', 'ns1']` for a host in a network
   * namespace: it must exec node in its own place (same pid, same IPC channel), as `ip netns exec` does.
   */
  wrap?: readonly [string, ...string[]];
}

/**
 * Starts `main.ts` with these settings on top of the test ones, and resolves once it is ready. The relay
 * needs Rookery's CA: ROOKERY_CA_DIR if given, else `<ROOKERY_DATA>/test-ca` (outside the control
 * store's directory, which a PostgreSQL fleet never makes), created if missing.
 */
export async function startFleetHost(
  env: Record<string, string>,
  launch: FleetHostLaunch = {},
): Promise<FleetHost> {
  const caDir = env.ROOKERY_CA_DIR ?? path.join(env.ROOKERY_DATA ?? '.rookery/data', 'test-ca');
  await loadOrCreateCertificateAuthority(caDir);
  const [command, ...args] = [...(launch.wrap ?? []), process.execPath, ...tsNodeArgs(HOST_MAIN)] as [
    string,
    ...string[],
  ];
  const hostEnv = {
    ROOKERY_CA_DIR: caDir,
    ROOKERY_HOST_PORT: '0',
    ROOKERY_HOST_RELAY_PORT: '0',
    ROOKERY_INTERNAL_TOKEN: FLEET_TOKEN,
    ROOKERY_LOG_LEVEL: 'error',
    ROOKERY_TENANT_LOG_LEVEL: 'fatal',
    ROOKERY_TENANT_ENTRY: sourceTenantCommand().entry,
    ROOKERY_SPARE_PROCESSES: '0',
    ROOKERY_IDLE_STOP_MS: '0',
    ROOKERY_START_DEADLINE_MS: '60000',
    ...env,
  };
  // stdout piped (its log: a test may read it), stderr inherited, and the IPC channel the ready message comes on.
  const child = spawn(command, args, {
    env: { ...process.env, ...hostEnv },
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
  child.stdout?.resume();
  const { address, relayAddress } = await new Promise<{ address: string; relayAddress: string }>(
    (resolve, reject) => {
      child.once('message', (m) => resolve(m as { address: string; relayAddress: string }));
      child.once('exit', (code) => reject(new Error(`the host exited (${code}) before it was ready`)));
    },
  );
  const call = async (method: 'GET' | 'POST', url: string) => {
    const reply = await request(`${address}${url}`, {
      method,
      headers: { [INTERNAL_TOKEN_HEADER]: FLEET_TOKEN },
    });
    return { status: reply.statusCode, body: (await reply.body.json()) as unknown };
  };
  return {
    process: child,
    address,
    relayAddress,
    caDir,
    call,
    wake: (tenantId) =>
      until(
        `waking ${tenantId}`,
        () => call('POST', `/tenants/${tenantId}/wake`),
        (r) => r.status !== 503 || ProblemSchema.parse(r.body).code !== 'TenantStarting',
      ),
    stop: async () => {
      if (child.exitCode !== null || child.signalCode !== null) return;
      child.kill('SIGCONT');
      child.kill('SIGTERM');
      await waitForExit(child);
    },
  };
}
