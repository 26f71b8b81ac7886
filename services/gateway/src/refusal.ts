// What the gateway answers when it refuses a request itself: a RookeryError as everywhere (stable code,
// problem+json body), plus the Retry-After that the passing refusals carry (rate limit, a tenant that is
// starting). A refusal leaves one of two ways: as the HTTP response of a request, or written on the raw
// socket of a WebSocket upgrade the gateway did not make, where no ServerResponse exists.
import http from 'node:http';
import { isControlStoreUnreachable } from '@rookery/control-store';
import { type ErrorCode, RookeryError, rawProblemResponse as rawProblem } from '@rookery/protocol';

export class Refusal extends RookeryError {
  constructor(
    code: ErrorCode,
    message: string,
    details: Record<string, unknown> = {},
    /** Seconds until a retry may succeed; sent as Retry-After. */
    readonly retryAfterSeconds: number | null = null,
  ) {
    super(code, message, details);
  }
}

export function gatewayError(
  code: ErrorCode,
  message: string,
  details: Record<string, unknown> = {},
  retryAfterSeconds: number | null = null,
): Refusal {
  return new Refusal(code, message, details, retryAfterSeconds);
}

/** How long a client waits before retrying while the control store cannot be reached. */
const STORE_RETRY_AFTER_SECONDS = 5;

/**
 * The answer to a request that failed with something other than a RookeryError: the control store out of
 * reach (its PostgreSQL restarting, say) is a passing outage, 503 ControlStoreUnavailable with Retry-After;
 * anything else is the gateway's own failure, 500, which the caller logs as a bug (`bug`).
 */
export function unexpectedFailure(error: unknown): { answer: RookeryError; bug: boolean } {
  if (isControlStoreUnreachable(error)) {
    return {
      answer: gatewayError(
        'ControlStoreUnavailable',
        `The gateway cannot reach the control store right now; retry the request in ${STORE_RETRY_AFTER_SECONDS} s.`,
        {},
        STORE_RETRY_AFTER_SECONDS,
      ),
      bug: false,
    };
  }
  return { answer: gatewayError('InternalError', 'The gateway failed; retry the request.'), bug: true };
}

function retryAfterOf(error: RookeryError): number | null {
  return error instanceof Refusal ? error.retryAfterSeconds : null;
}

/** The refusal as the answer to a request; a response already under way can only be cut. */
export function sendProblem(response: http.ServerResponse, error: RookeryError): void {
  if (response.headersSent) {
    response.destroy(error);
    return;
  }
  const retryAfter = retryAfterOf(error);
  if (retryAfter !== null) response.setHeader('retry-after', String(retryAfter));
  const body = JSON.stringify(error.toProblem());
  response.writeHead(error.status, { 'content-type': 'application/problem+json' });
  response.end(body);
}

/**
 * The refusal as a whole HTTP/1.1 response in bytes, for the socket of an upgrade that will not happen:
 * the connection closes after it (an upgrade request's connection is never reused).
 */
export function rawProblemResponse(error: RookeryError): string {
  return rawProblem(error.toProblem(), http.STATUS_CODES[error.status] ?? 'Error', retryAfterOf(error));
}
