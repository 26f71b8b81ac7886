import { BatchRequestSchema, type BatchResponse } from '@rookery/protocol';
import type { FastifyInstance } from 'fastify';
import { databaseOf, parseWith, type RouteContext } from './context.js';

/** `POST /databases/{db}/bulk_docs`: one ACID batch of PUT / DELETE / PATCH commands. */
export function batchRoutes(app: FastifyInstance, context: RouteContext): void {
  app.post('/databases/:db/bulk_docs', async (request, reply): Promise<BatchResponse> => {
    const db = databaseOf(context, request);
    const { Commands } = parseWith(BatchRequestSchema, request.body, 'batch');
    const results = await db.batch(Commands);
    reply.code(201);
    return { Results: results };
  });
}
