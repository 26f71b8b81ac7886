// The benches' command-line options, `--name value`, read the same way by every bench.
import path from 'node:path';

/** The number after `--name`, or `fallback` when the option is not given. */
export function arg(name: string, fallback: number): number {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? fallback : Number(process.argv[i + 1]);
}

/** The directory after `--name`, resolved; null when the option is not given. */
export function dirArg(name: string): string | null {
  const i = process.argv.indexOf(`--${name}`);
  return i === -1 ? null : path.resolve(process.argv[i + 1] ?? '');
}
