// Which running tenants are idle: nothing in flight, no request for `idleStopMs`. A tenant answering a
// long request is never idle (its process reports what it has in flight once a second).
import type { TenantRecord } from './tenant-record.js';

/** How often to look: a quarter of the idle time, between 100 ms and 5 s. */
export function idleCheckEveryMs(idleStopMs: number): number {
  return Math.min(5_000, Math.max(100, Math.floor(idleStopMs / 4)));
}

/** The running tenants idle for at least `idleStopMs` at `now`, with how long. */
export function idleTenants(
  tenants: Iterable<TenantRecord>,
  now: number,
  idleStopMs: number,
): Array<{ tenant: TenantRecord; idleMs: number }> {
  const idle: Array<{ tenant: TenantRecord; idleMs: number }> = [];
  for (const tenant of tenants) {
    if (tenant.state !== 'running' || tenant.inFlight > 0) continue;
    const idleMs = now - (tenant.lastActivityAt ?? now);
    if (idleMs >= idleStopMs) idle.push({ tenant, idleMs });
  }
  return idle;
}
