const POLL_MS = 50;

interface Waiter {
  resolve(caughtUp: boolean): void;
  deadline: NodeJS.Timeout;
}

interface Watched {
  isCaughtUp: () => boolean;
  waiters: Set<Waiter>;
}

/**
 * Queries waiting for an index to catch up (`waitForNonStaleResults`), grouped by database and index: a
 * check asks each index once however many queries wait on it, and one poll timer serves them all, so a
 * crowd of waiting queries costs the tenant a timer and a promise each, not a poll and a query each.
 */
export class CatchUpWaits {
  private readonly watched = new Map<string, Watched>();
  private poll: NodeJS.Timeout | null = null;

  /**
   * Resolves true once `isCaughtUp` says so (checked on `check` and every POLL_MS), or with its last answer
   * after `timeoutMs`. Waits on the same `db` and `index` share one `isCaughtUp`.
   */
  wait(db: string, index: string, isCaughtUp: () => boolean, timeoutMs: number): Promise<boolean> {
    if (isCaughtUp()) return Promise.resolve(true);
    const key = `${db}\u0000${index.toLowerCase()}`;
    let watched = this.watched.get(key);
    if (!watched) {
      watched = { isCaughtUp, waiters: new Set() };
      this.watched.set(key, watched);
    }
    const group = watched;
    this.poll ??= setInterval(() => this.check(), POLL_MS);
    return new Promise((resolve) => {
      const waiter: Waiter = {
        resolve,
        deadline: setTimeout(() => {
          this.remove(key, group, waiter);
          resolve(answer(group));
        }, timeoutMs),
      };
      group.waiters.add(waiter);
    });
  }

  /** Resolves the waits (of `db` only, when given) whose index has caught up. */
  check(db?: string): void {
    for (const [key, group] of this.watched) {
      if (db !== undefined && !key.startsWith(`${db}\u0000`)) continue;
      if (!answer(group)) continue;
      for (const waiter of group.waiters) {
        this.remove(key, group, waiter);
        waiter.resolve(true);
      }
    }
  }

  private remove(key: string, group: Watched, waiter: Waiter): void {
    clearTimeout(waiter.deadline);
    group.waiters.delete(waiter);
    if (group.waiters.size > 0) return;
    if (this.watched.get(key) === group) this.watched.delete(key);
    if (this.watched.size === 0 && this.poll) {
      clearInterval(this.poll);
      this.poll = null;
    }
  }
}

/** Asked from timers: a database closed meanwhile (deleted) makes the check throw, which must not end the process. */
function answer(group: Watched): boolean {
  try {
    return group.isCaughtUp();
  } catch {
    return false;
  }
}
