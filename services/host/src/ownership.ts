// Fleet mode: does this host own the tenant? Exactly while the control store's placement names this host
// AND the host epoch this host's live lease has (packages/control-store README, "Two epochs"). Checked on
// every wake and stats request before a tenant is started or a byte of it read; a tenant placed elsewhere
// answers 421 TenantNotHere naming the owner the store names, so the caller can go there.
import { performance } from 'node:perf_hooks';
import type { FleetStore, Placement } from '@rookery/control-store';
import { RookeryError } from '@rookery/protocol';

/** Longest a "this tenant is mine" answer is reused without asking the store (see cacheMsFor). */
export const MAX_OWNERSHIP_CACHE_MS = 1_000;

/**
 * How long a positive answer is cached. Safe at any length shorter than the lease, because an entry is
 * used only while the lease it was read under is still live with the same epoch: nobody else can be
 * given the tenant meanwhile (the reaper waits for this lease's expiry plus a grace; a reclaim raises
 * the epoch the entry is bound to). The one change that does not wait for the lease is a planned move,
 * which stops the tenant here first (the stop forgets the entry); a wake racing it could start the old
 * copy for at most this long, and the mirror's epoch fencing refuses that copy's writes. So: a third of
 * the lease, at most a second. Negative answers are never cached: a tenant just moved here must start.
 */
export function cacheMsFor(ttlMs: number): number {
  return Math.min(MAX_OWNERSHIP_CACHE_MS, Math.floor(ttlMs / 3));
}

export interface OwnershipOptions {
  store: Pick<FleetStore, 'getPlacement'>;
  /** The lease this host holds now: its epoch, or null when it holds none. */
  liveEpoch: () => number | null;
  hostId: string;
  cacheMs: number;
  now?: () => number;
}

interface Owned {
  placementEpoch: number;
  hostEpoch: number;
  /** this.now() after which the store is asked again. */
  until: number;
}

export class TenantOwnership {
  private readonly owned = new Map<string, Owned>();
  /** Store reads under way, by tenant: a burst of wakes of one tenant asks the store once. */
  private readonly lookups = new Map<string, { asked: number; placement: Promise<Placement | null> }>();
  private readonly now: () => number;

  constructor(private readonly options: OwnershipOptions) {
    this.now = options.now ?? (() => performance.now());
  }

  /**
   * The tenant's placement epoch when this host owns it; else 421 TenantNotHere (the owner and epoch as
   * the store says), or 503 LeaseExpired while this host holds no live lease.
   */
  async confirm(tenantId: string): Promise<number> {
    const live = this.options.liveEpoch();
    if (live === null) {
      throw new RookeryError(
        'LeaseExpired',
        `Host ${this.options.hostId} holds no live lease on the control store right now, so it serves no tenant; retry in a moment (it re-acquires its lease on its own), or ask the tenant's owner`,
        { retryAfterSeconds: 1 },
      );
    }
    const cached = this.owned.get(tenantId);
    if (cached && cached.hostEpoch === live && cached.until > this.now()) return cached.placementEpoch;
    const { asked, placement: reading } = this.lookup(tenantId);
    const placement = await reading;
    if (placement && placement.hostId === this.options.hostId && placement.hostEpoch === live) {
      this.owned.set(tenantId, {
        placementEpoch: placement.epoch,
        hostEpoch: live,
        until: asked + this.options.cacheMs,
      });
      return placement.epoch;
    }
    this.owned.delete(tenantId);
    const where = !placement
      ? 'is not placed on any host yet'
      : placement.hostId === this.options.hostId
        ? `is placed on this host under its older lease (host epoch ${placement.hostEpoch}, now ${live}) and has not been reclaimed`
        : `is placed on host ${placement.hostId}${placement.address ? ` (${placement.address})` : ''}`;
    throw new RookeryError(
      'TenantNotHere',
      `Tenant ${tenantId} ${where}, not on host ${this.options.hostId}: refresh its placement and ask its owner`,
      {
        tenantId,
        owner: placement ? { hostId: placement.hostId, address: placement.address } : null,
        epoch: placement ? placement.epoch : null,
      },
    );
  }

  private lookup(tenantId: string): { asked: number; placement: Promise<Placement | null> } {
    let lookup = this.lookups.get(tenantId);
    if (!lookup) {
      // The entry's life counts from before the question: never longer than cacheMs after the store's answer.
      const placement = this.options.store
        .getPlacement(tenantId)
        .finally(() => this.lookups.delete(tenantId));
      lookup = { asked: this.now(), placement };
      this.lookups.set(tenantId, lookup);
    }
    return lookup;
  }

  /** The placement epoch this host last confirmed for the tenant (for its launches), if any. */
  placementEpochOf(tenantId: string): number | undefined {
    return this.owned.get(tenantId)?.placementEpoch;
  }

  /** The placement epoch this host confirmed for the tenant while its lease had epoch `hostEpoch`, if any. */
  confirmedUnder(tenantId: string, hostEpoch: number): number | undefined {
    const owned = this.owned.get(tenantId);
    return owned?.hostEpoch === hostEpoch ? owned.placementEpoch : undefined;
  }

  /** The tenant was stopped here (a planned move stops it first): the next wake asks the store. */
  forget(tenantId: string): void {
    this.owned.delete(tenantId);
  }
}
