import { HiLoRequestSchema, IsoDateSchema } from '@rookery/protocol';
import type { FastifyInstance } from 'fastify';
import { entityTag, ifNoneMatch } from '../http/etag.js';
import { databaseOf, parseWith, type RouteContext } from './context.js';

const HiLoQuerySchema = HiLoRequestSchema.extend({ lastRangeAt: IsoDateSchema.optional() });

/** `GET /databases/{db}/stats` and `GET /databases/{db}/hilo/next`. */
export function statsRoutes(app: FastifyInstance, context: RouteContext): void {
  app.get('/databases/:db/stats', (request, reply) => {
    const db = databaseOf(context, request);
    const tag = entityTag([db.databaseId, db.lastEtag]);
    reply.header('etag', tag);
    if (ifNoneMatch(request.headers['if-none-match'], tag)) return reply.code(304).send();
    return reply.send(db.stats());
  });

  app.get('/databases/:db/hilo/next', async (request, reply) => {
    const db = databaseOf(context, request);
    const query = parseWith(HiLoQuerySchema, request.query, 'query string');
    const range = await db.nextHiLo(
      query.tag,
      query.lastBatchSize,
      query.lastRangeAt === undefined ? undefined : Date.parse(query.lastRangeAt),
    );
    // Every call hands out a new range: never cache it.
    reply
      .header('cache-control', 'no-store')
      .header('etag', entityTag([range.Prefix, range.Low, range.High]));
    return range;
  });
}
