import type { Database, SubscriptionRecord } from '@rookery/engine';
import {
  LiveCloseCodes,
  RookeryError,
  SubscriptionConnectQuerySchema,
  SubscriptionCreateSchema,
  SubscriptionNameSchema,
  type SubscriptionState,
} from '@rookery/protocol';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { SubscriptionConnection } from '../subscriptions/connection.js';
import type { SubscriptionRegistry } from '../subscriptions/registry.js';
import { databaseOf, parseWith, type RouteContext } from './context.js';

const DEFAULT_BATCH_SIZE = 256;
const NameParamsSchema = z.object({ db: z.string(), name: SubscriptionNameSchema });

/**
 * Subscriptions over HTTP (docs/live-data.md): `PUT /databases/{db}/subscriptions` (201, 409
 * `SubscriptionAlreadyExists`), `GET …/subscriptions`, `GET|DELETE …/subscriptions/{name}` (404
 * `SubscriptionNotFound`). Deleting one closes its consumers with 4404.
 */
export function subscriptionRoutes(
  app: FastifyInstance,
  context: RouteContext,
  registry: SubscriptionRegistry,
): void {
  const stateOf = (db: Database, record: SubscriptionRecord): SubscriptionState => ({
    Name: record.name,
    Query: record.query,
    QueryParameters: record.parameters,
    LastAcknowledgedEtag: record.lastEtag,
    CreatedAt: new Date(record.createdAt).toISOString(),
    LastAcknowledgedAt:
      record.lastAcknowledgedAt === null ? null : new Date(record.lastAcknowledgedAt).toISOString(),
    Connected: registry.isConnected(db.name, record.name),
  });

  app.put('/databases/:db/subscriptions', async (request, reply) => {
    const body = parseWith(SubscriptionCreateSchema, request.body, 'subscription');
    const db = databaseOf(context, request);
    const record = await db.createSubscription({
      name: body.Name,
      query: body.Query,
      parameters: body.QueryParameters,
      startFrom: body.StartFrom ?? 'Beginning',
    });
    return reply.code(201).send(stateOf(db, record));
  });

  app.get('/databases/:db/subscriptions', async (request) => {
    const db = databaseOf(context, request);
    return { Results: db.subscriptions().map((record) => stateOf(db, record)) };
  });

  app.get('/databases/:db/subscriptions/:name', async (request) => {
    const { db, subscription } = subscriptionOf(context, request);
    return stateOf(db, subscription);
  });

  app.delete('/databases/:db/subscriptions/:name', async (request, reply) => {
    const { db, subscription } = subscriptionOf(context, request);
    const { name } = subscription;
    await db.deleteSubscription(name);
    await registry.endAll(
      db.name,
      name,
      LiveCloseCodes.SubscriptionNotFound,
      `subscription ${name} was deleted`,
    );
    return reply.code(204).send();
  });
}

export interface SubscriptionConnectOptions {
  pingIntervalMs: number;
}

/**
 * `GET /databases/{db}/subscriptions/{name}/connect?strategy=&batchSize=&maxWaitMs=` (WebSocket). Everything
 * that can be refused before the upgrade is, as a plain HTTP problem: 404 `DatabaseNotFound` /
 * `SubscriptionNotFound`, 400 for the query string, 409 `SubscriptionInUse` for OpenIfFree while a consumer
 * holds it. Must be declared in a plugin registered after @fastify/websocket (its onRoute hook makes it a
 * WebSocket route).
 */
export function subscriptionConnectRoute(
  app: FastifyInstance,
  context: RouteContext,
  registry: SubscriptionRegistry,
  options: SubscriptionConnectOptions,
): void {
  const connectQueryOf = (request: FastifyRequest) =>
    parseWith(SubscriptionConnectQuerySchema, request.query, 'query string');
  app.route({
    method: 'GET',
    url: '/databases/:db/subscriptions/:name/connect',
    preValidation: async (request) => {
      const query = connectQueryOf(request);
      const { db, subscription } = subscriptionOf(context, request);
      const { name } = subscription;
      if ((query.strategy ?? 'OpenIfFree') === 'OpenIfFree' && registry.isConnected(db.name, name)) {
        throw new RookeryError(
          'SubscriptionInUse',
          `Subscription ${name} has a consumer; connect with strategy=TakeOver or strategy=WaitForFree`,
          { subscription: name },
        );
      }
    },
    handler: async () => {
      throw new RookeryError(
        'InvalidRequest',
        'This endpoint is a WebSocket: connect with an Upgrade: websocket request (see docs/live-data.md)',
      );
    },
    wsHandler: (socket, request) => {
      // Checked in preValidation; what changed during the handshake is handled here and in the connection
      // (a subscription deleted meanwhile closes with 4404).
      const query = connectQueryOf(request);
      const { name } = parseWith(NameParamsSchema, request.params, 'subscription name');
      let db: Database;
      try {
        db = databaseOf(context, request);
      } catch {
        socket.close(LiveCloseCodes.DatabaseUnavailable, 'the database was deleted');
        return;
      }
      const connection = new SubscriptionConnection(
        socket,
        db,
        name,
        {
          strategy: query.strategy ?? 'OpenIfFree',
          batchSize: query.batchSize ?? DEFAULT_BATCH_SIZE,
          maxWaitMs: query.maxWaitMs ?? 0,
          pingIntervalMs: options.pingIntervalMs,
        },
        registry,
      );
      void connection.serve();
    },
  });
}

/** The database and subscription named in the URL; 404 `DatabaseNotFound` or `SubscriptionNotFound`. */
function subscriptionOf(
  context: RouteContext,
  request: FastifyRequest,
): { db: Database; subscription: SubscriptionRecord } {
  const { name } = parseWith(NameParamsSchema, request.params, 'subscription name');
  const db = databaseOf(context, request);
  const record = db.subscription(name);
  if (!record) {
    throw new RookeryError(
      'SubscriptionNotFound',
      `There is no subscription named ${name} in ${db.name}; list them with GET /databases/${db.name}/subscriptions`,
      { subscription: name },
    );
  }
  return { db, subscription: record };
}
