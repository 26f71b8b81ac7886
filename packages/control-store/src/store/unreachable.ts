// Whether a failed store call failed because the store could not be reached (its server down,
// restarting or cut off) rather than because of the call: a caller answers the first with 503 and
// Retry-After, as a passing outage, and the second as the bug or refusal it is.
const SYSTEM_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ETIMEDOUT',
  'EPIPE',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'ENOTFOUND',
  'EAI_AGAIN',
]);

/**
 * PostgreSQL's SQLSTATEs for "not now": class 08 (connection exception), 57P01 (terminated by the
 * administrator: a fast shutdown), 57P02 (crash shutdown), 57P03 (cannot connect now: starting or
 * shutting down).
 */
const unavailableSqlState = (code: string) => code.startsWith('08') || /^57P0[123]$/.test(code);

/** node-postgres' own errors when a connection ends or cannot be made in time (they carry no code). */
const DRIVER_MESSAGES = [
  /^Connection terminated/,
  /timeout exceeded when trying to connect/,
  /^Client has encountered a connection error/,
];

/** True when `error` (or an error it was caused by) says the control store could not be reached. */
export function isControlStoreUnreachable(error: unknown): boolean {
  for (let e: unknown = error, depth = 0; e instanceof Error && depth < 5; e = e.cause, depth++) {
    const code = (e as { code?: unknown }).code;
    if (typeof code === 'string' && (SYSTEM_CODES.has(code) || unavailableSqlState(code))) return true;
    if (DRIVER_MESSAGES.some((pattern) => pattern.test(e.message))) return true;
    if (e instanceof AggregateError && e.errors.some(isControlStoreUnreachable)) return true;
  }
  return false;
}
