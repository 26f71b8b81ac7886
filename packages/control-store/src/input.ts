// Everything that takes input from outside (store methods, admin operations for
// the CLI and later the control API) parses it with zod first and answers a bad
// value with a RookeryError `InvalidRequest` that names the field.
import { RookeryError } from '@rookery/protocol';
import type { z } from 'zod';

export function parseInput<T>(schema: z.ZodType<T>, value: unknown, what: string): T {
  const result = schema.safeParse(value);
  if (result.success) return result.data;
  const issue = result.error.issues[0];
  const where = issue && issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
  throw new RookeryError(
    'InvalidRequest',
    `The ${what} is not valid: ${where}${issue?.message ?? 'invalid'}.`,
  );
}
