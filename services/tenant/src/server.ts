import { randomUUID } from 'node:crypto';
import { DatabaseCatalog } from '@rookery/engine';
import Fastify, { type FastifyInstance, LogController } from 'fastify';
import type { TenantConfig } from './config.js';
import { notFoundHandler, sendProblem, toRookeryError } from './http/problem.js';
import { TenantIndexing } from './indexing/tenant-indexing.js';
import { batchRoutes } from './routes/batch.js';
import { bulkInsertRoutes } from './routes/bulk-insert.js';
import type { RouteContext } from './routes/context.js';
import { databaseRoutes } from './routes/databases.js';
import { documentRoutes } from './routes/documents.js';
import { indexRoutes } from './routes/indexes.js';
import { queryRoutes } from './routes/queries.js';
import { statsRoutes } from './routes/stats.js';

export interface TenantServer {
  app: FastifyInstance;
  catalog: DatabaseCatalog;
  /** Stops taking requests, commits what is queued and closes every database. */
  close(): Promise<void>;
}

const REQUEST_ID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Builds the tenant's HTTP API (not yet listening). */
export function buildTenantServer(config: TenantConfig): TenantServer {
  const catalog = new DatabaseCatalog(config.dataDir, {
    synchronous: config.synchronous,
    compressionThresholdBytes: config.compressionThresholdBytes,
    mergeTransactions: config.mergeTransactions,
  });
  const app = Fastify({
    logger: { level: config.logLevel, base: { service: 'tenant' } },
    bodyLimit: config.maxBodyBytes,
    // Request lines are logged by our own hook below: at debug for successes, so the hot path stays cheap.
    logController: new LogController({ disableRequestLogging: true }),
    // A caller's request id is kept so one id follows a request through gateway and tenant.
    genReqId: (request) => {
      const given = request.headers['x-request-id'];
      return typeof given === 'string' && REQUEST_ID.test(given) ? given : randomUUID();
    },
    onProtoPoisoning: 'error',
    onConstructorPoisoning: 'error',
    return503OnClosing: true,
  });
  const indexing = new TenantIndexing(catalog, app.log);
  const context: RouteContext = { catalog, indexing, config };
  // Only JSON (and NDJSON for bulk insert) is accepted: text bodies get a clear 415 instead of a confusing 400.
  app.removeContentTypeParser('text/plain');

  app.addHook('onRequest', async (request) => {
    const db = (request.params as { db?: string } | undefined)?.db;
    if (db !== undefined) {
      request.log = request.log.child({ db });
      // Writes must reach the indexer even before the first query: start the database's indexing on first
      // contact (a database that does not exist is the route's 404 to report, not this hook's).
      indexing.forDatabase(db).catch(() => {});
    }
  });
  app.addHook('onResponse', async (request, reply) => {
    const line = {
      method: request.method,
      url: request.url,
      status: reply.statusCode,
      ms: reply.elapsedTime,
    };
    if (reply.statusCode >= 500) request.log.error(line, 'request failed');
    else request.log.debug(line, 'request');
  });
  app.setErrorHandler((error, request, reply) => {
    const rookeryError = toRookeryError(error, config.maxBodyBytes);
    if (rookeryError.status >= 500) {
      request.log.error(
        { err: error, db: (request.params as { db?: string } | undefined)?.db },
        'unhandled error',
      );
    }
    return sendProblem(reply, rookeryError);
  });
  app.setNotFoundHandler(notFoundHandler);

  app.get('/health', async () => ({ status: 'ok' }));
  databaseRoutes(app, context);
  documentRoutes(app, context);
  batchRoutes(app, context);
  bulkInsertRoutes(app, context);
  statsRoutes(app, context);
  queryRoutes(app, context);
  indexRoutes(app, context);

  return {
    app,
    catalog,
    async close() {
      await app.close();
      await indexing.close();
      await catalog.closeAll();
    },
  };
}
