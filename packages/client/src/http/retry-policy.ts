// When a failed request is sent again. Only when sending it again cannot apply it twice:
// - 503 TenantStarting / TenantUnavailable come from the gateway before the request reached the tenant
//   (waking it, or it was restarting): safe for every request;
// - other 503s (DatabaseUnavailable, …) and network failures may come after the server started working on
//   the request: only idempotent requests (GET, PUT and DELETE by id, queries) are sent again;
// - 429 RateLimited is refused before any work, but retrying it blindly just adds load: it is surfaced
//   unless the store's conventions ask for retries.
// Waits follow Retry-After when the server gives it, and the total wait per request is bounded.

export interface RetryOptions {
  /** The most time one request may spend waiting between attempts (default 30 s). */
  maxRetryWaitMs: number;
  /** Retry 429 RateLimited answers, honouring Retry-After (default false: throw RateLimitedError). */
  retryOnRateLimit: boolean;
  /** The first wait when the server gives no Retry-After; doubled each attempt (default 100 ms). */
  baseRetryDelayMs: number;
}

export const DEFAULT_RETRY_OPTIONS: RetryOptions = {
  maxRetryWaitMs: 30_000,
  retryOnRateLimit: false,
  baseRetryDelayMs: 100,
};

/** The longest single wait without Retry-After: doubling stops here. */
const MAX_BACKOFF_MS = 2_000;

/** 503 codes the gateway answers before forwarding: the tenant never saw the request. */
const NOT_STARTED_CODES: ReadonlySet<string> = new Set(['TenantStarting', 'TenantUnavailable']);

export type Failure =
  | { kind: 'status'; status: number; code: string; retryAfterSeconds: number | null }
  | { kind: 'network' };

export interface RetryInput {
  failure: Failure;
  idempotent: boolean;
  /** Attempts made so far (1 after the first). */
  attempt: number;
  /** Time already spent waiting between attempts of this request. */
  waitedMs: number;
}

/** Milliseconds to wait before the next attempt, or null to give up and surface the failure. */
export function retryDelay(input: RetryInput, options: RetryOptions): number | null {
  const { failure } = input;
  let retryable: boolean;
  if (failure.kind === 'network') retryable = input.idempotent;
  else if (failure.status === 503) retryable = NOT_STARTED_CODES.has(failure.code) || input.idempotent;
  else if (failure.status === 429) retryable = options.retryOnRateLimit && failure.code === 'RateLimited';
  else retryable = false;
  if (!retryable) return null;

  const backoff = Math.min(MAX_BACKOFF_MS, options.baseRetryDelayMs * 2 ** (input.attempt - 1));
  const suggested =
    failure.kind === 'status' && failure.retryAfterSeconds !== null ? failure.retryAfterSeconds * 1000 : null;
  const delay = suggested ?? backoff;
  const remaining = options.maxRetryWaitMs - input.waitedMs;
  if (remaining <= 0) return null;
  // A Retry-After longer than the budget left: wait what is left once more rather than give up early,
  // unless even that is nothing.
  return Math.min(delay, remaining);
}
