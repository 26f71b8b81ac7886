// The host's lease on the control store, in fleet mode (docs/scale-out.md, "Host leases"): acquired at
// start, renewed every TTL/3, and a deadline this host keeps on its own monotonic clock. The deadline is
// what the tenants are told (tenant-env and the `lease` IPC message): past it they acknowledge no write,
// whatever the store or the network does. After a lapse the keeper acquires a new lease (a new epoch) and
// takes its tenants back with reclaimPlacements; a tenant the reaper moved meanwhile is no longer its own.
import { EventEmitter } from 'node:events';
import { performance } from 'node:perf_hooks';
import type { FleetStore } from '@rookery/control-store';
import { RookeryError } from '@rookery/protocol';
import type { Logger } from 'pino';

/** What the keeper needs of the control store. */
export type LeaseStore = Pick<FleetStore, 'acquireLease' | 'renewLease' | 'reclaimPlacements'>;

/** Timers, injectable so that tests move time themselves instead of sleeping. */
export interface LeaseTimers {
  setTimeout(callback: () => void, ms: number): unknown;
  clearTimeout(handle: unknown): void;
}

const realTimers: LeaseTimers = {
  setTimeout: (callback, ms) => {
    const timer = setTimeout(callback, ms);
    timer.unref(); // the keeper never holds the process open: the host's server does
    return timer;
  },
  clearTimeout: (handle) => clearTimeout(handle as NodeJS.Timeout),
};

export interface LeaseKeeperOptions {
  store: LeaseStore;
  hostId: string;
  /** The URL gateways reach this host at. */
  address: string;
  capacity: number;
  ttlMs: number;
  logger: Logger;
  /** This process's monotonic clock in ms (default performance.now(): never jumps with the wall clock). */
  now?: () => number;
  timers?: LeaseTimers;
}

export interface LeaseKeeperEvents {
  /**
   * The lease was renewed, or acquired anew (`acquired`: a new epoch, and `reclaimed` the placements taken
   * back under it, each with its new placement epoch — one more than the one it had; empty on a renewal).
   */
  renewed: [
    lease: {
      epoch: number;
      remainingMs: number;
      acquired: boolean;
      reclaimed: { tenantId: string; epoch: number }[];
    },
  ];
  /** The deadline passed (or the store said the lease is gone) without a renewal: no writes may be acknowledged. */
  lapsed: [lease: { epoch: number }];
  /** Another registration of this host id holds the lease: this process must stop serving; the keeper stops. */
  superseded: [lease: { epoch: number }];
}

type Phase = 'idle' | 'holding' | 'lapsed' | 'superseded' | 'stopped';

export class LeaseKeeper extends EventEmitter<LeaseKeeperEvents> {
  private readonly now: () => number;
  private readonly timers: LeaseTimers;
  private readonly ttlMs: number;
  private readonly renewEveryMs: number;
  /** Between failed attempts: often enough to renew well before the deadline, rarely enough not to hammer a sick store. */
  private readonly retryMs: number;
  private phase: Phase = 'idle';
  private epoch = 0;
  /** this.now() past which the lease is not ours; null before the first lease. */
  private deadline: number | null = null;
  /** A lease was acquired but its tenants not reclaimed yet (the reclaim failed): retried before anything else. */
  private reclaimDue = false;
  private nextTimer: unknown = null;
  private lapseTimer: unknown = null;
  private inFlight: Promise<void> | null = null;

  constructor(private readonly options: LeaseKeeperOptions) {
    super();
    this.now = options.now ?? (() => performance.now());
    this.timers = options.timers ?? realTimers;
    this.ttlMs = options.ttlMs;
    this.renewEveryMs = Math.max(1, Math.floor(options.ttlMs / 3));
    this.retryMs = Math.max(10, Math.floor(options.ttlMs / 10));
  }

  /**
   * Acquires the lease (a new epoch), reclaims this host's placements and starts renewing. Fails with the
   * store's error when the store cannot be reached: a host that cannot hold a lease must not serve.
   */
  async start(): Promise<{ epoch: number; remainingMs: number }> {
    if (this.phase !== 'idle') throw new Error('the lease keeper was started already');
    await this.acquire();
    this.phase = 'holding';
    this.schedule(this.renewEveryMs);
    return { epoch: this.epoch, remainingMs: this.remainingMs() };
  }

  /** Stops renewing. The deadline stays as it is, so the tenants lapse at it on their own. */
  stop(): void {
    this.phase = 'stopped';
    this.clearTimers();
  }

  /** Milliseconds the lease has left on this host's clock (0 once lapsed, superseded or before the first). */
  remainingMs(): number {
    if (this.deadline === null || this.phase === 'superseded') return 0;
    return Math.max(0, this.deadline - this.now());
  }

  /** The epoch of the lease this host holds now, or null when it holds none (lapsed, superseded, not started). */
  liveEpoch(): number | null {
    return this.remainingMs() > 0 ? this.epoch : null;
  }

  /** Resolves once no store call is under way (tests: after moving their clock). */
  async settled(): Promise<void> {
    while (this.inFlight) await this.inFlight;
  }

  private schedule(delayMs: number): void {
    if (this.phase === 'stopped' || this.phase === 'superseded') return;
    if (this.nextTimer !== null) this.timers.clearTimeout(this.nextTimer);
    this.nextTimer = this.timers.setTimeout(
      () => {
        this.nextTimer = null;
        this.inFlight = this.step().finally(() => {
          this.inFlight = null;
        });
      },
      Math.max(0, delayMs),
    );
  }

