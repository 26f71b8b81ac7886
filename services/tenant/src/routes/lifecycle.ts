import { SweepRequestSchema, type SweepResult } from '@rookery/protocol';
import type { FastifyInstance } from 'fastify';
import { databaseOf, parseWith, type RouteContext } from './context.js';

/**
 * `POST /databases/{db}/admin/sweep`: one batch of archival and expiration. The worker fleet's
 * sweep jobs call it (through the host) and repeat while `More` is true. The tenant keeps no timer
 * of its own: scheduling is the fleet's, and an idle tenant stays asleep between sweeps. The work
 * goes through the database's single writer like any write: nothing else writes its files.
 */
export function lifecycleRoutes(app: FastifyInstance, context: RouteContext): void {
  app.post('/databases/:db/admin/sweep', async (request, reply): Promise<SweepResult> => {
    const db = databaseOf(context, request);
    const { now, limit } = parseWith(SweepRequestSchema, request.body ?? {}, 'sweep request');
    const result = await db.sweepDue(now === undefined ? Date.now() : Date.parse(now), { limit });
    // Each call does new work: never answered from a cache.
    reply.header('cache-control', 'no-store');
    return result;
  });
}
