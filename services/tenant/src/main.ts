#!/usr/bin/env node
// The tenant container: one process serving one tenant's databases over HTTP, on host:port or, when the
// host supervises it, on a Unix socket (ROOKERY_SOCKET). Started as a spare (ROOKERY_SPARE=1, forked by the
// host), it loads its code, boots its indexer process and waits for the host to tell it which tenant to
// serve: a cold start then skips booting Node and loading modules, for the tenant and for its indexer.
import fs from 'node:fs';
import net from 'node:net';
import os from 'node:os';
import path from 'node:path';
import {
  IndexBuildProgressMessageSchema,
  LeaseMeasuredAtMsSchema,
  LeaseRemainingMsSchema,
  PlacementEpochSchema,
} from '@rookery/protocol';
import pino from 'pino';
import { z } from 'zod';
import { loadConfig } from './config.js';
import { IndexerProcess } from './indexing/indexer-process.js';
import { RelayConnections } from './relay-connections.js';
import { buildTenantServer, type TenantServer } from './server.js';

const SHUTDOWN_DEADLINE_MS = 10_000;
/** How often a supervised tenant tells its parent when it last served a request (for idle stop). */
const ACTIVITY_INTERVAL_MS = 1_000;

/**
 * Removes a socket file left by a process that died without closing it. A socket someone still answers on
 * means another process serves this tenant: two writers on one docs.db must never happen, so we stop.
 */
async function removeStaleSocket(socketPath: string): Promise<void> {
  let stat: fs.Stats;
  try {
    stat = fs.lstatSync(socketPath);
  } catch {
    return; // nothing there
  }
  if (!stat.isSocket())
    throw new Error(`${socketPath} exists and is not a socket; remove it or pick another path`);
  const live = await new Promise<boolean>((resolve) => {
    const probe = net.connect(socketPath);
    probe.once('connect', () => {
      probe.destroy();
      resolve(true);
    });
    probe.once('error', () => resolve(false));
  });
  if (live) throw new Error(`Another process is already serving on ${socketPath}`);
  fs.rmSync(socketPath, { force: true });
}

/** Sends to the supervisor, ignoring a channel that closed meanwhile (the 'disconnect' handler takes over). */
function tellParent(message: object): void {
  if (process.send && process.connected) process.send(message, undefined, {}, () => {});
}

const AssignmentSchema = z.object({
  type: z.literal('assign'),
  dataDir: z.string().min(1),
  socketPath: z.string().min(1),
  // In a fleet (docs/scale-out.md): this owner's epoch, and what the host's lease has left.
  placementEpoch: PlacementEpochSchema.optional(),
  leaseRemainingMs: LeaseRemainingMsSchema.optional(),
  leaseMeasuredAtMs: LeaseMeasuredAtMsSchema.optional(),
});

/**
 * Runs a throwaway server in a scratch directory (health check, create and list a database) so that what
 * Node and fastify load and compile lazily on first use is ready before the spare gets its tenant.
 * Measured: the first Fastify instance alone costs ~80 ms of lazy loading.
 */
async function warmUp(): Promise<void> {
  const scratch = fs.mkdtempSync(path.join(os.tmpdir(), 'rookery-warm-'));
  try {
    const warm = buildTenantServer(loadConfig({}, { dataDir: scratch, logLevel: 'silent' }));
    await warm.app.inject({ method: 'GET', url: '/health' });
    await warm.app.inject({ method: 'PUT', url: '/admin/databases', payload: { Name: 'warm' } });
    await warm.app.inject({ method: 'GET', url: '/databases' });
    await warm.close();
  } finally {
    fs.rmSync(scratch, { recursive: true, force: true });
  }
}

interface Assigned {
  env: NodeJS.ProcessEnv;
  indexer: IndexerProcess;
}

/**
 * A spare waits here, code loaded and its indexer process booted, until the host hands it a tenant; the
 * tenant's settings join the environment. Booting the indexer ahead is what makes a cold start whose first
 * request is a query fast: otherwise that query waits for a Node process to load the engine (measured: ~360 ms).
 */
