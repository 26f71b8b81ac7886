// Runs `rookery` against a data directory the way a person or a script does.
// `spawnRookery` starts the real executable (its TypeScript entry through tsx)
// as a child process; `runRookery` runs the same runCli in this process with
// its own stdout, stderr and environment — the command tests make dozens of
// calls, and a process each costs about a second. ROOKERY_CLI_TEST_SPAWN=1
// makes runRookery spawn too, to run every command test against the executable.
import { execFile } from 'node:child_process';
import path from 'node:path';
import { tsNodeArgs } from '@rookery/testkit';
import { runCli } from '../cli.js';

const MAIN = path.resolve(import.meta.dirname, '..', 'main.ts');

export interface CliRun {
  code: number;
  stdout: string;
  stderr: string;
  /** stdout parsed as JSON (for runs with --json). */
  json<T = Record<string, unknown>>(): T;
}

function result(code: number, stdout: string, stderr: string): CliRun {
  return { code, stdout, stderr, json: <T>() => JSON.parse(stdout) as T };
}

/** The environment of a run: only what it is given (a ROOKERY_* of the test's own must not leak in). */
function environment(env: NodeJS.ProcessEnv): NodeJS.ProcessEnv {
  return { PATH: process.env.PATH, HOME: process.env.HOME, ...env };
}

function argvFor(dataDir: string | null, args: readonly string[]): string[] {
  return dataDir === null ? [...args] : ['--data', dataDir, ...args];
}

/** The real executable in a child process. `dataDir` null leaves --data out. */
export function spawnRookery(
  dataDir: string | null,
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): Promise<CliRun> {
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      tsNodeArgs(MAIN, argvFor(dataDir, args)),
      { env: environment(env), timeout: 60_000 },
      (error, stdout, stderr) => {
        if (error && typeof error.code !== 'number') return reject(error);
        resolve(result(typeof error?.code === 'number' ? error.code : 0, stdout, stderr));
      },
    );
  });
}

/** runCli in this process (or spawned, with ROOKERY_CLI_TEST_SPAWN=1). */
export async function runRookery(
  dataDir: string | null,
  args: readonly string[],
  env: NodeJS.ProcessEnv = {},
): Promise<CliRun> {
  if (process.env.ROOKERY_CLI_TEST_SPAWN === '1') return spawnRookery(dataDir, args, env);
  let stdout = '';
  let stderr = '';
  const code = await runCli(argvFor(dataDir, args), {
    stdout: { write: (text: string) => (stdout += text) },
    stderr: { write: (text: string) => (stderr += text) },
    env: environment(env),
  });
  return result(code, stdout, stderr);
}
