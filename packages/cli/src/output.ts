// Output for people (aligned tables, sentences) or, with --json, one JSON
// document on stdout for scripts. Human text may change; the JSON shape and
// the error codes are what scripts should rely on.
import type { Role } from '@rookery/control-store';

export interface CliIo {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  env: NodeJS.ProcessEnv;
}

/** Columns padded to their widest cell; numbers are right-aligned. */
export function formatTable(
  headers: readonly string[],
  rows: readonly (readonly (string | number)[])[],
): string {
  const cells = [headers.map(String), ...rows.map((row) => row.map(String))];
  const widths = headers.map((_, column) => Math.max(...cells.map((row) => (row[column] ?? '').length)));
  const numeric = headers.map(
    (_, column) => rows.length > 0 && rows.every((row) => typeof row[column] === 'number'),
  );
  const line = (row: readonly string[]) =>
    row
      .map((cell, column) =>
        numeric[column] ? cell.padStart(widths[column]!) : cell.padEnd(widths[column]!),
      )
      .join('  ')
      .trimEnd();
  return [line(cells[0]!), ...cells.slice(1).map(line)].join('\n');
}

export function isoTime(ms: number | null): string {
  return ms === null ? '-' : new Date(ms).toISOString();
}

const UNITS = ['B', 'KiB', 'MiB', 'GiB', 'TiB'] as const;

/** 1073741824 → "1 GiB"; exact multiples only, so the text reads back as the same number. */
export function formatBytes(bytes: number): string {
  let value = bytes;
  let unit = 0;
  while (unit < UNITS.length - 1 && value >= 1024 && value % 1024 === 0) {
    value /= 1024;
    unit++;
  }
  return `${value} ${UNITS[unit]}`;
}

/** A role as it is typed on the command line: `tenant-admin`, `db:shop=read-only db:orders=read-write`. */
export function roleText(role: Role): string {
  if (role.kind !== 'database') return role.kind;
  return Object.entries(role.access)
    .map(([name, access]) => `db:${name}=${access}`)
    .join(' ');
}
