// The reaper (docs/scale-out.md, "Failover"): re-places the tenants of hosts whose lease expired more than a
// grace period ago onto live hosts, so a dead host does not take its tenants with it. Every fleet-mode host
// runs one, and none is special: each move is a compare-and-swap on the placement's epoch
// (relocatePlacement), so of several reapers acting on one dead host's tenant exactly one moves it and the
// others lose their swap, which is the expected outcome, not an error. A host sweeps only while its own lease
// is live: one that lost touch with the control store, or was paused, has no business judging the others.
// The store's decision (tenantsToReplace) also withholds every move while more than half the hosts expired
// at once: that is the store or the network failing, not the hosts.
import { performance } from 'node:perf_hooks';
import type { FleetStore } from '@rookery/control-store';
import { RookeryError } from '@rookery/protocol';
import type { Logger } from 'pino';
import type { Counter } from 'prom-client';

export type ReaperStore = Pick<FleetStore, 'tenantsToReplace' | 'relocatePlacement'>;

export interface ReaperOptions {
  store: ReaperStore;
  /** The epoch of the lease this host holds now, or null: no sweep without a live lease. */
  liveEpoch: () => number | null;
  /** How long after a lease's expiry (database clock) its tenants are re-placed. */
  graceMs: number;
  /** Between sweeps. */
  intervalMs: number;
  /**
   * How long this host must have held its lease without a lapse before it judges others: the lease TTL
   * plus the grace. After the store was down longer than a TTL every lease lapsed; the hosts come back one
   * by one, and the first ones back would otherwise see the slower ones expired (one of three is not more
   * than half) and move their tenants away — a wave of re-placements out of an outage. Waiting a TTL and
   * the grace gives every live host the time to take a new lease and reclaim its tenants; a host that
   * stays dead is reaped that much later. 0 (tests of the decision alone): no wait.
   */
  settleMs?: number;
  /** A monotonic clock in ms (tests move it). */
  now?: () => number;
  logger: Logger;
  /** Counted by reason: `lease-expired`, `stale-host-epoch`, `host-unknown`. */
  moves: Counter<'reason'>;
  /** Moves that failed for another reason than a lost race (no host with room, the store unreachable). */
  failures: Counter;
}

/** What one sweep did (tests and the log). */
export interface SweepOutcome {
  moved: { tenantId: string; from: string; to: string; epoch: number }[];
  /** Another reaper moved them first (their compare-and-swap lost). */
  lost: string[];
  failed: string[];
  /** Why the store withheld every move, or why this host did not sweep; null when it swept. */
  skipped: string | null;
}

export class Reaper {
  private timer: NodeJS.Timeout | null = null;
  private sweeping: Promise<SweepOutcome> | null = null;
  /** The last reason moves were withheld, so a long outage is logged once, not every sweep. */
  private lastWithheld: string | null = null;
  /** The lease this host holds, and since when (this clock) without a lapse, as sweeps saw it. */
  private held: { epoch: number; since: number } | null = null;

  constructor(private readonly options: ReaperOptions) {}

  start(): void {
    if (this.timer) return;
    this.timer = setInterval(() => {
      if (this.sweeping) return; // a slow store: never two sweeps of this host at once
      this.sweeping = this.sweep()
        .catch((error: unknown): SweepOutcome => {
          this.options.failures.inc();
          this.options.logger.warn({ err: error }, 'reaper sweep failed; trying again at the next one');
          return { moved: [], lost: [], failed: [], skipped: 'sweep failed' };
        })
        .finally(() => {
          this.sweeping = null;
        });
    }, this.options.intervalMs);
    this.timer.unref(); // the host's server holds the process open, not the reaper
  }

  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.sweeping;
  }

  /** One pass: the store's decision, then one compare-and-swap move per tenant to re-place. */
  async sweep(): Promise<SweepOutcome> {
    const outcome: SweepOutcome = { moved: [], lost: [], failed: [], skipped: null };
    const epoch = this.options.liveEpoch();
    const now = (this.options.now ?? (() => performance.now()))();
    if (epoch === null) {
      this.held = null;
      outcome.skipped = 'this host holds no live lease';
      return outcome;
    }
    if (this.held?.epoch !== epoch) this.held = { epoch, since: now };
    if (now - this.held.since < (this.options.settleMs ?? 0)) {
      outcome.skipped = 'this host took its lease less than a lease TTL and the grace ago';
      return outcome;
    }
    const decision = await this.options.store.tenantsToReplace(this.options.graceMs);
    if (decision.withheld) {
      if (decision.withheld !== this.lastWithheld)
        this.options.logger.warn({ hosts: decision.hosts }, decision.withheld);
      this.lastWithheld = decision.withheld;
      outcome.skipped = decision.withheld;
      return outcome;
    }
    this.lastWithheld = null;
    for (const orphan of decision.replace) {
      // The lease may lapse during a long sweep: stop judging others then.
      if (this.options.liveEpoch() === null) {
        outcome.skipped = 'this host lost its lease during the sweep';
        break;
      }
      try {
        const placed = await this.options.store.relocatePlacement(orphan.tenantId, orphan.epoch);
        const move = {
          tenantId: orphan.tenantId,
          from: orphan.hostId,
          to: placed.hostId,
          epoch: placed.epoch,
        };
        outcome.moved.push(move);
        this.options.moves.inc({ reason: orphan.reason });
        this.options.logger.info(
          { tenant: move.tenantId, from: move.from, to: move.to, epoch: move.epoch, reason: orphan.reason },
          're-placed a tenant whose host lost its lease',
        );
      } catch (error) {
        if (error instanceof RookeryError && error.code === 'PlacementConflict') {
          outcome.lost.push(orphan.tenantId); // another reaper (or a reclaim) won: nothing to do
          continue;
        }
        outcome.failed.push(orphan.tenantId);
        this.options.failures.inc();
        this.options.logger.warn(
          { err: error, tenant: orphan.tenantId, from: orphan.hostId, reason: orphan.reason },
          'could not re-place a tenant whose host lost its lease; trying again at the next sweep',
        );
      }
    }
    return outcome;
  }
}
