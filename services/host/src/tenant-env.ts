// The environment a tenant process starts with: the host's environment minus the host's own settings
// (the internal token above all), plus the tenant settings an operator sets once for every tenant of the
// host, the tenant's log level and its heap limit.
import type { HostConfig } from './config.js';

/** Tenant settings a host passes on to its tenants; every other ROOKERY_* variable (the token!) stays here. */
export const TENANT_SETTINGS: ReadonlySet<string> = new Set([
  'ROOKERY_MAX_BODY_BYTES',
  'ROOKERY_MAX_DOCUMENT_BYTES',
  'ROOKERY_SYNCHRONOUS',
  'ROOKERY_COMPRESSION_THRESHOLD_BYTES',
  'ROOKERY_MERGE_TRANSACTIONS',
  // The mirror: one directory for every tenant (each writes under its own id, which the tenant
  // takes from its data directory's name), a default mode, per-database modes and tuning.
  'ROOKERY_MIRROR',
  'ROOKERY_MIRROR_MODE',
  'ROOKERY_MIRROR_DATABASES',
  'ROOKERY_MIRROR_SNAPSHOT_MB',
  'ROOKERY_MIRROR_SNAPSHOT_MINUTES',
  'ROOKERY_MIRROR_RETENTION_HOURS',
  'ROOKERY_MIRROR_MAX_LAG_MS',
  'ROOKERY_MIRROR_CONFIRM_TIMEOUT_MS',
  // What a tenant's index code may cost its indexer (the tenant's config.ts).
  'ROOKERY_INDEX_MAX_PER_DATABASE',
  'ROOKERY_INDEX_SANDBOX_BUDGET_MB',
  'ROOKERY_INDEX_SANDBOX_MEMORY_MB',
  'ROOKERY_INDEX_DOCUMENT_TIMEOUT_MS',
  'ROOKERY_INDEX_BATCH_TIME_MS',
  'ROOKERY_INDEX_MAX_ENTRIES_PER_DOCUMENT',
  // How long a tenant waits for its indexer process to answer a request before failing it with 503.
  'ROOKERY_INDEXER_REQUEST_TIMEOUT_MS',
]);

/** The host's environment (`source`) as every tenant process gets it. */
export function tenantEnvironment(
  source: NodeJS.ProcessEnv,
  config: Pick<HostConfig, 'tenantLogLevel' | 'tenantHeapMb'>,
): NodeJS.ProcessEnv {
  const env: NodeJS.ProcessEnv = {};
  for (const [key, value] of Object.entries(source)) {
    if (!key.startsWith('ROOKERY_') || TENANT_SETTINGS.has(key)) env[key] = value;
  }
  env.ROOKERY_LOG_LEVEL = config.tenantLogLevel;
  // In NODE_OPTIONS so that the indexer the tenant forks gets the same heap limit.
  env.NODE_OPTIONS = [source.NODE_OPTIONS, `--max-old-space-size=${config.tenantHeapMb}`]
    .filter(Boolean)
    .join(' ');
  return env;
}
