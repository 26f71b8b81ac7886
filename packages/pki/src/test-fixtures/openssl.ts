// Runs the system's openssl (a real, independent implementation) to check what we write.
import { execFile } from 'node:child_process';

export const OPENSSL = '/usr/bin/openssl';

export interface RunResult {
  code: number;
  stdout: string;
  stderr: string;
}

export function openssl(args: string[], input?: string | Buffer): Promise<RunResult> {
  return new Promise((resolve) => {
    const child = execFile(OPENSSL, args, { encoding: 'utf8' }, (error, stdout, stderr) => {
      const code = error === null ? 0 : typeof error.code === 'number' ? error.code : 1;
      resolve({ code, stdout, stderr });
    });
    if (input !== undefined) child.stdin?.end(input);
    else child.stdin?.end();
  });
}
