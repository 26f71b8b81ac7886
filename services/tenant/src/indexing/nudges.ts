/**
 * When the tenant tells its indexer that a database changed.
 *
 * A word per commit cost the request thread a synchronous channel write per group commit and woke the
 * indexer for each (14–21 µs of the indexer's CPU per PUT under load: docs/benchmarks.md, "Where a PUT's
 * CPU goes"). The indexer reads every commit there is each time it looks, so one word covers every commit
 * until it has looked and found nothing more: it then says `idle` for the database (only for a database it
 * was nudged about). Per database:
 *
 * - no entry: the indexer is idle as far as we know — the next commit is announced at once (at the end of
 *   its event-loop turn, after that turn's answers are written);
 * - `sent`: a word is out and no `idle` has come back — a commit now only marks `again`;
 * - `again`: commits landed while the word was out. The indexer's `idle` may have been sent before it could
 *   see them, so it is answered with one more word (whose look finds them, or nothing).
 *
 * Under load one word and its `idle` cover a whole indexer batch of commits; a write after a quiet period
 * is announced as promptly as before. A word lost to a closing channel leaves `sent` behind: the indexer
 * that replaces the dead one looks at every database it is opened with, and `reset` forgets what was out.
 */
export class Nudges {
  private readonly out = new Map<string, 'sent' | 'again'>();
  /** Words written to the channel since start (what "one word per burst" is checked with). */
  sent = 0;
  private readonly settledWaiters = new Map<string, Array<() => void>>();

  /** `write` sends one word for `db` and says whether the channel took it. */
  constructor(private readonly write: (db: string) => boolean) {}

  /** A commit (or a query waiting for its index) in `db`. */
  nudge(db: string): void {
    const state = this.out.get(db);
    if (state === 'again') return;
    if (state === 'sent') {
      this.out.set(db, 'again');
      return;
    }
    this.out.set(db, 'sent');
    setImmediate(() => {
      // Forgotten (closed, or a new indexer) or answered meanwhile: nothing to send.
      if (this.out.get(db) === undefined) return;
      if (this.write(db)) this.sent++;
    });
  }

  /** The indexer looked at `db` after our word and found it caught up. */
  idle(db: string): void {
    const state = this.out.get(db);
    this.out.delete(db);
    if (state === 'again') this.nudge(db);
    else this.wake(db);
  }

  /** `db` is no longer indexed (closed): nothing is out for it. */
  forget(db: string): void {
    this.out.delete(db);
    this.wake(db);
  }

  /** A new indexer process: it looks at every database it is opened with, so nothing is out. */
  reset(): void {
    for (const db of [...this.out.keys()]) this.forget(db);
  }

  /** Resolves once no word is out for `db` (the indexer has caught up with what it was told of). */
  settled(db: string): Promise<void> {
    if (!this.out.has(db)) return Promise.resolve();
    return new Promise((resolve) => {
      const waiters = this.settledWaiters.get(db) ?? [];
      waiters.push(resolve);
      this.settledWaiters.set(db, waiters);
    });
  }

  private wake(db: string): void {
    const waiters = this.settledWaiters.get(db);
    this.settledWaiters.delete(db);
    for (const resolve of waiters ?? []) resolve();
  }
}
