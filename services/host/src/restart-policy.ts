// What a crash costs a tenant: restarts back off exponentially, and a tenant that fails more than
// `maxRestartsPerMinute` times within a minute is not started again (by a restart or a wake) until that
// minute has passed, so a crash loop cannot eat the host's cores.
import type { HostConfig } from './config.js';

export const FAILURE_WINDOW_MS = 60_000;

export type RestartPolicy = Pick<
  HostConfig,
  'maxRestartsPerMinute' | 'restartBackoffMs' | 'restartBackoffMaxMs'
>;

/** The failure times within the last minute, plus one now. */
export function withFailure(failures: readonly number[], now: number): number[] {
  return [...failures.filter((at) => now - at < FAILURE_WINDOW_MS), now];
}

/** After the failures of the last minute: restart after `delayMs`, or suspend the tenant until `suspendedUntil`. */
export function nextRestart(
  failures: readonly number[],
  policy: RestartPolicy,
): { delayMs: number } | { suspendedUntil: number } {
  const recent = failures.length;
  if (recent > policy.maxRestartsPerMinute) return { suspendedUntil: failures[0]! + FAILURE_WINDOW_MS };
  return {
    delayMs: Math.min(policy.restartBackoffMaxMs, policy.restartBackoffMs * 2 ** Math.max(0, recent - 1)),
  };
}
