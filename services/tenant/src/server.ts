import { randomUUID } from 'node:crypto';
import type { IncomingMessage } from 'node:http';
import fastifyWebsocket from '@fastify/websocket';
import { DatabaseCatalog } from '@rookery/engine';
import {
  type DeclaredRoute,
  type IndexBuildProgressMessage,
  jsonSerializer,
  LIVE_PING_INTERVAL_MS,
  MAX_LIVE_FRAME_BYTES,
  requestPartValidator,
  WORK_UNITS_HEADER,
} from '@rookery/protocol';
import Fastify, { type FastifyInstance, LogController } from 'fastify';
import { mirrorOf, type TenantConfig } from './config.js';
import { limitJsonNesting } from './http/json-body.js';
import { LazyChildLogger } from './http/lazy-logger.js';
import { logFailure, notFoundHandler, sendProblem, toRookeryError } from './http/problem.js';
import { refuseWritesAtQuota, StorageMeter } from './http/storage-quota.js';
import { workUnits } from './http/work-units.js';
import type { IndexerProcess } from './indexing/indexer-process.js';
import { TenantIndexing } from './indexing/tenant-indexing.js';
import type { IndexBuildSink } from './indexing/worker-builds.js';
import { LeaseDeadline } from './lease.js';
import { changesRoutes } from './live/changes.js';
import { IndexChangeFeed } from './live/index-change-feed.js';
import type { LiveGauges } from './live/live-gauges.js';
import { closeLiveSockets } from './live/live-socket.js';
import { streamRoutes } from './live/streams.js';
import { batchRoutes } from './routes/batch.js';
import { bulkInsertRoutes } from './routes/bulk-insert.js';
import type { RouteContext } from './routes/context.js';
import { databaseRoutes } from './routes/databases.js';
import { documentRoutes } from './routes/documents.js';
import { indexRoutes } from './routes/indexes.js';
import { lifecycleRoutes } from './routes/lifecycle.js';
import { queryRoutes } from './routes/queries.js';
import { RavenOperations, ravenRoutes } from './routes/ravendb/index.js';
import { statsRoutes } from './routes/stats.js';
import { subscriptionConnectRoute, subscriptionRoutes } from './routes/subscriptions.js';
import { SubscriptionRegistry } from './subscriptions/registry.js';

export interface TenantServer {
  app: FastifyInstance;
  catalog: DatabaseCatalog;
  /** When the last request ended (or the server was built) and how many are being answered now. */
  activity(): TenantActivity;
  /** Stops taking requests, commits what is queued and closes every database. */
  close(): Promise<void>;
  /** Every route served with the schema it declares (the gateway's isolation tests walk them all; openapi/). */
  routes: readonly (DeclaredRoute & { method: string })[];
  /** Changes connections and NDJSON streams open now. */
  live: Readonly<LiveGauges>;
  /** The host's lease deadline: writes are refused once it passed (main.ts renews it from the host's messages). */
  lease: LeaseDeadline;
  /** The host's word on a worker build's job (main.ts passes it on; indexing/worker-builds.ts). */
  indexBuildProgress(message: IndexBuildProgressMessage): void;
}

