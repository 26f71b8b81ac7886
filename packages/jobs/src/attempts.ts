// The rules for one attempt, shared by both queues so they behave alike:
// how long it may run, what happens after it fails, and what its failure says.

/**
 * The delay before the retry that follows failed attempt `failedAttempt`
 * (1-based): backoff × 2^(n−1), plus up to as much again of random jitter so
 * that jobs failing together do not retry together. This is pg-boss's formula
 * (retryBackoff), so SQLite and PostgreSQL wait alike.
 */
export function retryDelayMs(backoffMs: number, failedAttempt: number, random: () => number = Math.random) {
  const base = backoffMs * 2 ** Math.min(16, Math.max(0, failedAttempt - 1));
  return Math.round(base * (1 + random()));
}

/**
 * When a worker gives up on its own attempt: a little before the lease runs out
 * in the database, so it can record the failure itself (and stop the handler)
 * before anyone else could take the job over.
 */
export function attemptDeadlineMs(leaseMs: number): number {
  return leaseMs - Math.min(5_000, Math.floor(leaseMs / 10));
}

/** The failure recorded for an attempt whose lease ran out, whoever noticed it first. */
export const LEASE_EXPIRED_MESSAGE =
  'The attempt did not finish within its lease (its worker died, was stopped, or the handler overran).';
