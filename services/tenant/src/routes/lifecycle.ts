import { SweepRequestSchema, type SweepResult, validated } from '@rookery/protocol';
import type { FastifyInstance } from 'fastify';
import { DatabaseParams, databaseOf, type RequestParts, type RouteContext } from './context.js';

/** The body may be absent: now and the largest limit. */
const SweepBody = validated(SweepRequestSchema.optional(), 'sweep request');

/**
 * `POST /databases/{db}/admin/sweep`: one batch of archival and expiration. The worker fleet's
 * sweep jobs call it (through the host) and repeat while `More` is true. The tenant keeps no timer
 * of its own: scheduling is the fleet's, and an idle tenant stays asleep between sweeps. The work
 * goes through the database's single writer like any write: nothing else writes its files.
 */
export function lifecycleRoutes(fastify: FastifyInstance, context: RouteContext): void {
  const app = fastify.withTypeProvider<RequestParts>();
  const schema = {
    summary: 'Archive and expire one batch of due documents',
    params: DatabaseParams,
    body: SweepBody,
  };
  app.post('/databases/:db/admin/sweep', { schema }, async (request, reply): Promise<SweepResult> => {
    const db = databaseOf(context, request);
    const { now, limit } = request.body ?? {};
    const result = await db.sweepDue(now === undefined ? Date.now() : Date.parse(now), { limit });
    // Each call does new work: never answered from a cache.
    reply.header('cache-control', 'no-store');
    return result;
  });
}
