// The gateway in a process of its own on a stack's data directory, as in
// production: for figures about the gateway alone (its memory, its
// throughput) that the test or benchmark process must not blur.
import { type ChildProcess, fork } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type Stack, TOKEN } from './stack.js';

export interface GatewayProcess {
  url: string;
  child: ChildProcess;
  /** Resident memory now, from /proc (Linux). */
  rssBytes(): number;
  stop(): Promise<void>;
}

const mainTs = path.join(path.dirname(fileURLToPath(import.meta.url)), '..', 'main.ts');

/** `env` goes on top of the settings of the stack's (a fleet's gateway: ROOKERY_GATEWAY_ROUTING=fleet, …). */
export async function forkGateway(
  stack: Pick<Stack, 'dir' | 'hostUrl'>,
  env: Record<string, string> = {},
): Promise<GatewayProcess> {
  const child = fork(mainTs, [], {
    // The young generation every Rookery service runs with (scripts/lib/services.mjs).
    execArgv: ['--max-semi-space-size=16', '--conditions=@rookery/source', '--import', 'tsx'],
    env: {
      ...process.env,
      ROOKERY_DATA: stack.dir,
      ROOKERY_GATEWAY_PORT: '0',
      ROOKERY_HOST_URL: stack.hostUrl,
      ROOKERY_INTERNAL_TOKEN: TOKEN,
      ROOKERY_LOG_LEVEL: 'warn',
      ...env,
    },
  });
  const url = await new Promise<string>((resolve, reject) => {
    child.once('message', (m) => resolve((m as { url: string }).url));
    child.once('exit', (code) => reject(new Error(`the gateway exited during start-up (${code})`)));
  });
  return {
    url,
    child,
    rssBytes() {
      const status = fs.readFileSync(`/proc/${child.pid}/status`, 'utf8');
      const kb = /VmRSS:\s+(\d+) kB/.exec(status)?.[1];
      if (kb === undefined) throw new Error('no VmRSS in /proc/<pid>/status');
      return Number(kb) * 1024;
    },
    async stop() {
      if (child.exitCode !== null) return;
      const exited = new Promise((resolve) => child.once('exit', resolve));
      child.kill('SIGTERM');
      await exited;
    },
  };
}
