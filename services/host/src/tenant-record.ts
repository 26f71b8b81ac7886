// What the supervisor knows of one tenant: its state, its process, the start or stop in progress (the
// tenant's own lock: every wake awaits the same start), activity for the idle stop, crash history. One
// record per tenant id, kept while the host runs (or until the tenant is purged).
import type { HostTenantInfo, HostTenantState } from '@rookery/protocol';
import type { Logger } from 'pino';
import type { TenantProcess } from './tenant-process.js';

export interface TenantRecord {
  readonly id: string;
  readonly dir: string;
  readonly socketPath: string;
  readonly log: Logger;
  state: HostTenantState;
  process: TenantProcess | null;
  /**
   * Fleet mode: the placement epoch the process serves under — the one it was launched with, raised when
   * a reclaim proved nobody else owned the tenant meanwhile (supervisor.stopDisowned). Null on one machine.
   */
  servingEpoch: number | null;
  /** The start in progress (or waiting out a restart backoff): every wake of this tenant awaits this one. */
  starting: Promise<number> | null;
  stopping: Promise<void> | null;
  /** Cancels a restart that is waiting out its backoff. */
  cancelRestart: (() => void) | null;
  stopRequested: boolean;
  lastActivityAt: number | null;
  inFlight: number;
  readySince: number | null;
  starts: number;
  crashes: number;
  /** Times of crashes and failed starts within the last minute. */
  failures: number[];
  suspendedUntil: number;
}

export function newTenantRecord(id: string, dir: string, socketPath: string, log: Logger): TenantRecord {
  return {
    id,
    dir,
    socketPath,
    log,
    state: 'stopped',
    process: null,
    servingEpoch: null,
    starting: null,
    stopping: null,
    cancelRestart: null,
    stopRequested: false,
    lastActivityAt: null,
    inFlight: 0,
    readySince: null,
    starts: 0,
    crashes: 0,
    failures: [],
    suspendedUntil: 0,
  };
}

/** The tenant as the host's API lists it. */
export function infoOf(t: TenantRecord, now: number): HostTenantInfo {
  return {
    tenantId: t.id,
    state: t.state,
    pid: t.process?.pid ?? null,
    socketPath: t.socketPath,
    readySince: t.readySince,
    lastActivityAt: t.lastActivityAt,
    inFlight: t.inFlight,
    starts: t.starts,
    crashes: t.crashes,
    suspendedUntil: t.suspendedUntil > now ? t.suspendedUntil : null,
  };
}

/** A tenant this host has no record of (never woken since it started, or purged). */
export function stoppedInfo(id: string, socketPath: string): HostTenantInfo {
  return {
    tenantId: id,
    state: 'stopped',
    pid: null,
    socketPath,
    readySince: null,
    lastActivityAt: null,
    inFlight: 0,
    starts: 0,
    crashes: 0,
    suspendedUntil: null,
  };
}
