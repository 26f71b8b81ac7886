#!/usr/bin/env node
// The tenant container: one process serving one tenant's databases over HTTP.
import { loadConfig } from './config.js';
import { buildTenantServer } from './server.js';

const SHUTDOWN_DEADLINE_MS = 10_000;

const config = loadConfig();
const server = buildTenantServer(config);
const address = await server.app.listen({ host: config.host, port: config.port });
server.app.log.info({ address, dataDir: config.dataDir }, 'tenant service listening');
// A supervisor that started us over IPC learns the address without parsing logs.
if (process.send) process.send({ ready: true, address });

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  server.app.log.info({ signal }, 'shutting down: draining requests and committing queued writes');
  const deadline = setTimeout(() => {
    server.app.log.error('shutdown deadline passed; exiting with work in flight');
    process.exit(1);
  }, SHUTDOWN_DEADLINE_MS);
  deadline.unref();
  await server.close();
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
