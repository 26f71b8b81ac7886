import { indexStatsOf } from '@rookery/engine';
import {
  IndexDefinitionSchema,
  IndexNameSchema,
  type IndexStats,
  isRavenClient,
  isRavenPutIndexes,
  RookeryError,
  toRavenIndexDefinition,
} from '@rookery/protocol';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import type { DatabaseQueries } from '../indexing/tenant-indexing.js';
import { parseWith, type RouteContext } from './context.js';
import { putRavenIndexes } from './ravendb/indexes.js';
import { defineStaticIndex } from './static-indexes.js';

const NameQuerySchema = z.object({ name: IndexNameSchema });
/** Paging (every index by default) and `namesOnly=true` (names, not stats), as RavenDB's GetIndexNamesOperation sends. */
const ListQuerySchema = z.object({
  namesOnly: z.enum(['true', 'false']).optional(),
  start: z.coerce.number().int().min(0).default(0),
  pageSize: z.coerce.number().int().min(1).optional(),
});

/**
 * Index management: `PUT /databases/{db}/indexes` (create or replace),
 * `GET /databases/{db}/indexes` (every index's stats), `GET …/indexes/stats?name=`,
 * `GET …/indexes/definition?name=` (the definition as PUT took it), `DELETE …/indexes?name=`,
 * `POST …/indexes/reset?name=`.
 */
export function indexRoutes(app: FastifyInstance, context: RouteContext): void {
  const queriesOf = (params: unknown) => context.indexing.forDatabase((params as { db: string }).db);

  app.put('/databases/:db/indexes', async (request, reply) => {
    // RavenDB's clients send JavaScript indexes here, wrapped as {"Indexes": [...]} (routes/ravendb/indexes.ts).
    if (isRavenPutIndexes(request.body)) return reply.send(await putRavenIndexes(context, request));
    const definition = parseWith(IndexDefinitionSchema, request.body, 'index definition');
    const queries = await queriesOf(request.params);
    const { created } = await defineStaticIndex(context, queries, definition);
    return reply.code(created ? 201 : 200).send({ Index: definition.Name, Created: created });
  });

  app.get('/databases/:db/indexes', async (request) => {
    const { namesOnly, start, pageSize } = parseWith(ListQuerySchema, request.query, 'query string');
    const queries = await queriesOf(request.params);
    const page = queries.indexes
      .definitions()
      .slice(start, pageSize === undefined ? undefined : start + pageSize);
    if (namesOnly === 'true') return { Results: page.map((d) => d.Name) };
    // RavenDB's GetIndexesOperation reads definitions here; Rookery's clients read stats.
    if (isRavenClient(request.headers)) return { Results: page.map(toRavenIndexDefinition) };
    return { Results: page.map((d) => statsOf(context, queries, d.Name)) };
  });

  // The definition exactly as PUT took it (the index file keeps it), so an editor can start from any index —
  // also one made elsewhere — and PUT → GET → PUT is identity.
  app.get('/databases/:db/indexes/definition', async (request) => {
    const { name } = parseWith(NameQuerySchema, request.query, 'query string');
    const queries = await queriesOf(request.params);
    const reader = queries.indexes.reader(name);
    if (!reader) throw notFound(queries, name);
    return reader.definition;
  });

  app.get('/databases/:db/indexes/stats', async (request) => {
    const { name } = parseWith(NameQuerySchema, request.query, 'query string');
    return statsOf(context, await queriesOf(request.params), name);
  });

  app.delete('/databases/:db/indexes', async (request, reply) => {
    const { name } = parseWith(NameQuerySchema, request.query, 'query string');
    const queries = await queriesOf(request.params);
    const deleted = await context.indexing.dropIndex(queries.db, name);
    if (!deleted) throw notFound(queries, name);
    return reply.code(204).send();
  });

  app.post('/databases/:db/indexes/reset', async (request) => {
    const { name } = parseWith(NameQuerySchema, request.query, 'query string');
    const queries = await queriesOf(request.params);
    const reset = await context.indexing.request({ type: 'reset', db: queries.db.name.toLowerCase(), name });
    if (!reset) throw notFound(queries, name);
    return { Index: name, Reset: true };
  });
}

function statsOf(context: RouteContext, queries: DatabaseQueries, name: string): IndexStats {
  const reader = queries.indexes.reader(name);
  if (!reader) throw notFound(queries, name);
  // An index the worker fleet builds says how far the worker is (indexing/worker-builds.ts).
  return context.indexing.workerBuilds.statsWith(
    queries.db.name,
    indexStatsOf(reader.connection, queries.db),
  );
}

function notFound(queries: DatabaseQueries, name: string): RookeryError {
  return new RookeryError(
    'IndexNotFound',
    `There is no index named ${name}; list them with GET /databases/${queries.db.name}/indexes`,
  );
}
