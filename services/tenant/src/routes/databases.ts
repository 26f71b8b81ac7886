import {
  CreateDatabaseRequestSchema,
  DatabaseListResponseSchema,
  DatabaseNameSchema,
  documented,
  RavenDatabaseRecordSchema,
  RavenDeleteDatabasesSchema,
  type RouteSchema,
} from '@rookery/protocol';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { parseWith, type RouteContext } from './context.js';
import { createDatabase, deleteDatabase } from './database-admin.js';
import {
  CreateQuerySchema,
  createRavenDatabase,
  deleteRavenDatabases,
  isRavenDatabaseRecord,
} from './ravendb/databases.js';

const DeleteQuerySchema = z.object({ name: DatabaseNameSchema });

// Both routes take Rookery's shape or RavenDB's on one path, told apart by the body: each handler parses the
// one it got (its refusal names that shape), so the schemas are declared for the document only.

/**
 * Database management: databases are created explicitly, never on first write. RavenDB's clients send their
 * own shapes to the same paths (a DatabaseRecord; a DELETE with a body and no `?name=`): ravendb/databases.ts.
 */
export function databaseRoutes(app: FastifyInstance, context: RouteContext): void {
  const createSchema = {
    summary: "Create a database (Rookery's {Name} or RavenDB's DatabaseRecord)",
    querystring: documented(CreateQuerySchema),
    body: documented(z.union([CreateDatabaseRequestSchema, RavenDatabaseRecordSchema])),
  };
  app.put('/admin/databases', { schema: createSchema }, async (request, reply) => {
    reply.code(201);
    if (isRavenDatabaseRecord(request.body)) return createRavenDatabase(context, request);
    const { Name } = parseWith(CreateDatabaseRequestSchema, request.body, 'database definition');
    return createDatabase(context, Name);
  });

  // Typed: a schema of a summary alone shares no property with fastify's FastifySchema.
  const listSchema: RouteSchema = {
    summary: "The tenant's databases",
    response: { 200: { description: 'Their names, sorted', schema: DatabaseListResponseSchema } },
  };
  app.get('/databases', { schema: listSchema }, async () => ({
    Databases: context.catalog.list(),
  }));

  const deleteSchema = {
    summary: "Delete a database (?name=) or, in RavenDB's shape, several",
    querystring: documented(DeleteQuerySchema.partial()),
    body: documented(RavenDeleteDatabasesSchema.optional()),
  };
  app.delete('/admin/databases', { schema: deleteSchema }, async (request, reply) => {
    if (!(request.query as { name?: unknown }).name && request.body !== undefined)
      return reply.send(await deleteRavenDatabases(context, request));
    const { name } = parseWith(DeleteQuerySchema, request.query, 'query string');
    await deleteDatabase(context, name);
    return reply.code(204).send();
  });
}
