import {
  DatabaseStatsSchema,
  HiLoRequestSchema,
  HiLoResponseSchema,
  isRavenClient,
  RavenDateSchema,
  validated,
} from '@rookery/protocol';
import type { FastifyInstance } from 'fastify';
import { z } from 'zod';
import { entityTag, ifNoneMatch } from '../http/etag.js';
import { DatabaseParams, databaseOf, type RequestParts, type RouteContext } from './context.js';
import { ravenIndexesOf } from './ravendb/statistics.js';

// `lastRangeAt` is the `LastRangeAt` of the caller's previous range: RavenDB's clients send it without a zone
// (`0001-02-01T00:00:00.0000000` before their first range) and empty when they have none.
const HiLoQuery = validated(
  HiLoRequestSchema.extend({
    lastRangeAt: z.union([z.literal('').transform(() => undefined), RavenDateSchema]).optional(),
  }),
  'query string',
);

/** `GET /databases/{db}/stats` and `GET /databases/{db}/hilo/next`. */
export function statsRoutes(fastify: FastifyInstance, context: RouteContext): void {
  const app = fastify.withTypeProvider<RequestParts>();
  const statsSchema = {
    summary: "The database's counts, last etag and size",
    params: DatabaseParams,
    // RavenDB's clients get its indexes' staleness too (`Indexes`), beside these.
    response: {
      200: { description: 'The counts', schema: DatabaseStatsSchema },
      304: { description: 'Not modified: the If-None-Match tag is still current' },
    },
  };
  app.get('/databases/:db/stats', { schema: statsSchema }, async (request, reply) => {
    const db = databaseOf(context, request);
    // RavenDB's clients wait for indexes by reading their staleness here: for them (only, as reading it
    // starts the database's indexing), the answer lists the indexes too.
    if (isRavenClient(request.headers))
      return reply.send({ ...db.stats(), Indexes: await ravenIndexesOf(context, db.name) });
    const tag = entityTag([db.databaseId, db.lastEtag]);
    reply.header('etag', tag);
    if (ifNoneMatch(request.headers['if-none-match'], tag)) return reply.code(304).send();
    return reply.send(db.stats());
  });

  const hiloSchema = {
    summary: 'A range of ids for client-side generation',
    params: DatabaseParams,
    querystring: HiLoQuery,
    response: {
      200: {
        description: 'A new range, never the same twice',
        // LastRangeAt: when it was handed out, which RavenDB's clients send back with their next call.
        schema: HiLoResponseSchema.extend({ LastRangeAt: z.iso.datetime() }),
      },
    },
  };
  app.get('/databases/:db/hilo/next', { schema: hiloSchema }, async (request, reply) => {
    const db = databaseOf(context, request);
    const query = request.query;
    const range = await db.nextHiLo(query.tag, query.lastBatchSize, query.lastRangeAt);
    // Every call hands out a new range: never cache it.
    reply
      .header('cache-control', 'no-store')
      .header('etag', entityTag([range.Prefix, range.Low, range.High]));
    return { ...range, LastRangeAt: new Date().toISOString() };
  });
}
