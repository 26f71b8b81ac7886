import {
  isRavenClient,
  PROBLEM_CONTENT_TYPE,
  RAVEN_DATABASE_MISSING_FIELD,
  RookeryError,
  rookeryErrorFromThrown,
} from '@rookery/protocol';
import type { FastifyReply, FastifyRequest } from 'fastify';

/** Sends an error as `application/problem+json`. */
export function sendProblem(reply: FastifyReply, error: RookeryError): FastifyReply {
  // RavenDB's clients read a 404 as "no such document" (a load answers null): they learn that the database
  // is missing from RavenDB's own answer, a 503 with `Database-Missing`, and throw DatabaseDoesNotExistException.
  if (error.code === 'DatabaseNotFound' && isRavenClient(reply.request.headers))
    reply.code(503).header(RAVEN_DATABASE_MISSING_FIELD, error.message);
  else reply.code(error.status);
  return reply.type(PROBLEM_CONTENT_TYPE).send(JSON.stringify(error.toProblem()));
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

/**
 * Logs a request that failed, at the level its cause deserves: a refusal of the caller's request (4xx) at
 * info; a RookeryError answering 503 — a refusal the caller is told to retry (LeaseExpired, MirrorFenced,
 * an indexer restarting), the system working as designed — at warn, without a stack (a lapsed lease refuses
 * every write); anything else at 5xx, a bug or a broken disk, at error.
 */
export function logFailure(request: FastifyRequest, thrown: unknown, answer: RookeryError): void {
  const db = (request.params as { db?: string } | undefined)?.db;
  if (answer.status < 500) request.log.info({ code: answer.code, db }, 'request refused');
  else if (answer.status === 503 && thrown instanceof RookeryError)
    request.log.warn({ code: answer.code, db, detail: answer.message }, 'request refused for now: retry');
  else request.log.error({ err: thrown, db }, 'unhandled error');
}
