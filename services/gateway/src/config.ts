import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { LogLevelSchema, loadEnvConfig } from '@rookery/protocol';
import { z } from 'zod';
import { DEFAULT_GATEWAY_HEARTBEAT } from './limit-shares.js';
import { DEFAULT_LIVE_LIMITS } from './live-limits.js';
import { DEFAULT_RAVEN_TCP_LIMITS } from './ravendb-tcp/connection.js';
import { DEFAULT_SERVER_TIMEOUTS } from './server-timeouts.js';
import { TENANT_POOL_MAX_SOCKETS } from './tenant-pool.js';
import { DEFAULT_TWO_FACTOR_LIMIT } from './two-factor.js';

const Milliseconds = z.coerce.number().int().min(0);
/** services/console/dist: two folders up from this file, whether it runs from src/ or dist/. */
const DEFAULT_CONSOLE_DIR = fileURLToPath(new URL('../../console/dist', import.meta.url));

/** The gateway's configuration, read from `ROOKERY_*` environment variables. */
export const GatewayConfigSchema = z
  .object({
    /** Root of the embedded deployment; what lives where is @rookery/control-store's `controlPaths`. */
    dataDir: z.string().min(1).default(path.resolve('.rookery/data')),
    host: z.string().min(1).default('127.0.0.1'),
    port: z.coerce.number().int().min(0).max(65535).default(8443),
    /**
     * The load balancer's health check (health-server.ts): plain HTTP GET /healthz on this port of `host`.
     * Unset: none (one machine); 0 picks a free one.
     */
    healthPort: z.coerce.number().int().min(0).max(65535).optional(),
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
    /**
     * How tenants are reached: `local` (one machine: the host at hostUrl, tenants' Unix sockets) or `fleet`
     * (the control store's placements, each tenant through its host's relay over mutual TLS; fleet-router.ts).
     */
    routing: z.enum(['local', 'fleet']).default('local'),
    /** Fleet routing: how long a tenant's placement is used before the store is asked again (a 421 asks at once). */
    placementCacheMs: Milliseconds.max(60_000).default(3_000),
    /** Fleet routing: from connecting to a host's relay until its answer, which waits for the tenant's wake. */
    relayTimeoutMs: Milliseconds.min(1_000).max(120_000).default(10_000),
    internalToken: z.string().min(16, 'the internal token must be at least 16 characters'),
    logLevel: LogLevelSchema.default('info'),
    /** The HTTPS server's timeouts: server-timeouts.ts says what each bounds (none bounds an answer). */
    headersTimeoutMs: Milliseconds.min(1_000).default(DEFAULT_SERVER_TIMEOUTS.headersTimeoutMs),
    /** 0: no bound on receiving a request (an upload as slow as it likes). */
    requestTimeoutMs: Milliseconds.default(DEFAULT_SERVER_TIMEOUTS.requestTimeoutMs),
    keepAliveTimeoutMs: Milliseconds.min(1_000).default(DEFAULT_SERVER_TIMEOUTS.keepAliveTimeoutMs),
    /** WebSockets one tenant may hold open through this gateway (live-limits.ts). */
    maxSocketsPerTenant: z.coerce.number().int().min(1).default(DEFAULT_LIVE_LIMITS.socketsPerTenant),
    /** Connections the gateway opens to one tenant container (tenant-pool.ts); more requests wait for one. */
    tenantConnections: z.coerce.number().int().min(4).max(4096).default(TENANT_POOL_MAX_SOCKETS),
    /**
     * NDJSON streams, queries, and bulk inserts and sweeps one tenant may have in flight through this
     * gateway (live-limits.ts). Together below the tenant's connections (checked below), so that whatever
     * one class does, the tenant's point reads and writes and administration still get a connection.
     */
    maxStreamsPerTenant: z.coerce.number().int().min(1).default(DEFAULT_LIVE_LIMITS.streamsPerTenant),
    maxQueriesPerTenant: z.coerce.number().int().min(1).default(DEFAULT_LIVE_LIMITS.queriesPerTenant),
    maxBulkPerTenant: z.coerce.number().int().min(1).default(DEFAULT_LIVE_LIMITS.bulkPerTenant),
    /** How long a query or bulk insert over its limit waits for a place before 429 (live-limits.ts); 0: none. */
    queueWaitMs: Milliseconds.max(60_000).default(DEFAULT_LIVE_LIMITS.queueWaitMs),
    /** How many of a tenant's queries (and, apart, bulk inserts) may wait at once; more are refused at once. */
    maxQueuedPerTenant: z.coerce
      .number()
      .int()
      .min(1)
      .max(100_000)
      .default(DEFAULT_LIVE_LIMITS.queuedPerTenant),
    /** TOTP codes a person may try per window, counted for all gateways together (two-factor.ts). */
    twoFactorMaxAttempts: z.coerce
      .number()
      .int()
      .min(1)
      .max(1_000)
      .default(DEFAULT_TWO_FACTOR_LIMIT.maxAttempts),
    /** The window those attempts are counted in; a person who used them all waits for its end. */
    twoFactorWindowSeconds: z.coerce
      .number()
      .int()
      .min(1)
      .max(24 * 60 * 60)
      .default(DEFAULT_TWO_FACTOR_LIMIT.windowMs / 1000),
    /**
     * Share tenants' rate and live-connection limits with the other gateways on the same control store
     * (limit-shares.ts): `auto` does when the store is PostgreSQL (several gateways), not on the embedded file.
     */
    shareLimits: z.enum(['auto', 'on', 'off']).default('auto'),
    /** How often the gateway reports its demand to the store and reads the other gateways'. */
    heartbeatMs: Milliseconds.min(100).max(60_000).default(DEFAULT_GATEWAY_HEARTBEAT.heartbeatMs),
    /** How long the others count a gateway after its last heartbeat (one that died is dropped then). */
    heartbeatTtlMs: Milliseconds.min(200).max(600_000).default(DEFAULT_GATEWAY_HEARTBEAT.ttlMs),
    /** The web console's build served at `/` (console-files.ts); `off` serves none. */
    consoleDir: z.string().min(1).default(DEFAULT_CONSOLE_DIR),
    /**
     * RavenDB's TCP protocol for the official clients' subscription workers (ravendb-tcp/), on this port of
     * `host`; `off`: none, and the worker is told so (501). Unset: RavenDB's own default, 38888, or a free
     * port when the HTTPS port is 0 (tests, several gateways on one machine). On by default: the official
     * client is promised to work unchanged, and the port admits exactly what the HTTPS port admits.
     */
    ravenTcpPort: z.union([z.literal('off'), z.coerce.number().int().min(0).max(65535)]).optional(),
    /** From a TCP connection's TLS handshake until its subscription options: longer, and it is cut. */
    ravenTcpNegotiationTimeoutMs: Milliseconds.min(100)
      .max(120_000)
      .default(DEFAULT_RAVEN_TCP_LIMITS.negotiationTimeoutMs),
  })
  .refine((c) => c.heartbeatTtlMs >= 2 * c.heartbeatMs, {
    path: ['heartbeatTtlMs'],
    message:
      'the heartbeat TTL must be at least twice the heartbeat interval, or one late heartbeat drops a live gateway from the count',
  })
  .refine((c) => c.requestTimeoutMs === 0 || c.headersTimeoutMs <= c.requestTimeoutMs, {
    path: ['headersTimeoutMs'],
    message: 'the headers timeout cannot be longer than the request timeout (which includes the headers)',
  })
  .refine((c) => c.maxStreamsPerTenant + c.maxQueriesPerTenant + c.maxBulkPerTenant < c.tenantConnections, {
    path: ['maxStreamsPerTenant'],
    message:
      "streams, queries and bulk inserts per tenant (…_MAX_STREAMS_PER_TENANT + …_MAX_QUERIES_PER_TENANT + …_MAX_BULK_PER_TENANT) must add up to fewer than ROOKERY_GATEWAY_TENANT_CONNECTIONS, to leave connections to the tenant's other requests",
  });
