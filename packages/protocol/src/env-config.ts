import { z } from 'zod';

/** pino's levels, as every service's ROOKERY_LOG_LEVEL accepts them. */
export const LogLevelSchema = z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']);

/**
 * Reads a service's configuration: each key's ROOKERY_* variable (unset or empty: the schema's default),
 * then the overrides (tests and embedded starts), parsed with the service's schema. A bad value stops
 * start-up with a message naming the variable to fix, not the internal key.
 */
export function loadEnvConfig<S extends z.ZodType<unknown, Record<string, unknown>>>(
  what: string,
  schema: S,
  envNames: Record<keyof z.input<S> & string, string>,
  env: NodeJS.ProcessEnv,
  overrides: Partial<z.input<S>> = {},
): z.output<S> {
  const names: Record<string, string> = envNames;
  const raw: Record<string, unknown> = {};
  for (const [key, name] of Object.entries(names)) {
    const value = env[name];
    if (value !== undefined && value !== '') raw[key] = value;
  }
  const parsed = schema.safeParse({ ...raw, ...overrides });
  if (!parsed.success) {
    const problems = parsed.error.issues.map((issue) => {
      const key = String(issue.path[0]);
      return `${names[key] ?? key}: ${issue.message}`;
    });
    throw new Error(`Invalid ${what} configuration: ${problems.join('; ')}`);
  }
  return parsed.data;
}
