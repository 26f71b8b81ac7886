import {
  BatchRequestSchema,
  BatchResponseSchema,
  isRavenClient,
  toRavenCommandResult,
  validated,
} from '@rookery/protocol';
import type { FastifyInstance } from 'fastify';
import { storageQuotaExceeded, storageQuotaOf } from '../http/storage-quota.js';
import { DatabaseParams, databaseOf, type RequestParts, type RouteContext } from './context.js';

const BatchBody = validated(BatchRequestSchema, 'batch');

/**
 * `POST /databases/{db}/bulk_docs`: one ACID batch of PUT / DELETE / PATCH commands. With a storage quota
 * forwarded by the gateway, a tenant at its quota may still send batches that only delete (that is how it
 * gets under it again); anything else is refused whole with 507.
 */
export function batchRoutes(fastify: FastifyInstance, context: RouteContext): void {
  const app = fastify.withTypeProvider<RequestParts>();
  const schema = {
    summary: 'One ACID batch of PUT, DELETE and PATCH commands',
    params: DatabaseParams,
    body: BatchBody,
    response: {
      // RavenDB's clients (which say so in a header) get RavenDB's shape of each result instead.
      201: { description: 'One result per command, in order', schema: BatchResponseSchema },
    },
  };
  app.post('/databases/:db/bulk_docs', { schema }, async (request, reply) => {
    const db = databaseOf(context, request);
    const { Commands } = request.body;
    const quota = storageQuotaOf(request.headers);
    if (quota !== null && Commands.some((command) => command.Type !== 'DELETE')) {
      const bytes = await context.storage.recent();
      if (bytes >= quota)
        throw storageQuotaExceeded(
          quota,
          `The tenant stores ${bytes} bytes, at its quota: this batch has commands other than DELETE`,
        );
    }
    const results = await db.batch(Commands);
    reply.code(201);
    // RavenDB's clients read a PUT's result as the stored document's metadata (protocol's ravendb.ts).
    return { Results: isRavenClient(request.headers) ? results.map(toRavenCommandResult) : results };
  });
}