  /** One attempt: renew while the lease may still be ours, acquire a new one once it lapsed. */
  private async step(): Promise<void> {
    this.checkLapse();
    try {
      if (this.phase === 'lapsed' || this.reclaimDue) await this.acquire();
      else await this.renew();
    } catch (error) {
      if (this.phase === 'stopped') return;
      this.onFailure(error);
      return;
    }
    if (this.phase === 'stopped') return;
    this.phase = 'holding';
    this.schedule(this.renewEveryMs);
  }

  private async renew(): Promise<void> {
    const sent = this.now();
    const lease = await this.call(() =>
      this.options.store.renewLease(this.options.hostId, this.epoch, this.ttlMs),
    );
    if (this.phase === 'stopped') return;
    this.epoch = lease.epoch;
    // The host's clock, from BEFORE the request left: never later than the store's expiresAt.
    this.deadline = sent + this.ttlMs;
    this.armLapse();
    this.emit('renewed', {
      epoch: this.epoch,
      remainingMs: this.remainingMs(),
      acquired: false,
      reclaimed: [],
    });
  }

  /** A new lease (a new epoch), then this host's tenants back under it. */
  private async acquire(): Promise<void> {
    const { store, hostId, address, capacity } = this.options;
    if (!this.reclaimDue) {
      const sent = this.now();
      const lease = await this.call(() => store.acquireLease(hostId, address, capacity, this.ttlMs));
      if (this.phase === 'stopped') return;
      this.epoch = lease.epoch;
      this.deadline = sent + this.ttlMs; // as for a renewal: from before the request left
      this.reclaimDue = true;
      this.armLapse();
    }
    const reclaimed = await this.call(() => store.reclaimPlacements(hostId, this.epoch));
    this.reclaimDue = false;
    this.options.logger.info(
      { epoch: this.epoch, reclaimed: reclaimed.map((p) => p.tenantId) },
      'acquired the host lease and reclaimed its tenants',
    );
    if (this.phase === 'stopped') return;
    this.emit('renewed', {
      epoch: this.epoch,
      remainingMs: this.remainingMs(),
      acquired: true,
      reclaimed: reclaimed.map((p) => ({ tenantId: p.tenantId, epoch: p.epoch })),
    });
  }

  private onFailure(error: unknown): void {
    const code = error instanceof RookeryError ? error.code : null;
    if (code === 'LeaseSuperseded') {
      this.options.logger.error(
        { epoch: this.epoch },
        'another process registered this host id (ROOKERY_HOST_ID): this one holds no lease and serves no tenant',
      );
      this.phase = 'superseded';
      this.clearTimers();
      this.emit('superseded', { epoch: this.epoch });
      return;
    }
    // A lease the store says is gone while this host held it is re-acquired at once; any other failure
    // (the store unreachable, or a new lease gone again before its reclaim) waits a retry interval.
    const retryAtOnce = code === 'LeaseExpired' && this.phase === 'holding';
    if (code === 'LeaseExpired' || code === 'HostNotFound') {
      // The store (the authority) says the lease is gone, whatever this host's clock says; a reclaim that
      // failed so needs a new lease first.
      this.reclaimDue = false;
      this.deadline = this.now();
      this.checkLapse();
    }
    this.options.logger.warn(
      { err: error, epoch: this.epoch, remainingMs: Math.round(this.remainingMs()) },
      this.phase === 'lapsed'
        ? 'could not acquire a host lease; trying again'
        : 'could not renew the host lease; trying again until it lapses',
    );
    this.schedule(retryAtOnce ? 0 : this.retryMs);
  }

  /** A store call that does not answer within a renewal period counts as failed: the next attempt is not held up. */
  private call<T>(operation: () => Promise<T>): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      const timer = this.timers.setTimeout(
        () =>
          reject(
            new RookeryError(
              'InternalError',
              `The control store did not answer within ${this.renewEveryMs} ms (a third of ROOKERY_LEASE_TTL_MS)`,
            ),
          ),
        this.renewEveryMs,
      );
      operation().then(
        (value) => {
          this.timers.clearTimeout(timer);
          resolve(value);
        },
        (error: unknown) => {
          this.timers.clearTimeout(timer);
          reject(error);
        },
      );
    });
  }

  /** A timer at the deadline: the lapse is noticed when it happens, even while a store call hangs. */
  private armLapse(): void {
    if (this.lapseTimer !== null) this.timers.clearTimeout(this.lapseTimer);
    if (this.deadline === null) return;
    this.lapseTimer = this.timers.setTimeout(
      () => {
        this.lapseTimer = null;
        this.checkLapse();
        // Timers and the monotonic clock may disagree by a fraction of a millisecond.
        if (this.phase === 'holding') this.armLapse();
      },
      Math.max(0, this.deadline - this.now()),
    );
  }

  private checkLapse(): void {
    if (this.phase !== 'holding' || this.remainingMs() > 0) return;
    this.phase = 'lapsed';
    this.options.logger.error(
      { epoch: this.epoch },
      'the host lease lapsed: its tenants acknowledge no writes until a new lease is acquired',
    );
    this.emit('lapsed', { epoch: this.epoch });
  }

  private clearTimers(): void {
    if (this.nextTimer !== null) this.timers.clearTimeout(this.nextTimer);
    if (this.lapseTimer !== null) this.timers.clearTimeout(this.lapseTimer);
    this.nextTimer = null;
    this.lapseTimer = null;
  }
}
