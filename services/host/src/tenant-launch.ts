// Starting one tenant's process: a spare when one is ready (it is handed the tenant's directory and
// socket), a fresh process otherwise; into the tenant's cgroup; ready once it listens, or killed at
// `startTimeoutMs`. The supervisor decides when to start and what a start's outcome means.
import fs from 'node:fs';
import { type IndexBuildRequestMessage, RookeryError, readLease } from '@rookery/protocol';
import type { CgroupLimiter } from './cgroups.js';
import { Deadline } from './deadline.js';
import type { Exit, LeaseSource, SparePool, TenantLease, TenantProcess } from './tenant-process.js';
import type { TenantRecord } from './tenant-record.js';

/**
 * A used spare is replaced this long after the start it served, not at once: forking the replacement
 * would hold up the wake's answer by a few ms, and booting it takes a core for ~300 ms, which on a small
 * host competes with the woken tenant's first requests. Tenants woken within this window get a fresh
 * process, as when several wake at once (more spares are the answer to bursts: ROOKERY_SPARE_PROCESSES).
 */
const SPARE_REFILL_DELAY_MS = 250;

export interface LaunchDependencies {
  spares: SparePool;
  /** A fresh tenant process with these variables on top of the tenants' environment. */
  spawn: (tenantId: string, env: Record<string, string>) => TenantProcess;
  limiter: CgroupLimiter;
  startTimeoutMs: number;
  stopTimeoutMs: number;
  /** Told of the process's exit, whenever it comes (during the start too). */
  onExit: (proc: TenantProcess, exit: Exit) => void;
  /** Fleet mode: the tenant's placement epoch and what the host's lease has left, read when it is handed over; null on one machine. */
  lease: LeaseSource | null;
  /** Its indexer asks for a worker build (index-builds.ts). */
  onIndexBuild: (request: IndexBuildRequestMessage) => void;
}

/**
 * Starts the tenant's process and resolves once it listens, with the process and whether it was a spare. Rejects with
 * TenantUnavailable when it could not start, or when a stop was asked for meanwhile (it is then stopped).
 */
export async function launchTenant(
  t: TenantRecord,
  deps: LaunchDependencies,
): Promise<{ proc: TenantProcess; fromSpare: boolean }> {
  // Read before anything is made: an unknown placement fails the start rather than run the tenant unfenced.
  const epoch = deps.lease ? deps.lease.placementEpoch(t.id) : null;
  t.servingEpoch = epoch;
  fs.mkdirSync(t.dir, { recursive: true });
  /** The lease as it stands now (read again at each hand-over: a spare may take a while to be ready). */
  const lease = (): TenantLease | null => {
    const source = deps.lease;
    if (!source || epoch === null) return null;
    const reading = readLease(() => source.remainingMs());
    return {
      placementEpoch: epoch,
      leaseRemainingMs: reading.remainingMs,
      leaseMeasuredAtMs: reading.measuredAtMs,
    };
  };
  let spare = deps.spares.take();
  while (spare && !spare.alive) spare = deps.spares.take();
  const proc =
    spare ??
    deps.spawn(t.id, {
      ROOKERY_DATA: t.dir,
      ROOKERY_SOCKET: t.socketPath,
      ...leaseEnvironment(lease()),
    });
  t.process = proc;
  t.starts++;
  if (proc.pid !== undefined) deps.limiter.apply(t.id, proc.pid);
  proc.onActivity = (activity) => {
    if (t.process !== proc) return;
    t.inFlight = activity.inFlight;
    const last = activity.inFlight > 0 ? Date.now() : activity.lastRequestAt;
    t.lastActivityAt = Math.max(t.lastActivityAt ?? 0, last);
  };
  proc.onIndexBuild = deps.onIndexBuild;
  void proc.exited.then((exit) => deps.onExit(proc, exit));

  // One deadline for the spare's readiness and the tenant's.
  const deadline = new Deadline(deps.startTimeoutMs, () => {
    t.log.error({ pid: proc.pid, timeoutMs: deps.startTimeoutMs }, 'tenant not ready in time; killing it');
    proc.signal('SIGKILL');
    return new RookeryError(
      'TenantUnavailable',
      `Tenant ${t.id} did not start within ${deps.startTimeoutMs} ms`,
    );
  });
  try {
    if (spare) {
      await deadline.race(spare.spareReady);
      spare.assign(t.dir, t.socketPath, lease());
    }
    await deadline.race(proc.ready);
    // The lease given at start is the one measured then: as soon as the tenant listens, before the wake
    // answers, it gets the one measured now (renewed meanwhile, or lost).
    const source = deps.lease;
    if (source) proc.sendLease(readLease(() => source.remainingMs()));
    // A spare's indexer was forked before the spare joined the tenant's cgroup: it joins it now.
    if (proc.indexerPid !== undefined) deps.limiter.apply(t.id, proc.indexerPid);
  } catch (error) {
    if (error instanceof RookeryError) throw error;
    throw new RookeryError(
      'TenantUnavailable',
      `Tenant ${t.id} could not start: ${(error as Error).message}`,
    );
  } finally {
    deadline.clear();
    if (spare) deps.spares.refill(SPARE_REFILL_DELAY_MS);
  }
  if (t.stopRequested) {
    // Stopped while it was starting: the stop already signalled it; make sure it goes.
    await proc.terminate(deps.stopTimeoutMs);
    throw new RookeryError('TenantUnavailable', `Tenant ${t.id} was stopped while it started`);
  }
  return { proc, fromSpare: spare !== null };
}

/** What a freshly spawned tenant reads its placement epoch and lease from (tenant's config.ts). */
function leaseEnvironment(lease: TenantLease | null): Record<string, string> {
  if (lease === null) return {};
  return {
    ROOKERY_PLACEMENT_EPOCH: String(lease.placementEpoch),
    ROOKERY_LEASE_REMAINING_MS: String(lease.leaseRemainingMs),
    ROOKERY_LEASE_MEASURED_AT_MS: String(lease.leaseMeasuredAtMs),
  };
}
