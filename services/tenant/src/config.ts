import path from 'node:path';
import { z } from 'zod';

const boolFromEnv = z.enum(['true', 'false', '1', '0']).transform((v) => v === 'true' || v === '1');

/** The tenant service's configuration, read from `ROOKERY_*` environment variables. */
export const TenantConfigSchema = z.object({
  /** Where the tenant's databases live (`<dataDir>/databases/<name>/docs.db`). */
  dataDir: z.string().min(1).default(path.resolve('.rookery/data')),
  host: z.string().min(1).default('127.0.0.1'),
  /** 0 picks a free port (tests). */
  port: z.coerce.number().int().min(0).max(65535).default(8080),
  /**
   * A Unix socket to listen on instead of host:port: how the host runs one container per tenant
   * (`<ROOKERY_DATA>/tenants/<id>/tenant.sock`) and the gateway reaches it. At most 107 bytes (the OS limit).
   */
  socketPath: z
    .string()
    .min(1)
    .refine((p) => Buffer.byteLength(p) <= 107, 'a Unix socket path is at most 107 bytes long')
    .optional(),
  logLevel: z.enum(['fatal', 'error', 'warn', 'info', 'debug', 'trace', 'silent']).default('info'),
  /** Largest JSON request body (documents, batches), in bytes. Bigger ones get 413. */
  maxBodyBytes: z.coerce
    .number()
    .int()
    .min(1024)
    .default(32 * 1024 * 1024),
  /** Largest single NDJSON line of a bulk insert, in bytes. */
  maxDocumentBytes: z.coerce
    .number()
    .int()
    .min(1024)
    .default(16 * 1024 * 1024),
  /** `full` fsyncs every commit; `normal` only at checkpoints (faster, loses the last commits on power loss). */
  synchronous: z.enum(['full', 'normal']).default('full'),
  compressionThresholdBytes: z.coerce.number().int().min(64).default(4096),
  mergeTransactions: boolFromEnv.default(true),
});
export type TenantConfig = z.infer<typeof TenantConfigSchema>;

const ENV_NAMES: Record<keyof TenantConfig, string> = {
  dataDir: 'ROOKERY_DATA',
  host: 'ROOKERY_HOST',
  port: 'ROOKERY_PORT',
  socketPath: 'ROOKERY_SOCKET',
  logLevel: 'ROOKERY_LOG_LEVEL',
  maxBodyBytes: 'ROOKERY_MAX_BODY_BYTES',
  maxDocumentBytes: 'ROOKERY_MAX_DOCUMENT_BYTES',
  synchronous: 'ROOKERY_SYNCHRONOUS',
  compressionThresholdBytes: 'ROOKERY_COMPRESSION_THRESHOLD_BYTES',
  mergeTransactions: 'ROOKERY_MERGE_TRANSACTIONS',
};

/** Reads the configuration from the environment; a bad value stops start-up with a message naming the variable. */
export function loadConfig(
  env: NodeJS.ProcessEnv = process.env,
  overrides: Partial<TenantConfig> = {},
): TenantConfig {
  const raw: Record<string, unknown> = {};
  for (const [key, name] of Object.entries(ENV_NAMES))
    if (env[name] !== undefined && env[name] !== '') raw[key] = env[name];
  const parsed = TenantConfigSchema.safeParse({ ...raw, ...overrides });
  if (!parsed.success) {
    const problems = parsed.error.issues.map((i) => {
      const key = String(i.path[0]) as keyof TenantConfig;
      return `${ENV_NAMES[key] ?? key}: ${i.message}`;
    });
    throw new Error(`Invalid configuration: ${problems.join('; ')}`);
  }
  return parsed.data;
}
