// The fleet's half of the control store: hosts holding leases, tenants placed
// on them. One strongly consistent store (PostgreSQL at scale) decides who runs
// what; there is no other consensus. Read the package README's "Leases and
// placements" for the rules every caller relies on; fleet.ts implements them.

/** `active` hosts take new tenants; `draining` ones keep theirs while they are moved away; `retired` ones are out of the fleet. */
export type HostState = 'active' | 'draining' | 'retired';

/** A host's lease as the store granted or renewed it. */
export interface Lease {
  hostId: string;
  /** Raised by every acquireLease: the incarnation of the host that holds the lease. */
  epoch: number;
  /**
   * When the lease ends, on the DATABASE's clock (epoch ms). A host must not
   * compare this with its own clock: it keeps its deadline as its own
   * monotonic time when it SENT the request plus `ttlMs`, which is never later
   * than this (the database started the lease after the request left).
   */
  expiresAt: number;
  ttlMs: number;
}

export interface HostRecord {
  hostId: string;
  /** The URL gateways reach the host at. */
  address: string;
  /** The most tenants placed on it at once. */
  capacity: number;
  epoch: number;
  expiresAt: number;
  /** When the current epoch's lease was acquired (database clock). */
  acquiredAt: number;
  state: HostState;
  /** Tenants placed on it now. */
  placements: number;
  /** The lease had not expired when this was read (database clock). */
  live: boolean;
}

/** Which host runs a tenant, under which epochs. */
export interface Placement {
  tenantId: string;
  hostId: string;
  /** The tenant's own epoch: raised by every change of who may serve it (move, reclaim). Mirror generations carry it. */
  epoch: number;
  /** The host's lease epoch the placement belongs to: the host owns the tenant only while its lease has this epoch. */
  hostEpoch: number;
  /** The host's address, null when the host is not registered (a placement from before hosts were). */
  address: string | null;
  /** When the placement last changed (database clock). */
  updatedAt: number;
}

/** Why the reaper would re-place a tenant. */
export type ReplacementReason =
  /** Its host's lease expired more than the grace period ago. */
  | 'lease-expired'
  /** Its host re-acquired its lease (a new epoch) more than the grace period ago and never reclaimed it. */
  | 'stale-host-epoch'
  /** Its host is not registered at all. */
  | 'host-unknown';

export interface Replacement {
  tenantId: string;
  hostId: string;
  /** The placement epoch to pass to movePlacement (the compare-and-swap). */
  epoch: number;
  hostEpoch: number;
  reason: ReplacementReason;
}

export interface ReplacementDecision {
  /** The placements to move, by tenant id; empty when `withheld`. */
  replace: Replacement[];
  /** Why nothing is re-placed this time (for the caller's log), or null. */
  withheld: string | null;
  /** Hosts registered and not retired, and how many of them have an expired lease. */
  hosts: { counted: number; expired: number };
  /** The database's time the decision was made at. */
  now: number;
}

export interface FleetStore {
  /**
   * Registers the host or re-registers it, always raising its epoch (the first
   * registration gets 1): the previous incarnation, if it still runs, fails its
   * next renewLease with LeaseSuperseded. The host's state (drained, retired)
   * is kept: an operator's decision outlives restarts.
   */
  acquireLease(hostId: string, address: string, capacity: number, ttlMs: number): Promise<Lease>;
  /**
   * Extends the lease to ttlMs from now (database clock) while it is still the
   * host's (same epoch) and has not expired. Fails with LeaseExpired (acquire a
   * new lease: a new epoch) or LeaseSuperseded (another registration holds it:
   * stop serving), or HostNotFound.
   */
  renewLease(hostId: string, epoch: number, ttlMs: number): Promise<Lease>;
  getHost(hostId: string): Promise<HostRecord | null>;
  /** Ordered by host id. */
  listHosts(): Promise<HostRecord[]>;
  /** No new placements (placeTenant, movePlacement) go to a draining host; its tenants stay until moved. */
  drainHost(hostId: string): Promise<HostRecord>;
  /** Back to taking tenants (after a drain, e.g. once upgraded). */
  activateHost(hostId: string): Promise<HostRecord>;
  /** Out of the fleet (and of the reaper's count); only a drained host with no tenants left can be retired (HostNotEmpty). */
  retireHost(hostId: string): Promise<HostRecord>;

  /**
   * The tenant's placement; if it has none, places it on the least loaded
   * active host with a live lease and room (epoch 1). Two callers placing the
   * same tenant at once get the same single placement. NoHostAvailable when no
   * host can take it.
   */
  placeTenant(tenantId: string): Promise<Placement>;
  getPlacement(tenantId: string): Promise<Placement | null>;
  /** The placements on one host, by tenant id. */
  listPlacements(hostId: string): Promise<Placement[]>;
  /**
   * Compare-and-swap: moves the tenant to `toHostId` (active, live, with room)
   * only if its placement is still at `expectedEpoch`, and raises the epoch.
   * Of two concurrent moves from one epoch exactly one wins; the other fails
   * with PlacementConflict. TenantNotPlaced, HostNotFound, HostUnavailable.
   * Answers the placement as read right after the move.
   */
  movePlacement(tenantId: string, expectedEpoch: number, toHostId: string): Promise<Placement>;
  /**
   * The reaper's (and a drain's) move: movePlacement to the least loaded host that can take the tenant
   * (active, live lease, room), never its current one. Same compare-and-swap: PlacementConflict when the
   * placement is no longer at `expectedEpoch` (another reaper won: fine), NoHostAvailable when no other
   * host can take it, TenantNotPlaced.
   */
  relocatePlacement(tenantId: string, expectedEpoch: number): Promise<Placement>;
  /**
   * After a host re-acquired its lease (new epoch), takes back the tenants still
   * placed on it under an older host epoch, raising each one's placement epoch;
   * a tenant the reaper moved meanwhile is not among them. Fails with
   * LeaseExpired / LeaseSuperseded when `hostEpoch` is not its live lease.
   */
  reclaimPlacements(hostId: string, hostEpoch: number): Promise<Placement[]>;
  /**
   * The reaper's decision: placements whose host's lease expired more than
   * graceMs ago (or that are otherwise orphaned, see ReplacementReason) — and
   * none, `withheld` saying why, when more than half of the hosts registered
   * and not retired have expired leases at once: that is the store or the
   * network failing, not the hosts, and moving everything would make it worse.
   */
  tenantsToReplace(graceMs: number): Promise<ReplacementDecision>;
}
