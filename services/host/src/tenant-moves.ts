// Fleet mode: the door a tenant's requests come through on this host, closed while the tenant is moved
// to another host (mover.ts). A request that reaches the host for the tenant during a move is held until
// the move ends and then goes through the ownership check again, which answers 421 TenantNotHere naming
// the new owner (or, if the move did not happen, lets it in as before): it never meets a half-stopped
// tenant and never gets a 5xx for the move. Requests already inside (a wake checking ownership and
// starting the tenant) finish before the move stops the tenant, so no wake can restart the tenant here
// after the move stopped it on the strength of an ownership answer read before the move.

interface Inside {
  count: number;
  /** Resolved when the last admitted request leaves (a move waits for it). */
  empty: Promise<void> | null;
  leftEmpty: (() => void) | null;
}

export class TenantMoves {
  /** Moves under way, by tenant: resolved when the move ends, whatever its outcome. */
  private readonly moving = new Map<string, Promise<void>>();
  private readonly inside = new Map<string, Inside>();

  /** True while the tenant's door is closed for a move. */
  isMoving(tenantId: string): boolean {
    return this.moving.has(tenantId);
  }

  /**
   * Runs `open` (the ownership check and the wake) once no move of the tenant is under way; a request
   * arriving during a move waits for it to end first.
   */
  async admit<T>(tenantId: string, open: () => Promise<T>): Promise<T> {
    for (let move = this.moving.get(tenantId); move; move = this.moving.get(tenantId)) await move;
    let entry = this.inside.get(tenantId);
    if (!entry) {
      entry = { count: 0, empty: null, leftEmpty: null };
      this.inside.set(tenantId, entry);
    }
    entry.count++;
    try {
      return await open();
    } finally {
      entry.count--;
      if (entry.count === 0) {
        this.inside.delete(tenantId);
        entry.leftEmpty?.();
      }
    }
  }

  /**
   * Runs `work` (the move) with the tenant's door closed: requests already admitted finish first, new
   * ones wait until `work` has ended. One move of a tenant at a time; a second waits for the first.
   */
  async closedFor<T>(tenantId: string, work: () => Promise<T>): Promise<T> {
    for (let move = this.moving.get(tenantId); move; move = this.moving.get(tenantId)) await move;
    let reopen!: () => void;
    this.moving.set(
      tenantId,
      new Promise<void>((resolve) => {
        reopen = resolve;
      }),
    );
    try {
      await this.emptied(tenantId);
      return await work();
    } finally {
      this.moving.delete(tenantId);
      reopen();
    }
  }

  /** Resolves once no admitted request of the tenant is inside. */
  private emptied(tenantId: string): Promise<void> {
    const entry = this.inside.get(tenantId);
    if (!entry) return Promise.resolve();
    entry.empty ??= new Promise<void>((resolve) => {
      entry.leftEmpty = resolve;
    });
    return entry.empty;
  }
}
