// The worker as a process of its own (`node src/main.ts`), for the tests that SIGKILL it mid-job: the
// queue's lease and retry are only proved across a real process death.
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { spawnTs, untilReady, waitForExit } from '@rookery/testkit';

const MAIN = fileURLToPath(new URL('../main.ts', import.meta.url));

export interface WorkerProcesses {
  /** Starts a worker on `dataDir` (its queue, mirror and scratch space) and waits for its ready message. */
  start(env?: Record<string, string>): Promise<ChildProcess>;
  /** SIGKILLs every worker still running and waits for each to exit. */
  stopAll(): Promise<void>;
}

export function workerProcesses(dataDir: string): WorkerProcesses {
  const children: ChildProcess[] = [];
  return {
    async start(env = {}) {
      const child = spawnTs(MAIN, [], {
        ROOKERY_DATA: dataDir,
        // The master key is created on first use; beside the data dir, so every worker of a test shares it.
        ROOKERY_MASTER_KEY_FILE: path.join(path.dirname(dataDir), 'master.key'),
        ROOKERY_WORKER_PORT: '0',
        ROOKERY_WORKER_POLL_MS: '100',
        ROOKERY_BACKUP_EVERY_MINUTES: '0',
        ROOKERY_SWEEP_EVERY_MINUTES: '0',
        ROOKERY_LOG_LEVEL: 'warn',
        ...env,
      });
      children.push(child);
      child.stdout?.resume();
      await untilReady(child, 'the worker');
      return child;
    },
    async stopAll() {
      for (const child of children.splice(0)) {
        if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
        await waitForExit(child);
      }
    },
  };
}
