import { CreateDatabaseRequestSchema, DatabaseNameSchema } from '@rookery/protocol';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { parseWith, type RouteContext } from './context.js';
import { createDatabase, deleteDatabase } from './database-admin.js';
import { createRavenDatabase, deleteRavenDatabases, isRavenDatabaseRecord } from './ravendb/databases.js';

/**
 * Database management: databases are created explicitly, never on first write. RavenDB's clients send their
 * own shapes to the same paths (a DatabaseRecord; a DELETE with a body and no `?name=`): ravendb/databases.ts.
 */
export function databaseRoutes(app: FastifyInstance, context: RouteContext): void {
  app.put('/admin/databases', async (request, reply) => {
    reply.code(201);
    if (isRavenDatabaseRecord(request.body)) return createRavenDatabase(context, request);
    const { Name } = parseWith(CreateDatabaseRequestSchema, request.body, 'database definition');
    return createDatabase(context, Name);
  });

  app.get('/databases', async () => ({ Databases: context.catalog.list() }));

  app.delete('/admin/databases', async (request, reply) => {
    if (!(request.query as { name?: unknown }).name && request.body !== undefined)
      return reply.send(await deleteRavenDatabases(context, request));
    const { name } = parseWith(z.object({ name: DatabaseNameSchema }), request.query, 'query string');
    await deleteDatabase(context, name);
    return reply.code(204).send();
  });
}
