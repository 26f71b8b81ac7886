import { RookeryError } from '@rookery/protocol';

/**
 * The memory one tenant's JavaScript indexes may hold in sandboxes, shared by
 * every database of the tenant (one per indexer process).
 *
 * Isolates live outside the Node heap, so `--max-old-space-size` does not
 * bound them, and a host without cgroup v2 does not either: without this, 12
 * JavaScript indexes took an indexer from 92 MB to 777 MB. Each JavaScript
 * index reserves its sandboxes' heap limit when it is defined (or loaded),
 * one for the map and one more for a reduce, and gives it back when deleted,
 * replaced or closed. The reservation is the most its isolates can hold (an
 * isolate that goes over its limit is disposed), so the sum is a real bound.
 */
export class SandboxBudget {
  #usedMb = 0;

  constructor(readonly totalMb: number) {
    if (!Number.isFinite(totalMb) || totalMb < 0) {
      throw new RangeError(`SandboxBudget: totalMb must be a number >= 0 (got ${totalMb})`);
    }
  }

  get usedMb(): number {
    return this.#usedMb;
  }

  /**
   * Throws a 409 naming the budget unless `mb` more fit for index `name`,
   * counting `replacingMb` (what the index it replaces holds) as free.
   */
  check(name: string, mb: number, replacingMb = 0): void {
    if (mb === 0) return;
    const free = this.totalMb - (this.#usedMb - replacingMb);
    if (mb > free) {
      throw new RookeryError(
        'IndexSandboxBudgetExceeded',
        `Index ${name} needs ${mb} MB of JavaScript sandbox memory, but this tenant's JavaScript indexes ` +
          `already hold ${this.#usedMb - replacingMb} MB of its ${this.totalMb} MB sandbox budget. ` +
          'Delete a JavaScript index, or use a declarative index (no sandbox), or ask the operator to raise ' +
          'ROOKERY_INDEX_SANDBOX_BUDGET_MB.',
        { limitMb: this.totalMb, usedMb: this.#usedMb - replacingMb, neededMb: mb },
      );
    }
  }

  /**
   * Takes `mb` (after `check`, or unchecked for an index already on disk: one
   * defined before the budget was lowered keeps working; only new definitions
   * are refused).
   */
  hold(mb: number): void {
    this.#usedMb += mb;
  }

  /** Gives back what `hold` took. */
  release(mb: number): void {
    this.#usedMb = Math.max(0, this.#usedMb - mb);
  }
}
