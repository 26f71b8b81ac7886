// The global options every command shares: which control plane to work on.
// The defaults are the ones `npm start` uses, so `./rookery …` next to a
// running `npm start` reaches the same tenants without any flag.
import path from 'node:path';
import { RookeryError } from '@rookery/protocol';
import { z } from 'zod';

/** The repository root: this file sits in packages/cli/src (sources) or packages/cli/dist (built). */
const repositoryRoot = path.resolve(import.meta.dirname, '..', '..', '..');

export function defaultDataDir(env: NodeJS.ProcessEnv): string {
  return env.ROOKERY_DATA || path.join(repositoryRoot, '.rookery', 'data');
}

const SettingsSchema = z.object({
  dataDir: z
    .string()
    .min(1)
    .transform((dir) => path.resolve(dir)),
  databaseUrl: z
    .string()
    .regex(/^postgres(ql)?:\/\//, 'expected a postgres:// or postgresql:// connection string')
    .optional(),
  json: z.boolean(),
});
export type Settings = z.infer<typeof SettingsSchema>;

/** Flags first, then ROOKERY_DATA / ROOKERY_CONTROL_DATABASE_URL (the gateway's names), then the defaults. */
export function resolveSettings(
  flags: { data?: unknown; databaseUrl?: unknown; json?: unknown },
  env: NodeJS.ProcessEnv,
): Settings {
  const parsed = SettingsSchema.safeParse({
    dataDir: flags.data ?? defaultDataDir(env),
    databaseUrl: flags.databaseUrl ?? (env.ROOKERY_CONTROL_DATABASE_URL || undefined),
    json: flags.json === true,
  });
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const flag = issue.path[0] === 'databaseUrl' ? '--database-url' : '--data';
  throw new RookeryError('InvalidRequest', `${flag}: ${issue.message}.`);
}