async function waitForAssignment(): Promise<Assigned> {
  await warmUp();
  const indexer = new IndexerProcess(
    pino({ level: process.env.ROOKERY_LOG_LEVEL ?? 'info', base: { service: 'tenant' } }),
  );
  await indexer.whenReady();
  const assignment = await new Promise<z.infer<typeof AssignmentSchema>>((resolve) => {
    const onMessage = (raw: unknown) => {
      const parsed = AssignmentSchema.safeParse(raw);
      if (!parsed.success) return;
      process.off('message', onMessage);
      resolve(parsed.data);
    };
    process.on('message', onMessage);
    tellParent({ spare: true });
  });
  process.env.ROOKERY_DATA = assignment.dataDir;
  process.env.ROOKERY_SOCKET = assignment.socketPath;
  if (assignment.placementEpoch !== undefined)
    process.env.ROOKERY_PLACEMENT_EPOCH = String(assignment.placementEpoch);
  if (assignment.leaseRemainingMs !== undefined)
    process.env.ROOKERY_LEASE_REMAINING_MS = String(assignment.leaseRemainingMs);
  if (assignment.leaseMeasuredAtMs !== undefined)
    process.env.ROOKERY_LEASE_MEASURED_AT_MS = String(assignment.leaseMeasuredAtMs);
  return { env: process.env, indexer };
}

let server: TenantServer | null = null;
let stopping = false;
async function shutdown(signal: string): Promise<void> {
  if (stopping) return;
  stopping = true;
  if (!server) process.exit(0); // a spare, or not started yet: nothing to drain
  server.app.log.info({ signal }, 'shutting down: draining requests and committing queued writes');
  const deadline = setTimeout(() => {
    server?.app.log.error('shutdown deadline passed; exiting with work in flight');
    process.exit(1);
  }, SHUTDOWN_DEADLINE_MS);
  deadline.unref();
  await server.close();
  process.exit(0);
}
process.on('SIGTERM', () => void shutdown('SIGTERM'));
process.on('SIGINT', () => void shutdown('SIGINT'));
// The supervisor is gone (crashed or killed): do not live on as an orphan nobody can stop or reach.
if (process.send) process.on('disconnect', () => void shutdown('parent disconnected'));

const spare = process.env.ROOKERY_SPARE === '1' && process.send !== undefined;
const assigned = spare ? await waitForAssignment() : null;
const config = loadConfig(assigned?.env ?? process.env);
server = buildTenantServer(config, {
  indexer: assigned?.indexer,
  // Worker-built indexes: the host enqueues the build (the tenant has no queue) and reports its progress.
  ...(process.send ? { indexBuildSink: tellParent } : {}),
});
// The host renews its lease every TTL/3 and passes what is left on ({type: 'lease'}); registered in the
// same turn as the server is built, so no renewal sent after the assignment is missed.
if (process.send) {
  const { lease, indexBuildProgress } = server;
  process.on('message', (message) => lease.receive(message));
  process.on('message', (message) => {
    const progress = IndexBuildProgressMessageSchema.safeParse(message);
    if (progress.success) indexBuildProgress(progress.data);
  });
}
let address: string;
if (config.socketPath !== undefined) {
  await removeStaleSocket(config.socketPath);
  address = await server.app.listen({ path: config.socketPath });
} else {
  address = await server.app.listen({ host: config.host, port: config.port });
}
server.app.log.info({ address, dataDir: config.dataDir }, 'tenant service listening');

// A supervisor that started us over IPC learns the address without parsing logs, and when we were last busy.
if (process.send) {
  // Fleet mode: gateways' relay connections the host hands over once this process runs (relay-connections.ts).
  const relay = new RelayConnections(server.app.server, server.app.log);
  process.on('message', (message, handle) => relay.receive(message, handle));
  // The indexer a spare started before it was this tenant's: the host puts it in the tenant's cgroup too (one
  // forked from now on inherits the tenant's).
  tellParent({ ready: true, address, ...(assigned ? { indexerPid: assigned.indexer.pid } : {}) });
  const serving = server;
  // With the activity, how far its mirror is behind (the worst open database): the host's /metrics exports it.
  setInterval(
    () => tellParent({ type: 'activity', ...serving.activity(), mirrorLag: serving.catalog.mirrorLag() }),
    ACTIVITY_INTERVAL_MS,
  ).unref();
}
