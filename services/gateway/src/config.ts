import path from 'node:path';
import { LogLevelSchema, loadEnvConfig } from '@rookery/protocol';
import { z } from 'zod';

/** The gateway's configuration, read from `ROOKERY_*` environment variables. */
export const GatewayConfigSchema = z.object({
  /** Root of the embedded deployment; what lives where is @rookery/control's `controlPaths`. */
  dataDir: z.string().min(1).default(path.resolve('.rookery/data')),
  host: z.string().min(1).default('127.0.0.1'),
  port: z.coerce.number().int().min(0).max(65535).default(8443),
  /** Names the server certificate is issued for (comma-separated). */
  serverNames: z
    .string()
    .default('localhost,127.0.0.1,::1')
    .transform((v) =>
      v
        .split(',')
        .map((s) => s.trim())
        .filter(Boolean),
    ),
  /** PostgreSQL connection string for the scale-out control plane; the embedded SQLite file otherwise. */
  controlDatabaseUrl: z.string().url().optional(),
  hostUrl: z.string().url().default('http://127.0.0.1:8081'),
  internalToken: z.string().min(16, 'the internal token must be at least 16 characters'),
  logLevel: LogLevelSchema.default('info'),
});
export type GatewayConfig = z.infer<typeof GatewayConfigSchema>;

const ENV_NAMES: Record<keyof GatewayConfig, string> = {
  dataDir: 'ROOKERY_DATA',
  host: 'ROOKERY_GATEWAY_HOST',
  port: 'ROOKERY_GATEWAY_PORT',
  serverNames: 'ROOKERY_GATEWAY_NAMES',
  controlDatabaseUrl: 'ROOKERY_CONTROL_DATABASE_URL',
  hostUrl: 'ROOKERY_HOST_URL',
  internalToken: 'ROOKERY_INTERNAL_TOKEN',
  logLevel: 'ROOKERY_LOG_LEVEL',
};

/** Reads the configuration; a bad value stops start-up with a message naming the variable. */
export function loadGatewayConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  return loadEnvConfig('gateway', GatewayConfigSchema, ENV_NAMES, env);
}
