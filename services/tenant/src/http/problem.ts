import { invalidRequest, RookeryError } from '@rookery/protocol';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { ZodError } from 'zod';

/** Sends an error as `application/problem+json`. */
export function sendProblem(reply: FastifyReply, error: RookeryError): FastifyReply {
  return reply.code(error.status).type('application/problem+json').send(JSON.stringify(error.toProblem()));
}

/**
 * Maps anything thrown by a handler or by fastify itself to a RookeryError, so
 * every failure reaches the client with a stable code and a useful message.
 */
export function toRookeryError(error: unknown, maxBodyBytes: number): RookeryError {
  if (error instanceof RookeryError) return error;
  if (error instanceof ZodError) return invalidRequest(error, 'request');
  const fastifyError = error as Partial<FastifyError>;
  switch (fastifyError.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new RookeryError(
        'PayloadTooLarge',
        `The request body is larger than ${maxBodyBytes} bytes; split it into several requests, or stream it to bulk_insert`,
        { limitBytes: maxBodyBytes },
      );
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE':
      return new RookeryError(
        'UnsupportedMediaType',
        'This endpoint takes JSON: send the header "Content-Type: application/json" (bulk_insert takes application/x-ndjson)',
      );
    case 'FST_ERR_CTP_INVALID_JSON_BODY':
      return new RookeryError(
        'InvalidJson',
        'The request body is not valid JSON; check quotes, commas and brackets',
      );
    case 'FST_ERR_CTP_EMPTY_JSON_BODY':
      return new RookeryError('InvalidJson', 'The request body is empty; send a JSON document');
    case 'FST_ERR_CTP_INVALID_CONTENT_LENGTH':
      return new RookeryError(
        'InvalidRequest',
        'The Content-Length header does not match the body that was sent',
      );
  }
  if (error instanceof SyntaxError || fastifyError.message?.includes('forbidden prototype property')) {
    return new RookeryError('InvalidJson', `The request body is not valid JSON: ${fastifyError.message}`);
  }
  const status = fastifyError.statusCode;
  if (status !== undefined && status >= 400 && status < 500) {
    return new RookeryError('InvalidRequest', fastifyError.message ?? 'The request is not valid');
  }
  return new RookeryError('InternalError', 'Something went wrong on our side; the request may be retried');
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
