import { CreateDatabaseRequestSchema, DatabaseNameSchema } from '@rookery/protocol';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { parseWith, type RouteContext } from './context.js';

/** Database management: databases are created explicitly, never on first write. */
export function databaseRoutes(app: FastifyInstance, context: RouteContext): void {
  app.put('/admin/databases', async (request, reply) => {
    const { Name } = parseWith(CreateDatabaseRequestSchema, request.body, 'database definition');
    const db = context.catalog.create(Name);
    reply.code(201);
    return { Name: db.name, DatabaseId: db.databaseId };
  });

  app.get('/databases', async () => ({ Databases: context.catalog.list() }));

  app.delete('/admin/databases', async (request, reply) => {
    const { name } = parseWith(z.object({ name: DatabaseNameSchema }), request.query, 'query string');
    context.catalog.get(name); // 404 before touching the indexer
    await context.indexing.forget(name);
    await context.catalog.delete(name);
    return reply.code(204).send();
  });
}
