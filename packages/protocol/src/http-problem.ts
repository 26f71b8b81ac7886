// What an HTTP service of Rookery answers when something throws: one mapping
// from whatever was thrown (our RookeryError, a zod failure, fastify's own
// body-parsing errors) to a RookeryError, so every service built on fastify
// answers the same failure with the same code. Fastify's errors are matched by
// their stable `code` strings, so this package needs no fastify dependency.
import { ZodError } from 'zod';
import { invalidRequest, RookeryError } from './errors.js';

/** The media type of every error answer (RFC 9457). */
export const PROBLEM_CONTENT_TYPE = 'application/problem+json';

/**
 * A problem as a whole HTTP/1.1 response in bytes, for a socket that has no response object: an upgrade
 * refused (the gateway's WebSockets, a host's relay). The connection closes after it: an upgrade
 * request's connection is never reused. `statusText` is the reason phrase.
 */
export function rawProblemResponse(
  problem: { status: number },
  statusText: string,
  retryAfterSeconds: number | null = null,
): string {
  const body = JSON.stringify(problem);
  const head = [
    `HTTP/1.1 ${problem.status} ${statusText}`,
    `content-type: ${PROBLEM_CONTENT_TYPE}`,
    `content-length: ${Buffer.byteLength(body)}`,
    'connection: close',
  ];
  if (retryAfterSeconds !== null) head.push(`retry-after: ${retryAfterSeconds}`);
  return `${head.join('\r\n')}\r\n\r\n${body}`;
}

export interface ThrownErrorContext {
  /** The server's body limit, named in the 413 answer. */
  maxBodyBytes: number;
  /** What the service suggests instead, added to the 413 and 415 answers. */
  hints?: { bodyTooLarge?: string; mediaType?: string };
}

/** The shape of fastify's errors, read structurally. */
interface FrameworkError {
  code?: unknown;
  statusCode?: unknown;
  message?: unknown;
}

export function rookeryErrorFromThrown(error: unknown, context: ThrownErrorContext): RookeryError {
  if (error instanceof RookeryError) return error;
  if (error instanceof ZodError) return invalidRequest(error, 'request');
  const framework = (typeof error === 'object' && error !== null ? error : {}) as FrameworkError;
  const message = typeof framework.message === 'string' ? framework.message : undefined;
  switch (framework.code) {
    case 'FST_ERR_CTP_BODY_TOO_LARGE':
      return new RookeryError(
        'PayloadTooLarge',
        `The request body is larger than ${context.maxBodyBytes} bytes; ${context.hints?.bodyTooLarge ?? 'send a smaller body'}`,
        { limitBytes: context.maxBodyBytes },
      );
    case 'FST_ERR_CTP_INVALID_MEDIA_TYPE': {
      const hint = context.hints?.mediaType;
      return new RookeryError(
        'UnsupportedMediaType',
        `This endpoint takes JSON: send the header "Content-Type: application/json"${hint ? ` (${hint})` : ''}`,
      );
    }
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
  if (error instanceof SyntaxError || message?.includes('forbidden prototype property')) {
    return new RookeryError('InvalidJson', `The request body is not valid JSON: ${message}`);
  }
  const status = framework.statusCode;
  if (typeof status === 'number' && status >= 400 && status < 500) {
    return new RookeryError('InvalidRequest', message ?? 'The request is not valid');
  }
  return new RookeryError('InternalError', 'Something went wrong on our side; the request may be retried');
}