export type GatewayConfig = z.infer<typeof GatewayConfigSchema>;

const ENV_NAMES: Record<keyof GatewayConfig, string> = {
  dataDir: 'ROOKERY_DATA',
  host: 'ROOKERY_GATEWAY_HOST',
  port: 'ROOKERY_GATEWAY_PORT',
  healthPort: 'ROOKERY_GATEWAY_HEALTH_PORT',
  serverNames: 'ROOKERY_GATEWAY_NAMES',
  controlDatabaseUrl: 'ROOKERY_CONTROL_DATABASE_URL',
  hostUrl: 'ROOKERY_HOST_URL',
  routing: 'ROOKERY_GATEWAY_ROUTING',
  placementCacheMs: 'ROOKERY_GATEWAY_PLACEMENT_CACHE_MS',
  relayTimeoutMs: 'ROOKERY_GATEWAY_RELAY_TIMEOUT_MS',
  internalToken: 'ROOKERY_INTERNAL_TOKEN',
  logLevel: 'ROOKERY_LOG_LEVEL',
  headersTimeoutMs: 'ROOKERY_GATEWAY_HEADERS_TIMEOUT_MS',
  requestTimeoutMs: 'ROOKERY_GATEWAY_REQUEST_TIMEOUT_MS',
  keepAliveTimeoutMs: 'ROOKERY_GATEWAY_KEEPALIVE_TIMEOUT_MS',
  maxSocketsPerTenant: 'ROOKERY_GATEWAY_MAX_SOCKETS_PER_TENANT',
  tenantConnections: 'ROOKERY_GATEWAY_TENANT_CONNECTIONS',
  maxStreamsPerTenant: 'ROOKERY_GATEWAY_MAX_STREAMS_PER_TENANT',
  maxQueriesPerTenant: 'ROOKERY_GATEWAY_MAX_QUERIES_PER_TENANT',
  queueWaitMs: 'ROOKERY_GATEWAY_QUEUE_WAIT_MS',
  maxQueuedPerTenant: 'ROOKERY_GATEWAY_MAX_QUEUED_PER_TENANT',
  maxBulkPerTenant: 'ROOKERY_GATEWAY_MAX_BULK_PER_TENANT',
  twoFactorMaxAttempts: 'ROOKERY_GATEWAY_TWO_FACTOR_MAX_ATTEMPTS',
  twoFactorWindowSeconds: 'ROOKERY_GATEWAY_TWO_FACTOR_WINDOW_SECONDS',
  shareLimits: 'ROOKERY_GATEWAY_SHARE_LIMITS',
  heartbeatMs: 'ROOKERY_GATEWAY_HEARTBEAT_MS',
  heartbeatTtlMs: 'ROOKERY_GATEWAY_HEARTBEAT_TTL_MS',
  consoleDir: 'ROOKERY_CONSOLE_DIR',
  ravenTcpPort: 'ROOKERY_RAVEN_TCP_PORT',
  ravenTcpNegotiationTimeoutMs: 'ROOKERY_RAVEN_TCP_NEGOTIATION_TIMEOUT_MS',
};

