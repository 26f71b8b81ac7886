#!/usr/bin/env node
// The worker process: runs backup and restore jobs from the queue and schedules backups, until
// SIGTERM/SIGINT, which stop claiming new jobs and wait for the running ones to end.
import fs from 'node:fs';
import path from 'node:path';
import { controlPaths } from '@rookery/control-store';
import { loadOrCreateMasterKey } from '@rookery/pki';
import pino from 'pino';
import { loadWorkerConfig } from './config.js';
import { startWorker } from './worker.js';

const config = loadWorkerConfig();
const logger = pino({ level: config.logLevel, base: { service: 'worker' } });
// The control plane's key: created here if the worker is the first process on a fresh data directory.
const masterKeyFile = config.masterKeyFile ?? controlPaths(config.dataDir).masterKey;
fs.mkdirSync(path.dirname(masterKeyFile), { recursive: true });
const masterKey = await loadOrCreateMasterKey(masterKeyFile);
const worker = await startWorker({ config, masterKey, logger });
logger.info({ url: worker.url }, 'worker ready');
if (process.send) process.send({ ready: true, url: worker.url });

let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  logger.info({ signal }, 'worker shutting down: waiting for running jobs');
  await worker.close();
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
