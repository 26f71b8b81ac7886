// Turns a non-2xx HTTP answer into a typed error. Rookery answers errors as application/problem+json
// with a stable `code`; anything else (a proxy's page, an empty 502) becomes UnexpectedResponse with the
// status and the start of the body, so nothing is lost when reporting it.
import { ProblemSchema } from '@rookery/protocol';
import { errorForCode, type RookeryClientError } from '../errors.js';

/** Retry-After as seconds (delta-seconds or an HTTP date), or null when absent or unreadable. */
export function retryAfterSeconds(header: string | string[] | undefined, now = Date.now()): number | null {
  const value = Array.isArray(header) ? header[0] : header;
  if (value === undefined || value.trim() === '') return null;
  const seconds = Number(value);
  if (Number.isFinite(seconds)) return Math.max(0, seconds);
  const date = Date.parse(value);
  return Number.isNaN(date) ? null : Math.max(0, (date - now) / 1000);
}

export function errorFromResponse(
  status: number,
  headers: Record<string, string | string[] | undefined>,
  body: string,
): RookeryClientError {
  const retryAfter = retryAfterSeconds(headers['retry-after']);
  let json: unknown;
  try {
    json = body === '' ? undefined : JSON.parse(body);
  } catch {
    json = undefined;
  }
  const problem = ProblemSchema.safeParse(json);
  if (!problem.success) {
    return errorForCode({
      code: 'UnexpectedResponse',
      status,
      detail: `The server answered ${status} without a problem body: ${body.slice(0, 200) || '(empty)'}`,
    });
  }
  const { type: _type, title: _title, status: _status, detail, code, ...details } = problem.data;
  return errorForCode({ code, status, detail, details, retryAfterSeconds: retryAfter });
}