/** Whether this gateway shares its tenants' limits with others, and how it keeps in touch with them. */
export function gatewayFleetOf(config: GatewayConfig): { heartbeatMs: number; ttlMs: number } | null {
  const on =
    config.shareLimits === 'on' || (config.shareLimits === 'auto' && config.controlDatabaseUrl !== undefined);
  return on ? { heartbeatMs: config.heartbeatMs, ttlMs: config.heartbeatTtlMs } : null;
}

/** The RavenDB TCP listener's settings (gateway.ts's `ravenTcp`); null when it is off. */
export function ravenTcpOf(config: GatewayConfig): { port: number; negotiationTimeoutMs: number } | null {
  if (config.ravenTcpPort === 'off') return null;
  const port = config.ravenTcpPort ?? (config.port === 0 ? 0 : RAVEN_TCP_DEFAULT_PORT);
  return { port, negotiationTimeoutMs: config.ravenTcpNegotiationTimeoutMs };
}

/** RavenDB's own default TCP port. */
const RAVEN_TCP_DEFAULT_PORT = 38888;

/** Reads the configuration; a bad value stops start-up with a message naming the variable. */
export function loadGatewayConfig(env: NodeJS.ProcessEnv = process.env): GatewayConfig {
  return loadEnvConfig('gateway', GatewayConfigSchema, ENV_NAMES, env);
}
