import { PROBLEM_CONTENT_TYPE, RookeryError, rookeryErrorFromThrown } from '@rookery/protocol';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** Sends an error as `application/problem+json`. */
export function sendProblem(reply: FastifyReply, error: RookeryError): FastifyReply {
  return reply.code(error.status).type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(error.toProblem()));
}

/**
 * Maps anything thrown by a handler or by fastify itself to a RookeryError, so
 * every failure reaches the client with a stable code and a useful message
 * (the mapping is protocol's, shared with the other services).
 */
export function toRookeryError(error: unknown, maxBodyBytes: number): RookeryError {
  return rookeryErrorFromThrown(error, {
    maxBodyBytes,
    hints: {
      bodyTooLarge: 'split it into several requests, or stream it to bulk_insert',
      mediaType: 'bulk_insert takes application/x-ndjson',
    },
  });
}

export function notFoundHandler(request: FastifyRequest, reply: FastifyReply): void {
  sendProblem(
    reply,
    new RookeryError(
      'RouteNotFound',
      `There is no route ${request.method} ${request.url.split('?')[0]}; see the API list in the README`,
    ),
  );
}
