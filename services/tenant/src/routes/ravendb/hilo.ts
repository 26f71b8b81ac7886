import { HiLoRequestSchema, validated } from '@rookery/protocol';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { DatabaseParams, databaseOf, type RouteContext } from '../context.js';

const HiLoReturnQuery = validated(
  z.object({
    tag: HiLoRequestSchema.shape.tag,
    end: z.coerce.number().int().min(0),
    last: z.coerce.number().int().min(0),
  }),
  'query string',
);

/**
 * `PUT /databases/{db}/hilo/return?tag=&end=&last=`: RavenDB's clients hand back the unused part of their
 * range when their store closes. Rookery accepts the call and keeps the range spent: giving it back would
 * need the database's next id for the tag to still be `end` (no other client took a range since), and a gap
 * in the ids costs nothing, whereas an id handed out twice would overwrite a document.
 */
export function hiloReturnRoute(app: FastifyInstance, context: RouteContext): void {
  const schema = {
    summary: "RavenDB's clients hand back the rest of their HiLo range (it stays spent)",
    params: DatabaseParams,
    querystring: HiLoReturnQuery,
  };
  app.put('/databases/:db/hilo/return', { schema }, async (request, reply) => {
    databaseOf(context, request); // 404 DatabaseNotFound as for /hilo/next
    return reply.code(204).send();
  });
}
