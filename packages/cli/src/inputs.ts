// Command-line values are text; these zod schemas turn them into what the
// admin operations take, and parseCommandInput reports a bad one by the flag
// or argument the person typed (`--storage: ...`), as a RookeryError
// `InvalidRequest`.

import type { DatabaseAccess, Role } from '@rookery/control-store';
import { DatabaseNameSchema, RookeryError } from '@rookery/protocol';
import { z } from 'zod';

/** Whole numbers as typed: digits only (commander hands over strings). */
export const CountArg = z
  .string()
  .regex(/^\d+$/, 'expected a whole number')
  .transform(Number)
  .pipe(z.number().int().max(Number.MAX_SAFE_INTEGER));

const SIZE_UNITS: Record<string, number> = {
  '': 1,
  b: 1,
  kib: 2 ** 10,
  mib: 2 ** 20,
  gib: 2 ** 30,
  tib: 2 ** 40,
};

/** A byte count: `1073741824`, `512MiB`, `10 GiB` (binary units only, so nobody guesses 1000 vs 1024). */
export const SizeArg = z
  .string()
  .trim()
  .regex(/^\d+\s*(b|kib|mib|gib|tib)?$/i, 'expected bytes, optionally with KiB, MiB, GiB or TiB (e.g. 10GiB)')
  .transform((text) => {
    const [, digits, unit = ''] = /^(\d+)\s*([a-z]*)$/i.exec(text)!;
    return Number(digits) * SIZE_UNITS[unit.toLowerCase()]!;
  })
  .pipe(z.number().int().max(Number.MAX_SAFE_INTEGER, 'that is more bytes than can be counted exactly'));

/** A point in time: ISO 8601 (`2025-01-31`, `2025-01-31T12:00Z`) or epoch milliseconds. */
export const TimeArg = z
  .string()
  .trim()
  .transform((text, context) => {
    const ms = /^\d+$/.test(text) ? Number(text) : Date.parse(text);
    if (!Number.isFinite(ms) || ms < 0) {
      context.addIssue({ code: 'custom', message: 'expected an ISO date/time or epoch milliseconds' });
      return z.NEVER;
    }
    return ms;
  });

export const PasswordOptions = {
  password: z.string().min(1, 'a password cannot be empty').optional(),
  passwordFile: z.string().min(1).optional(),
};

const DatabaseGrant = z
  .string()
  .regex(/^db:[^=]+=(read-write|read-only)$/, 'expected db:<name>=read-write or db:<name>=read-only')
  .transform((text) => {
    const [name, access] = text.slice(3).split('=') as [string, DatabaseAccess];
    return { name, access };
  })
  .pipe(z.object({ name: DatabaseNameSchema, access: z.enum(['read-write', 'read-only']) }));

/**
 * `--role` values: `operator`, `tenant-admin`, or one or more
 * `db:<name>=read-write|read-only` that together make one per-database role.
 */
export const RoleArgs = z
  .array(z.string())
  .min(1, 'give a role: tenant-admin, operator, or db:<name>=read-write|read-only')
  .transform((values, context): Role => {
    if (values.length === 1 && (values[0] === 'operator' || values[0] === 'tenant-admin')) {
      return { kind: values[0] };
    }
    const access: Record<string, DatabaseAccess> = {};
    for (const value of values) {
      const grant = DatabaseGrant.safeParse(value);
      if (!grant.success) {
        context.addIssue({
          code: 'custom',
          message: `"${value}": ${grant.error.issues[0]?.message ?? 'invalid'}; operator and tenant-admin stand alone`,
        });
        return z.NEVER;
      }
      access[grant.data.name] = grant.data.access;
    }
    return { kind: 'database', access };
  });

/**
 * `--wait [seconds]`: absent → null (do not wait), bare → `defaultSeconds`, else 1…`maxSeconds`
 * (commander hands over `true` for the bare flag, a string otherwise).
 */
export function waitOption(defaultSeconds: number, maxSeconds = 3600) {
  return z
    .union([z.literal(true), z.coerce.number().int().min(1).max(maxSeconds)])
    .optional()
    .transform((wait) => (wait === undefined ? null : wait === true ? defaultSeconds : wait));
}

/** `requestsPerSecond` → `--requests-per-second`: errors name what the person typed. */
function flagOf(option: string): string {
  return `--${option.replace(/[A-Z]/g, (c) => `-${c.toLowerCase()}`)}`;
}

export interface CommandInput {
  args: unknown[];
  options: Record<string, unknown>;
}

/** Parses a command's arguments and options; `argNames` are the `<names>` in its usage line. */
export function parseCommandInput<T>(
  schema: z.ZodType<T>,
  input: CommandInput,
  argNames: readonly string[] = [],
): T {
  const result = schema.safeParse(input);
  if (result.success) return result.data;
  const issue = result.error.issues[0]!;
  const [group, key] = issue.path;
  const where =
    group === 'options' && typeof key === 'string'
      ? flagOf(key)
      : group === 'args' && typeof key === 'number'
        ? `<${argNames[key] ?? `argument ${key + 1}`}>`
        : 'input';
  throw new RookeryError('InvalidRequest', `${where}: ${issue.message}.`);
}
