#!/usr/bin/env node
// The gateway process: loads the CA, the master key and its server
// certificate, opens the control store, and serves HTTPS until SIGTERM.
import { controlPaths, openControlStore } from '@rookery/control-store';
import { openJobQueue } from '@rookery/jobs';
import { loadOrCreateCertificateAuthority, loadOrCreateMasterKey } from '@rookery/pki';
import { ROOKERY_JOB_TYPES } from '@rookery/protocol';
import pino from 'pino';
import { gatewayFleetOf, loadGatewayConfig, ravenTcpOf } from './config.js';
import { FleetRouter } from './fleet-router.js';
import { startGateway } from './gateway.js';
import { startHealthServer } from './health-server.js';
import { HostClient } from './host-client.js';
import {
  ensureRelayClientCertificate,
  ensureServerCertificate,
  watchServerCertificate,
} from './server-certificate.js';

const config = loadGatewayConfig();
const log = pino({ level: config.logLevel, base: { service: 'gateway' } });
const paths = controlPaths(config.dataDir);
const ca = await loadOrCreateCertificateAuthority(paths.certificateAuthority);
const masterKey = await loadOrCreateMasterKey(paths.masterKey);
const serverCertificate = await ensureServerCertificate(ca, paths.serverCertificate, config.serverNames);
const store = await openControlStore({ dataDir: config.dataDir, databaseUrl: config.controlDatabaseUrl });
// The workers' queue, where the control plane reads job status and enqueues backups: beside the store.
const jobs = await openJobQueue({
  dataDir: config.dataDir,
  databaseUrl: config.controlDatabaseUrl,
  types: ROOKERY_JOB_TYPES,
  logger: log,
});
// Fleet routing: tenants are reached through the host the store places them on, with the gateway's own
// certificate (issued from the CA beside its server certificate) on every relay connection.
const router =
  config.routing === 'fleet'
    ? new FleetRouter({
        store,
        credentials: {
          ...(await ensureRelayClientCertificate(ca, paths.serverCertificate)),
          caPem: ca.certPem,
          internalToken: config.internalToken,
          handshakeTimeoutMs: config.relayTimeoutMs,
        },
        placementCacheMs: config.placementCacheMs,
        maxSockets: config.tenantConnections,
      })
    : undefined;

const gateway = await startGateway({
  host: config.host,
  port: config.port,
  ca,
  serverCertificate,
  store,
  hosts: new HostClient(config.hostUrl, config.internalToken),
  ...(router && { router }),
  masterKey,
  jobs,
  logger: log,
  timeouts: {
    headersTimeoutMs: config.headersTimeoutMs,
    requestTimeoutMs: config.requestTimeoutMs,
    keepAliveTimeoutMs: config.keepAliveTimeoutMs,
  },
  liveLimits: {
    socketsPerTenant: config.maxSocketsPerTenant,
    streamsPerTenant: config.maxStreamsPerTenant,
    queriesPerTenant: config.maxQueriesPerTenant,
    bulkPerTenant: config.maxBulkPerTenant,
    queueWaitMs: config.queueWaitMs,
    queuedPerTenant: config.maxQueuedPerTenant,
  },
  tenantConnections: config.tenantConnections,
  fleet: gatewayFleetOf(config),
  consoleDir: config.consoleDir === 'off' ? null : config.consoleDir,
  ravenTcp: ravenTcpOf(config),
  twoFactorLimit: {
    maxAttempts: config.twoFactorMaxAttempts,
    windowMs: config.twoFactorWindowSeconds * 1000,
  },
});
const stopWatching = watchServerCertificate(paths.serverCertificate, (c) =>
  gateway.rotateServerCertificate(c),
);
let stopping = false;
// The load balancer's check (health-server.ts): 503 from the first moment of a shutdown.
const health =
  config.healthPort === undefined
    ? undefined
    : await startHealthServer({ host: config.host, port: config.healthPort, serving: () => !stopping });
log.info({ url: gateway.url, health: health?.url }, 'gateway ready');
if (process.send) process.send({ ready: true, url: gateway.url, ...(health && { healthUrl: health.url }) });

async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  log.info({ signal }, 'gateway shutting down');
  stopWatching();
  await gateway.close();
  await health?.close();
  await jobs.close();
  await store.close();
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
