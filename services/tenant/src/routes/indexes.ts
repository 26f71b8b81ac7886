import {
  documented,
  IndexDefinitionSchema,
  IndexListResponseSchema,
  IndexNameSchema,
  IndexResetResponseSchema,
  type IndexStats,
  IndexStatsSchema,
  isRavenClient,
  isRavenPutIndexes,
  PutIndexResponseSchema,
  RavenPutIndexesSchema,
  RookeryError,
  type RouteSchema,
  toRavenIndexDefinition,
  validated,
} from '@rookery/protocol';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { indexStatsWithBuilds } from '../indexing/index-stats.js';
import type { DatabaseQueries } from '../indexing/tenant-indexing.js';
import { DatabaseParams, parseWith, type RequestParts, type RouteContext } from './context.js';
import { putRavenIndexes } from './ravendb/indexes.js';
import { defineStaticIndex } from './static-indexes.js';

const NameQuery = validated(z.object({ name: IndexNameSchema }), 'query string');
/** Paging (every index by default) and `namesOnly=true` (names, not stats), as RavenDB's GetIndexNamesOperation sends. */
const ListQuery = validated(
  z.object({
    namesOnly: z.enum(['true', 'false']).optional(),
    start: z.coerce.number().int().min(0).default(0),
    pageSize: z.coerce.number().int().min(1).optional(),
  }),
  'query string',
);
/** An index named in the query string: `?name=`, and what the route answers. */
const named = (summary: string, response: RouteSchema['response']) => ({
  summary,
  params: DatabaseParams,
  querystring: NameQuery,
  response,
});

/**
 * Index management: `PUT /databases/{db}/indexes` (create or replace),
 * `GET /databases/{db}/indexes` (every index's stats), `GET …/indexes/stats?name=`,
 * `GET …/indexes/definition?name=` (the definition as PUT took it), `DELETE …/indexes?name=`,
 * `POST …/indexes/reset?name=`.
 */
export function indexRoutes(fastify: FastifyInstance, context: RouteContext): void {
  const app = fastify.withTypeProvider<RequestParts>();
  const queriesOf = (params: unknown) => context.indexing.forDatabase((params as { db: string }).db);

  const putSchema = {
    summary: 'Create or replace a static index',
    params: DatabaseParams,
    // Rookery's definition, or RavenDB's {"Indexes": [...]}: the handler parses the one it got, so that the
    // refusal names its fields.
    body: documented(z.union([IndexDefinitionSchema, RavenPutIndexesSchema])),
    // RavenDB's {"Indexes": [...]} is answered in RavenDB's shape.
    response: {
      200: { description: 'Replaced', schema: PutIndexResponseSchema },
      201: { description: 'Created', schema: PutIndexResponseSchema },
    },
  };
  app.put('/databases/:db/indexes', { schema: putSchema }, async (request, reply) => {
    // RavenDB's clients send JavaScript indexes here, wrapped as {"Indexes": [...]} (routes/ravendb/indexes.ts).
    if (isRavenPutIndexes(request.body)) return reply.send(await putRavenIndexes(context, request));
    const definition = parseWith(IndexDefinitionSchema, request.body, 'index definition');
    const queries = await queriesOf(request.params);
    const { created } = await defineStaticIndex(context, queries, definition);
    return reply.code(created ? 201 : 200).send({ Index: definition.Name, Created: created });
  });

  const listSchema = {
    summary: "The database's indexes and their state",
    params: DatabaseParams,
    querystring: ListQuery,
    // RavenDB's clients get its definitions instead.
    response: { 200: { description: 'Stats, or names', schema: IndexListResponseSchema } },
  };
  app.get('/databases/:db/indexes', { schema: listSchema }, async (request) => {
    const { namesOnly, start, pageSize } = request.query;
    const queries = await queriesOf(request.params);
    const page = queries.indexes
      .definitions()
      .slice(start, pageSize === undefined ? undefined : start + pageSize);
    if (namesOnly === 'true') return { Results: page.map((d) => d.Name) };
    // RavenDB's GetIndexesOperation reads definitions here; Rookery's clients read stats.
    if (isRavenClient(request.headers)) return { Results: page.map(toRavenIndexDefinition) };
    return { Results: page.map((d) => statsOf(context, queries, d.Name)) };
  });

  // The definition exactly as PUT last took it (the index file keeps it), so an editor can start from any
  // index — also one made elsewhere — and PUT → GET → PUT is identity. While a changed definition is built
  // side by side, the old index answers queries but the definition is the replacement's: editing again must
  // start from the change, not undo it.
  const definitionSchema = named("An index's definition, exactly as PUT took it", {
    200: { description: 'The definition', schema: IndexDefinitionSchema },
  });
  app.get('/databases/:db/indexes/definition', { schema: definitionSchema }, async (request) => {
    const { name } = request.query;
    const queries = await queriesOf(request.params);
    const reader = queries.indexes.reader(name);
    if (!reader) throw notFound(queries, name);
    return queries.indexes.replacementDefinition(name) ?? reader.definition;
  });

  const statsSchema = named("An index's state", {
    200: { description: 'Its stats', schema: IndexStatsSchema },
  });
  app.get('/databases/:db/indexes/stats', { schema: statsSchema }, async (request) => {
    const { name } = request.query;
    return statsOf(context, await queriesOf(request.params), name);
  });

  const deleteSchema = named('Delete an index', { 204: { description: 'Deleted' } });
  app.delete('/databases/:db/indexes', { schema: deleteSchema }, async (request, reply) => {
    const { name } = request.query;
    const queries = await queriesOf(request.params);
    const deleted = await context.indexing.dropIndex(queries.db, name);
    if (!deleted) throw notFound(queries, name);
    return reply.code(204).send();
  });

  app.post(
    '/databases/:db/indexes/reset',
    {
      schema: named('Rebuild an index from the start', {
        200: { description: 'The rebuild is under way', schema: IndexResetResponseSchema },
      }),
    },
    async (request) => {
      const { name } = request.query;
      const queries = await queriesOf(request.params);
      const reset = await context.indexing.request({
        type: 'reset',
        db: queries.db.name.toLowerCase(),
        name,
      });
      if (!reset) throw notFound(queries, name);
      return { Index: name, Reset: true };
    },
  );
}

function statsOf(context: RouteContext, queries: DatabaseQueries, name: string): IndexStats {
  // With a replacement being built beside it and a worker's build, if any (indexing/index-stats.ts).
  const stats = indexStatsWithBuilds(queries, context.indexing.workerBuilds, name);
  if (!stats) throw notFound(queries, name);
  return stats;
}

function notFound(queries: DatabaseQueries, name: string): RookeryError {
  return new RookeryError(
    'IndexNotFound',
    `There is no index named ${name}; list them with GET /databases/${queries.db.name}/indexes`,
  );
}
