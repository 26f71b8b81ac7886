// A failed attempt's error becomes the job's lastError, and tenant admins read it (GET
// /control/jobs/{id}): it must never name a path of this server, a bucket, or other internals.
// The messages of our own errors (RookeryError) are written for tenants and name backups and
// databases, not where they live; anything else (a file system, driver or network error) says
// what went wrong in the server's terms, often with a path. So every handler is wrapped: a
// RookeryError goes through with any of the worker's own places taken out of its message (in
// case one slipped in), any other error is logged as it is and replaced by a message that points
// the tenant at an operator and the operator at this job's lines in the worker's log.
import path from 'node:path';
import type { JobHandler } from '@rookery/jobs';
import { isRookeryError, RookeryError } from '@rookery/protocol';

/** What stands in for one of the worker's places in a message that reaches a tenant. */
const PLACE = '(a location on the server)';

/** Error codes of Node's system errors (ENOENT, ENOTDIR, …) say what failed without saying where. */
const SYSTEM_CODE = /^E[A-Z0-9_]{1,30}$/;

export function withTenantSafeErrors<P>(
  handler: JobHandler<P>,
  serverPlaces: readonly string[],
): JobHandler<P> {
  // As configured and as resolved (a message may hold either); a URL (s3://…) as it is. Longest
  // first, so a place inside another is never half replaced.
  const spellings = serverPlaces
    .filter(Boolean)
    .flatMap((p) => (p.includes('://') ? [p] : [p, path.resolve(p)]));
  const places = [...new Set(spellings)].sort((a, b) => b.length - a.length);
  return async (job, context) => {
    try {
      await handler(job, context);
    } catch (error) {
      const safe = tenantSafeError(error, places, job.id);
      if (safe !== error) {
        context.log.error(
          { err: error, shownAs: safe.message },
          'job failed; its tenant sees a safe message',
        );
      }
      throw safe;
    }
  };
}

/** The error to record for the tenant: `error` itself when it is already safe to show. */
export function tenantSafeError(error: unknown, places: readonly string[], jobId: string): Error {
  if (isRookeryError(error)) {
    const message = withoutPlaces(error.message, places);
    if (message === error.message) return error;
    const details = JSON.parse(withoutPlaces(JSON.stringify(error.details), places)) as Record<
      string,
      unknown
    >;
    return new RookeryError(error.code, message, details);
  }
  const code = (error as { code?: unknown } | null)?.code;
  const what = typeof code === 'string' && SYSTEM_CODE.test(code) ? ` (${code})` : '';
  return new RookeryError(
    'InternalError',
    `The job failed on an internal error${what}; it is retried while attempts are left. If it keeps failing, an operator finds the details in the worker's log under job ${jobId}.`,
  );
}

function withoutPlaces(text: string, places: readonly string[]): string {
  let result = text;
  for (const place of places) result = result.split(place).join(PLACE);
  return result;
}
