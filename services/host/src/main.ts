#!/usr/bin/env node
// The host: supervises one process per tenant on this machine and answers the gateway on 127.0.0.1.
// SIGTERM/SIGINT stop the API, then every tenant in parallel within the shutdown deadline.
import { openJobQueue } from '@rookery/jobs';
import { ROOKERY_JOB_TYPES } from '@rookery/protocol';
import pino from 'pino';
import { loadHostConfig } from './config.js';
import { FleetMode } from './fleet-mode.js';
import { DEFAULT_INDEX_WORKER_THRESHOLD, IndexBuildQueue } from './index-builds.js';
import { buildRelayServer } from './relay-server.js';
import { loadRelayTls } from './relay-tls.js';
import { buildHostServer } from './server.js';
import { TenantSupervisor } from './supervisor.js';

const config = loadHostConfig();
const logger = pino({ level: config.logLevel, base: { service: 'host' } });
// Fleet mode only with ROOKERY_HOST_ID (fleet-mode.ts); else null and nothing below touches the control store.
const fleet = await FleetMode.open(config, logger);
// Worker-built indexes: on by default in a fleet, where workers take jobs from the control store's queue.
const indexWorkerThreshold = config.indexWorkerThreshold ?? (fleet ? DEFAULT_INDEX_WORKER_THRESHOLD : 0);
const jobs =
  indexWorkerThreshold > 0
    ? await openJobQueue({
        dataDir: config.dataDir,
        databaseUrl: config.controlDatabaseUrl,
        types: ROOKERY_JOB_TYPES,
        logger,
      })
    : null;
const indexBuilds = jobs && new IndexBuildQueue(jobs, indexWorkerThreshold, logger);
const supervisor = new TenantSupervisor(config, {
  logger,
  ...(fleet && { lease: fleet.leaseSource }),
  ...(indexBuilds && { indexBuilds }),
});
const app = buildHostServer({
  supervisor,
  internalToken: config.internalToken,
  logger,
  ...(fleet && { ownership: fleet.ownership, moves: fleet.moves }),
});
const address = await app.listen({ host: config.host, port: config.port });
logger.info({ address, dataDir: config.dataDir }, 'host listening');
// Fleet mode: the relay port (mutual TLS) is how gateways on other machines reach this host's tenants;
// its address is the one registered with the lease unless ROOKERY_HOST_ADVERTISE_URL says otherwise.
const relay =
  fleet &&
  buildRelayServer({
    supervisor,
    internalToken: config.internalToken,
    logger,
    ownership: fleet.ownership,
    moves: fleet.moves,
    tls: await loadRelayTls(config),
  });
const relayAddress =
  relay && (await relay.listen({ host: config.relayHost ?? config.host, port: config.relayPort }));
if (relayAddress) logger.info({ relayAddress }, 'relay listening');
// Until the lease is held, every tenant request answers 503 LeaseExpired (no live lease).
await fleet?.start(supervisor, relayAddress ?? address);
if (process.send) process.send({ ready: true, address, ...(relayAddress && { relayAddress }) });

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'shutting down: stopping the API, then every tenant');
  // Tenants get the whole deadline; the API only stops taking requests.
  const [, , result] = await Promise.all([
    app.close(),
    relay?.close(),
    supervisor.shutdown(config.shutdownDeadlineMs),
  ]);
  await fleet?.close();
  indexBuilds?.close();
  await jobs?.close();
  logger.info(result, 'host stopped');
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
