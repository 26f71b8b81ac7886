import { type ChildProcess, spawn } from 'node:child_process';
import { createRequire } from 'node:module';

const require = createRequire(import.meta.url);

/**
 * Node arguments that run a TypeScript entry point of this repository the way
 * the tests see it: through tsx, resolving workspace packages to their sources.
 */
export function tsNodeArgs(entry: string, args: readonly string[] = []): string[] {
  return ['--conditions=@rookery/source', '--import', require.resolve('tsx'), entry, ...args];
}

/** Spawns `node` on a TypeScript entry point with an IPC channel, stdout piped and stderr inherited. */
export function spawnTs(
  entry: string,
  args: readonly string[] = [],
  env: NodeJS.ProcessEnv = {},
): ChildProcess {
  return spawn(process.execPath, tsNodeArgs(entry, args), {
    env: { ...process.env, ...env },
    stdio: ['ignore', 'pipe', 'inherit', 'ipc'],
  });
}

/** Resolves with the exit code (or signal) once the child has exited. */
export function waitForExit(
  child: ChildProcess,
): Promise<{ code: number | null; signal: NodeJS.Signals | null }> {
  if (child.exitCode !== null || child.signalCode !== null) {
    return Promise.resolve({ code: child.exitCode, signal: child.signalCode });
  }
  return new Promise((resolve) => child.once('exit', (code, signal) => resolve({ code, signal })));
}

/**
 * Resolves once `child` sends its first IPC message (the services' "ready"), and rejects if it exits
 * before: a child that cannot start fails the test at once, naming itself, rather than timing it out.
 */
export function untilReady(child: ChildProcess, name: string): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    child.once('message', () => resolve());
    child.once('exit', (code, signal) =>
      reject(new Error(`${name} exited during start (${code ?? signal})`)),
    );
  });
}