export interface TenantActivity {
  /** Epoch ms of the last request's start or end (the server's creation before any request). */
  lastRequestAt: number;
  inFlight: number;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

export { WORK_UNIT_BYTES, workUnits } from './http/work-units.js';

/** Socket bytes read before each request's body: the fallback size of a body sent without Content-Length. */
const bytesReadAtStart = new WeakMap<IncomingMessage, number>();

/** The request body's size: Content-Length when given, else what the socket delivered since the request began. */
function bytesIn(request: IncomingMessage): number {
  const declared = Number(request.headers['content-length']);
  if (Number.isFinite(declared) && declared >= 0) return declared;
  const start = bytesReadAtStart.get(request);
  return start === undefined ? 0 : Math.max(0, request.socket.bytesRead - start);
}

function payloadBytes(payload: unknown): number {
  if (typeof payload === 'string') return Buffer.byteLength(payload);
  if (payload instanceof Uint8Array) return payload.byteLength;
  return 0; // a stream: its length is not known when the headers leave
}

/** Builds the tenant's HTTP API (not yet listening). */
export interface TenantServerOptions {
  /** An indexer process started ahead of the server (by a spare); the server stops it on close. */
  indexer?: IndexerProcess;
  /** How often WebSockets are pinged (default LIVE_PING_INTERVAL_MS); tests shorten it. */
  livePingIntervalMs?: number;
  /** Where the log lines go (default: stdout, where the host collects them); tests read them. */
  logStream?: NodeJS.WritableStream;
  /** Where the indexer's requests for worker builds go: the host (main.ts). Absent: nowhere (logged). */
  indexBuildSink?: IndexBuildSink;
}

export function buildTenantServer(config: TenantConfig, options: TenantServerOptions = {}): TenantServer {
  const app = Fastify({
    logger: {
      level: config.logLevel,
      base: { service: 'tenant' },
      ...(options.logStream && { stream: options.logStream }),
    },
    bodyLimit: config.maxBodyBytes,
    // Request lines are logged by our own hook below: at debug for successes, so the hot path stays cheap.
    logController: new LogController({ disableRequestLogging: true }),
    // A request's loggers (its id here, its database in onRequest) are made when it writes a line, not before.
    childLoggerFactory: LazyChildLogger.factory,
    // A caller's request id is kept so one id follows a request through gateway and tenant.
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    // A request that arrives on a kept-alive connection while the tenant stops (an idle stop, a planned
    // move to another host) is answered as usual, with `Connection: close`, not refused with a 503: the
    // stop waits for it anyway (the server closes once its connections end), its write is committed and,
    // in sync mirror mode, in the mirror before the mirror closes. Fastify's default 503 here failed
    // requests during a drain (services/host/src/drain.postgres.test.ts).
    return503OnClosing: false,
  });
  const mirror = mirrorOf(config);
  const lease = new LeaseDeadline(
    config.leaseRemainingMs === undefined
      ? undefined
      : { remainingMs: config.leaseRemainingMs, measuredAtMs: config.leaseMeasuredAtMs },
  );
  const catalog = new DatabaseCatalog(
    config.dataDir,
    {
      synchronous: config.synchronous,
      compressionThresholdBytes: config.compressionThresholdBytes,
      mergeTransactions: config.mergeTransactions,
      // Asked before every commit and again before every acknowledgment (after the mirror's fsync in
      // sync mode): a host that lost its lease acknowledges nothing. Reads are not fenced.
      writeFence: () => lease.refusal(),
    },
    mirror && { ...mirror, loggerFor: (db) => app.log.child({ db, unit: 'mirror' }) },
  );
  // A tenant starting on a machine that lost its disk gets its databases back from the mirror before it
  // serves anything. A database that cannot be restored stops the start: serving without it would let a
  // new, empty database take its name.
  for (const restored of catalog.restoreMissing()) {
    const log = restored.stoppedBy === 'gap' ? app.log.error.bind(app.log) : app.log.info.bind(app.log);
    log(
      { db: restored.database, unit: 'mirror', ...restored },
      restored.stoppedBy === 'gap'
        ? 'database restored from the mirror up to a missing transaction: later transactions are lost'
        : restored.replacedStaleCopy
          ? 'database restored from the mirror over the local copy another owner superseded'
          : 'database restored from the mirror',
    );
  }
  // Indexing starts on the first write, query or index request, not at start: a cold start (and a tenant that
  // only reads) does not pay for booting the indexer process; a spare brings one already booted.
  let indexing: TenantIndexing | null = null;
  const indexChanges = new IndexChangeFeed();
  const indexingOf = () => {
    indexing ??= new TenantIndexing(catalog, app.log, options.indexer, indexChanges, {
      indexerRequestTimeoutMs: config.indexerRequestTimeoutMs,
      maxResponseBytes: config.maxResponseBytes,
      indexBuildSink: options.indexBuildSink,
    });
    return indexing;
  };
  const context: RouteContext = {
    catalog,
    config,
    storage: new StorageMeter(config.dataDir),
    get indexing() {
      return indexingOf();
    },
  };
  // Activity, counted on the raw server so that hijacked (streamed) answers count too: the host stops a tenant
  // that stayed idle, and a request being answered is never idle.
  const activity: TenantActivity = { lastRequestAt: Date.now(), inFlight: 0 };
  app.server.on('request', (request, response) => {
    bytesReadAtStart.set(request, request.socket.bytesRead);
    activity.inFlight++;
    activity.lastRequestAt = Date.now();
    response.once('close', () => {
      activity.inFlight--;
      activity.lastRequestAt = Date.now();
    });
  });
  // A WebSocket (changes, subscriptions) is in flight for as long as it is open: a tenant with a consumer
  // attached is not idle. Node hands upgrades to 'upgrade', not 'request', so they are counted here.
  app.server.on('upgrade', (_request, socket) => {
    activity.inFlight++;
    activity.lastRequestAt = Date.now();
    socket.once('close', () => {
      activity.inFlight--;
      activity.lastRequestAt = Date.now();
    });
  });
  app.register(fastifyWebsocket, {
    options: { maxPayload: MAX_LIVE_FRAME_BYTES },
    // Stopping tells every live socket why (4503) instead of the plugin's plain close.
    preClose(done) {
      closeLiveSockets(this.websocketServer, done);
    },
    // A coded error on an open socket is the peer's (WS_ERR_* for a frame too big or malformed, E* for a
    // reset): ws already closes with the right code (1009, 1002…), so it is logged quietly and the close
    // left to finish, not cut short. Anything else is a handler's bug.
    errorHandler(error, socket, request) {
      const fromPeer = typeof (error as { code?: unknown }).code === 'string';
      if (fromPeer) request.log.debug({ err: error }, 'websocket closed by a peer error');
      else request.log.error({ err: error }, 'websocket handler failed');
      if (socket.readyState === socket.OPEN) socket.close(1011, 'internal error');
    },
  });
  // Only JSON (and NDJSON for bulk insert) is accepted: text bodies get a clear 415 instead of a confusing 400.
  app.removeContentTypeParser('text/plain');
  // Routes declare their request parts with protocol's validated()/documented(): a refusal is the same 400
  // InvalidRequest naming the field that parseWith gives, and the OpenAPI document is generated from them.
  app.setValidatorCompiler(requestPartValidator);
  app.setSerializerCompiler(jsonSerializer);
  limitJsonNesting(app);

  // The hooks every request runs take fastify's `done` rather than being async: a promise and a microtask
  // each per request otherwise, on the path of every durable PUT (docs/benchmarks.md, CPU per PUT).
  app.addHook('onRequest', (request, reply, done) => {
    // A floor for answers that bypass onSend (bulk insert streams its own answer, and its headers leave with
    // the first progress line): the request side as declared. onSend replaces it with the full figure.
    reply.raw.setHeader(WORK_UNITS_HEADER, workUnits(bytesIn(request.raw), 0));
    const db = (request.params as { db?: string } | undefined)?.db;
    if (db !== undefined) {
      request.log = request.log.child({ db });
      // Writes must reach the indexer even before the first query: start the database's indexing on the
      // first request that may write (a database that does not exist is the route's 404 to report, not this
      // hook's). Not on reads: a tenant woken to read documents would otherwise boot the indexer process in
      // the middle of its first request (measured: about half of a cold start's first GET), and a tenant
      // that only reads never needs it. Queries and index routes start it themselves.
      if (request.method !== 'GET' && request.method !== 'HEAD')
        indexingOf()
          .forDatabase(db)
          .catch(() => {});
    }
    done();
  });
  app.addHook('onSend', (request, reply, payload, done) => {
    reply.header(WORK_UNITS_HEADER, workUnits(bytesIn(request.raw), payloadBytes(payload)));
    done(null, payload);
  });
  app.addHook('onResponse', (request, reply, done) => {
    const line = {
      method: request.method,
      url: request.url,
      status: reply.statusCode,
      ms: reply.elapsedTime,
    };
    // 503 is a refusal to retry (a lapsed lease, a fenced mirror): the error handler logged why, at warn.
    if (reply.statusCode === 503) request.log.warn(line, 'request refused for now');
    else if (reply.statusCode >= 500) request.log.error(line, 'request failed');
    else request.log.debug(line, 'request');
    done();
  });
  app.setErrorHandler((error, request, reply) => {
    const rookeryError = toRookeryError(error, config.maxBodyBytes);
    logFailure(request, error, rookeryError);
    return sendProblem(reply, rookeryError);
  });
  app.setNotFoundHandler(notFoundHandler);
  refuseWritesAtQuota(app, context.storage);

  const routes: (DeclaredRoute & { method: string })[] = [];
  app.addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) routes.push({ method, url: route.url, schema: route.schema });
  });
  app.get('/health', async () => ({ status: 'ok' }));
  databaseRoutes(app, context);
  documentRoutes(app, context);
  batchRoutes(app, context);
  const ravenOperations = new RavenOperations();
  bulkInsertRoutes(app, context, ravenOperations);
  statsRoutes(app, context);
  queryRoutes(app, context);
  indexRoutes(app, context);
  lifecycleRoutes(app, context);
  ravenRoutes(app, context, ravenOperations);
  const subscriptions = new SubscriptionRegistry();
  subscriptionRoutes(app, context, subscriptions);
  const live: LiveGauges = { changesConnections: 0, streams: 0, streamBytes: 0 };
  streamRoutes(app, context, live);
  // WebSocket routes are declared in a plugin registered after @fastify/websocket: its onRoute hook, which
  // makes them WebSocket routes, only exists once it has loaded.
  app.register(async (scope) =>
    changesRoutes(scope, context, {
      indexChanges,
      pingIntervalMs: options.livePingIntervalMs ?? LIVE_PING_INTERVAL_MS,
      gauges: live,
    }),
  );
  app.register(async (scope) =>
    subscriptionConnectRoute(scope, context, subscriptions, {
      pingIntervalMs: options.livePingIntervalMs ?? LIVE_PING_INTERVAL_MS,
    }),
  );

  return {
    app,
    catalog,
    activity: () => ({ ...activity }),
    routes,
    live,
    lease,
    indexBuildProgress: (message) => indexing?.workerBuilds.onHost(message),
    async close() {
      await app.close();
      await (indexing ? indexing.close() : options.indexer?.stop());
      await catalog.closeAll();
    },
  };
}
