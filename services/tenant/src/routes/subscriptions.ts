import type { Database, SubscriptionRecord } from '@rookery/engine';
import {
  documented,
  fromRavenSubscription,
  isRavenClient,
  LiveCloseCodes,
  RavenSubscriptionCreateSchema,
  RookeryError,
  SubscriptionConnectQuerySchema,
  SubscriptionCreateSchema,
  SubscriptionNameSchema,
  type SubscriptionState,
  validated,
} from '@rookery/protocol';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { z } from 'zod';
import { jsonBodyParser } from '../http/json-body.js';
import { SubscriptionConnection } from '../subscriptions/connection.js';
import type { SubscriptionRegistry } from '../subscriptions/registry.js';
import { DatabaseParams, databaseOf, parseWith, type RequestParts, type RouteContext } from './context.js';

const DEFAULT_BATCH_SIZE = 256;
const NameParamsSchema = z.object({ db: z.string(), name: SubscriptionNameSchema });
/** Paging of the list, as RavenDB's GetSubscriptionsOperation sends it (every subscription by default). */
const ListQuery = validated(
  z.object({
    start: z.coerce.number().int().min(0).default(0),
    pageSize: z.coerce.number().int().min(1).optional(),
  }),
  'query string',
);
/** Checked before the handler; subscriptionOf parses them again for the WebSocket route, which checks by hand. */
const NameParams = validated(NameParamsSchema, 'subscription name');

/**
 * Subscriptions over HTTP (docs/live-data.md): `PUT /databases/{db}/subscriptions` (201, 409
 * `SubscriptionAlreadyExists`), `GET …/subscriptions`, `GET|DELETE …/subscriptions/{name}` (404
 * `SubscriptionNotFound`). Deleting one closes its consumers with 4404.
 */
export function subscriptionRoutes(
  fastify: FastifyInstance,
  context: RouteContext,
  registry: SubscriptionRegistry,
): void {
  const app = fastify.withTypeProvider<RequestParts>();
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

  // RavenDB's clients create a subscription without setting a Content-Type, so that fetch sends its default for
  // a string body, `text/plain;charset=UTF-8`: this route alone (its own scope) reads a body of no media type
  // or of text/plain as JSON; any other media type stays a 415.
  app.register(async (scope) => {
    const json = jsonBodyParser(scope);
    scope.addContentTypeParser('*', { parseAs: 'string' }, (request, body, done) => {
      const type = request.headers['content-type'];
      if (type !== undefined && !/^text\/plain\s*(;|$)/i.test(type)) {
        return done(
          new RookeryError(
            'UnsupportedMediaType',
            'A subscription is JSON: send "Content-Type: application/json" (or no Content-Type)',
          ),
        );
      }
      json(request, body, done);
    });

    const schema = {
      summary: 'Create a persistent subscription',
      params: DatabaseParams,
      // Rookery's shape, or RavenDB's options for its clients (told apart by their headers): the handler
      // parses the one the caller speaks, so that the refusal names its fields.
      body: documented(z.union([SubscriptionCreateSchema, RavenSubscriptionCreateSchema])),
    };
    scope.put('/databases/:db/subscriptions', { schema }, async (request, reply) => {
      // RavenDB's SubscriptionCreationOptions for its clients (protocol's ravendb-subscriptions.ts), Rookery's otherwise.
      const raven = isRavenClient(request.headers);
      const body = raven
        ? fromRavenSubscription(parseWith(RavenSubscriptionCreateSchema, request.body, 'subscription'))
        : parseWith(SubscriptionCreateSchema, request.body, 'subscription');
      const db = databaseOf(context, request);
      const record = await db.createSubscription({
        name: body.Name,
        query: body.Query,
        parameters: body.QueryParameters,
        startFrom: body.StartFrom ?? 'Beginning',
      });
      const state = stateOf(db, record);
      // RaftCommandIndex: what RavenDB's CreateSubscriptionResult carries beside the name (no Raft log here).
      return reply.code(201).send(raven ? { ...state, RaftCommandIndex: 0 } : state);
    });
  });

  const listSchema = {
    summary: "The database's subscriptions",
    params: DatabaseParams,
    querystring: ListQuery,
  };
  app.get('/databases/:db/subscriptions', { schema: listSchema }, async (request) => {
    const db = databaseOf(context, request);
    const { start, pageSize } = request.query;
    const page = db
      .subscriptions()
      .slice(start, pageSize === undefined ? undefined : start + pageSize)
      .map((record) => stateOf(db, record));
    // RavenDB's clients read a subscription's name as SubscriptionName.
    if (isRavenClient(request.headers))
      return { Results: page.map((state) => ({ ...state, SubscriptionName: state.Name, Disabled: false })) };
    return { Results: page };
  });

  const readSchema = { summary: "A subscription's state", params: NameParams };
  app.get('/databases/:db/subscriptions/:name', { schema: readSchema }, async (request) => {
    const { db, subscription } = subscriptionOf(context, request);
    return stateOf(db, subscription);
  });

  const deleteSchema = {
    summary: 'Delete a subscription (its consumers are closed with 4404)',
    params: NameParams,
  };
  app.delete('/databases/:db/subscriptions/:name', { schema: deleteSchema }, async (request, reply) => {
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
    // Checked by hand in preValidation, which runs before fastify's checks: a refusal there is a plain HTTP
    // problem before the upgrade, in the order the route gives (query string, then database and subscription).
    schema: {
      summary:
        'Consume a subscription (WebSocket): batches, each sent after the previous one was acknowledged',
      params: documented(NameParamsSchema),
      querystring: documented(SubscriptionConnectQuerySchema),
    },
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
