// The worker (services/worker/src/main.ts) as a process of its own beside the test stack, configured
// by ROOKERY_* variables as an operator would: the same data directory (control store and embedded
// job queue), mirror, master key and host as the stack, so the jobs the console queues really run.
import type { ChildProcess } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { spawnTs, untilReady, waitForExit } from '@rookery/testkit';

// The gateway does not depend on the worker package; the fixture runs its entry point from the sources.
const WORKER_MAIN = fileURLToPath(new URL('../../../worker/src/main.ts', import.meta.url));

export interface StackWorkerOptions {
  dataDir: string;
  mirrorDir: string;
  masterKeyFile: string;
  hostUrl: string;
  internalToken: string;
}

export interface StackWorker {
  /** SIGTERM (the worker finishes its running jobs), then waits for the exit. */
  stop(): Promise<void>;
}

/** Starts the worker and resolves once it has said it is ready (rejects if it exits first). */
export async function startStackWorker(options: StackWorkerOptions): Promise<StackWorker> {
  const child: ChildProcess = spawnTs(WORKER_MAIN, [], {
    ROOKERY_DATA: options.dataDir,
    ROOKERY_MIRROR: options.mirrorDir,
    ROOKERY_MASTER_KEY_FILE: options.masterKeyFile,
    ROOKERY_HOST_URL: options.hostUrl,
    ROOKERY_INTERNAL_TOKEN: options.internalToken,
    ROOKERY_WORKER_PORT: '0',
    ROOKERY_WORKER_POLL_MS: '100',
    // Only the jobs a test queues: no scheduled backups or sweeps.
    ROOKERY_BACKUP_EVERY_MINUTES: '0',
    ROOKERY_SWEEP_EVERY_MINUTES: '0',
    ROOKERY_LOG_LEVEL: 'warn',
  });
  child.stdout?.resume();
  await untilReady(child, 'the worker');
  return {
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await waitForExit(child);
    },
  };
}
