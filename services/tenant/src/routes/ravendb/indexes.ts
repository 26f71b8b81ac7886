import { documented, fromRavenIndexDefinition, RavenPutIndexesSchema } from '@rookery/protocol';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import { DatabaseParams, parseWith, type RouteContext } from '../context.js';
import { defineStaticIndex } from '../static-indexes.js';

/** What RavenDB's PutIndexesOperation reads back: each index by name, with the (Raft) index of its change. */
export interface RavenPutIndexesResult {
  Results: { Index: string; RaftCommandIndex: number }[];
}

/**
 * `{"Indexes": [...]}` in RavenDB's shape, as its clients send it to `PUT …/admin/indexes` (and, for JavaScript
 * indexes only, to `PUT …/indexes`). Every definition is read before any is stored, so a batch with one
 * refused index changes nothing. RaftCommandIndex is the database's last etag (Rookery has no Raft log).
 */
export async function putRavenIndexes(
  context: RouteContext,
  request: FastifyRequest,
): Promise<RavenPutIndexesResult> {
  const { Indexes } = parseWith(RavenPutIndexesSchema, request.body, 'index definitions');
  const definitions = Indexes.map(fromRavenIndexDefinition);
  const queries = await context.indexing.forDatabase((request.params as { db: string }).db);
  const results: RavenPutIndexesResult['Results'] = [];
  for (const definition of definitions) {
    await defineStaticIndex(context, queries, definition);
    results.push({ Index: definition.Name, RaftCommandIndex: queries.db.lastEtag });
  }
  return { Results: results };
}

/** `PUT /databases/{db}/admin/indexes`: RavenDB's path for index definitions (admin access at the gateway). */
export function ravenIndexRoutes(app: FastifyInstance, context: RouteContext): void {
  const schema = {
    summary: "Create or replace indexes sent in RavenDB's shape",
    params: DatabaseParams,
    // Parsed by putRavenIndexes, which PUT /indexes shares for the same body in its other shape.
    body: documented(RavenPutIndexesSchema),
  };
  app.put('/databases/:db/admin/indexes', { schema }, async (request, reply) =>
    reply.code(201).send(await putRavenIndexes(context, request)),
  );
}
