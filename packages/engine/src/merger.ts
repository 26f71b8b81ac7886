import { RookeryError } from '@rookery/protocol';

/** The transaction the merger drives: one SQLite transaction with a savepoint per unit of work. */
export interface MergeableTransaction {
  begin(): void;
  savepoint(): void;
  release(): void;
  rollbackToSavepoint(): void;
  commit(): void;
  rollback(): void;
}

export interface MergerOptions {
  /** When false every unit of work gets its own transaction and commit (the baseline the benchmark compares with). */
  merge: boolean;
  /** Upper bound on the units (documents) one transaction takes, so one commit stays bounded in time and memory. */
  maxUnitsPerTransaction: number;
  /**
   * Whether this process may still write and acknowledge (a lease, a mirror not fenced): an error
   * means no. Asked before each transaction begins — the units fail with it and nothing is written
   * — and again right before they are answered, after the commit and after the mirror confirmed it,
   * so nothing is acknowledged once the answer turned to no, even if it turned during the fsync.
   */
  fence?: () => Error | null;
}

interface Work<Tx> {
  run: (tx: Tx) => unknown;
  units: number;
  resolve: (value: unknown) => void;
  reject: (error: unknown) => void;
}

export interface MergerStats {
  transactions: number;
  units: number;
  queued: number;
}

/**
 * The transaction merger: the database's single writer.
 *
 * Callers enqueue units of work (a batch of commands, a bulk-insert chunk, a
 * HiLo allocation). Once per event-loop turn the merger takes everything queued,
 * runs it in one SQLite transaction with a savepoint per unit, commits once
 * (one fsync for all of them), and only then settles every caller. A unit that
 * throws is rolled back to its savepoint and fails alone; its neighbours commit.
 * Durable writes have a near-fixed cost each, so this is what makes writes fast.
 */
export class TransactionMerger<Tx extends MergeableTransaction> {
  private queue: Work<Tx>[] = [];
  private scheduled = false;
  private closed = false;
  private idleWaiters: Array<() => void> = [];
  private readonly counters = { transactions: 0, units: 0 };

  /**
   * `afterCommit` runs right after each commit. When it returns a promise (a database mirrored
   * synchronously: the commit must reach the mirror first), the units that succeeded are answered
   * once it resolves, or fail with its error; the merger meanwhile goes on with the next transaction.
   */
  constructor(
    private readonly openTransaction: () => Tx,
    private readonly afterCommit: (tx: Tx) => Promise<void> | undefined,
    private readonly options: MergerOptions,
  ) {}

  enqueue<T>(run: (tx: Tx) => T, units = 1): Promise<T> {
    if (this.closed) {
      return Promise.reject(
        new RookeryError('DatabaseUnavailable', 'The database is closing; retry in a moment'),
      );
    }
    return new Promise<T>((resolve, reject) => {
      this.queue.push({ run, units, resolve: resolve as (value: unknown) => void, reject });
      this.schedule();
    });
  }

  stats(): MergerStats {
    return { ...this.counters, queued: this.queue.length };
  }

  /** Stops taking work and resolves once everything already queued has been committed. */
  async close(): Promise<void> {
    this.closed = true;
    if (this.queue.length === 0 && !this.scheduled) return;
    await new Promise<void>((resolve) => this.idleWaiters.push(resolve));
  }

  private schedule(): void {
    if (this.scheduled) return;
    this.scheduled = true;
    // setImmediate runs after the poll phase, so every request whose bytes
    // already arrived this turn has been parsed and queued: they share a commit.
    setImmediate(() => this.flush());
  }

  private take(): Work<Tx>[] {
    if (!this.options.merge) return this.queue.splice(0, 1);
    let units = 0;
    let count = 0;
    while (count < this.queue.length) {
      units += this.queue[count]!.units;
      count++;
      if (units >= this.options.maxUnitsPerTransaction) break;
    }
    return this.queue.splice(0, count);
  }

  private flush(): void {
    this.scheduled = false;
    const work = this.take();
    if (work.length > 0) this.runTransaction(work);
    if (this.queue.length > 0) {
      this.schedule();
    } else {
      for (const wake of this.idleWaiters.splice(0)) wake();
    }
  }

  private runTransaction(work: Work<Tx>[]): void {
    const outcomes: Array<{ ok: true; value: unknown } | { ok: false; error: unknown }> = [];
    const refused = this.options.fence?.();
    if (refused) {
      for (const item of work) item.reject(refused);
      return;
    }
    let tx: Tx;
    try {
      tx = this.openTransaction();
      tx.begin();
    } catch (error) {
      for (const item of work) item.reject(commitFailure(error));
      return;
    }
    for (const item of work) {
      try {
        tx.savepoint();
        const value = item.run(tx);
        tx.release();
        outcomes.push({ ok: true, value });
      } catch (error) {
        try {
          tx.rollbackToSavepoint();
        } catch (rollbackError) {
          // The connection is in an unknown state: abandon the whole transaction.
          safely(() => tx.rollback());
          for (const w of work) w.reject(commitFailure(rollbackError));
          return;
        }
        outcomes.push({ ok: false, error });
      }
    }
    try {
      tx.commit();
    } catch (error) {
      safely(() => tx.rollback());
      for (const item of work) item.reject(commitFailure(error));
      return;
    }
    this.counters.transactions++;
    for (const item of work) this.counters.units += item.units;
    let confirmed: Promise<void> | undefined;
    try {
      confirmed = this.afterCommit(tx);
    } catch {
      // Listeners' failures never change the outcome of a committed transaction.
    }
    const settle = (failure: { error: unknown } | null) => {
      // Committed (and mirrored, in sync mode), but not ours to acknowledge any more.
      const fenced = failure ? null : this.options.fence?.();
      if (fenced) failure = { error: fenced };
      for (let i = 0; i < work.length; i++) {
        const outcome = outcomes[i]!;
        if (!outcome.ok) work[i]!.reject(outcome.error);
        else if (failure) work[i]!.reject(failure.error);
        else work[i]!.resolve(outcome.value);
      }
    };
    if (confirmed === undefined) settle(null);
    else
      confirmed.then(
        () => settle(null),
        (error: unknown) => settle({ error }),
      );
  }
}

function safely(fn: () => void): void {
  try {
    fn();
  } catch {
    // Best effort: the caller has already decided the outcome.
  }
}

function commitFailure(error: unknown): RookeryError {
  const reason = error instanceof Error ? error.message : String(error);
  return new RookeryError(
    'DatabaseUnavailable',
    `The transaction could not be committed (${reason}); nothing in it was written. Retry the request.`,
  );
}
