// Types of services.mjs for the TypeScript callers (loadtests/).
import type { ChildProcess, IOType } from 'node:child_process';

export function readOrCreateSecret(file: string): string;

export function spawnService(
  name: string,
  entry: string,
  options: { env: NodeJS.ProcessEnv; stdio?: IOType | number; nodeArgs?: string[] },
): { child: ChildProcess; ready: Promise<unknown> };

export const SERVICE_NODE_FLAGS: readonly string[];

export function spawnReady(
  name: string,
  command: string,
  args: readonly string[],
  options: { env: NodeJS.ProcessEnv; stdio?: IOType | number; cwd?: string },
): { child: ChildProcess; ready: Promise<unknown> };
