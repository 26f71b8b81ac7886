#!/usr/bin/env node
// The host: supervises one process per tenant on this machine and answers the gateway on 127.0.0.1.
// SIGTERM/SIGINT stop the API, then every tenant in parallel within the shutdown deadline.
import pino from 'pino';
import { loadHostConfig } from './config.js';
import { buildHostServer } from './server.js';
import { TenantSupervisor } from './supervisor.js';

const config = loadHostConfig();
const logger = pino({ level: config.logLevel, base: { service: 'host' } });
const supervisor = new TenantSupervisor(config, { logger });
const app = buildHostServer({ supervisor, internalToken: config.internalToken, logger });
const address = await app.listen({ host: config.host, port: config.port });
logger.info({ address, dataDir: config.dataDir }, 'host listening');
if (process.send) process.send({ ready: true, address });

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'shutting down: stopping the API, then every tenant');
  // Tenants get the whole deadline; the API only stops taking requests.
  const [, result] = await Promise.all([app.close(), supervisor.shutdown(config.shutdownDeadlineMs)]);
  logger.info(result, 'host stopped');
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
