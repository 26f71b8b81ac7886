import fs from 'node:fs/promises';
import { RookeryError } from '@rookery/protocol';

export interface WalSyncStats {
  /** fdatasyncs of the WAL completed. */
  syncs: number;
  /** Commits that waited for one of them (a sync covers every commit made before it began). */
  commits: number;
}

/**
 * Durable commits without stopping the writer: pipelined group commit.
 *
 * SQLite's `synchronous=FULL` fsyncs the WAL inside every commit, and better-sqlite3 runs the
 * commit on the event loop: for the whole fsync (6 ms at the median on this machine's disk, 14 ms
 * at p90) no request is parsed, no answer is sent and no next transaction is built. So docs.db
 * commits with `synchronous=NORMAL` (the WAL frames are written to the OS, not flushed; SQLite
 * still syncs around checkpoints, so a checkpoint never copies unflushed frames into the file), and
 * this flushes the WAL on libuv's thread pool, while the writer goes on with the next transaction.
 * A commit is acknowledged once an fdatasync that began after it returned: every frame written
 * before that call is on disk, so an acknowledged write survives power loss as with FULL. Commits
 * made while a flush runs share the next one, so under load there is at most one flush in flight
 * and one waiting, however many commits there are.
 *
 * A failed flush is sticky (`failure`): after it, what the file holds is unknown (the kernel may
 * have dropped the dirty pages), so nothing is acknowledged any more until the database is opened
 * again, and the merger's fence refuses new transactions.
 */
export class WalSync {
  private handle: fs.FileHandle | null = null;
  private flushing: Promise<void> | null = null;
  private waiting: Array<{ resolve: () => void; reject: (error: Error) => void }> = [];
  private failed: RookeryError | null = null;
  private readonly counters: WalSyncStats = { syncs: 0, commits: 0 };

  constructor(private readonly walFile: string) {}

  /** Set once a flush failed: the reason every later acknowledgment is refused. */
  get failure(): RookeryError | null {
    return this.failed;
  }

  stats(): WalSyncStats {
    return { ...this.counters };
  }

  /** Call right after a commit: resolves once everything committed so far is on disk. */
  durable(): Promise<void> {
    if (this.failed) return Promise.reject(this.failed);
    this.counters.commits++;
    return new Promise<void>((resolve, reject) => {
      this.waiting.push({ resolve, reject });
      if (this.flushing === null) this.flushing = this.flushAll();
    });
  }

  /** Waits for the flushes under way, then lets go of the file. */
  async close(): Promise<void> {
    await this.flushing;
    await this.handle?.close();
    this.handle = null;
  }

  /** Flushes until nobody waits: each round answers the commits made before it began. */
  private async flushAll(): Promise<void> {
    while (this.waiting.length > 0) {
      const round = this.waiting;
      this.waiting = [];
      try {
        await this.flush();
        this.counters.syncs++;
        for (const waiter of round) waiter.resolve();
      } catch (error) {
        this.failed = new RookeryError(
          'DatabaseUnavailable',
          `docs.db's write-ahead log could not be flushed to disk (${error instanceof Error ? error.message : String(error)}); ` +
            'the last writes may not be durable and none is acknowledged until the database is opened again — retry after it restarted',
        );
        for (const waiter of [...round, ...this.waiting.splice(0)]) waiter.reject(this.failed);
      }
    }
    this.flushing = null;
  }

  private async flush(): Promise<void> {
    // One trip to the thread pool per flush: SQLite keeps the same WAL file while a connection is
    // open (it deletes it only when the last one closes, and truncates it in place), and the
    // writer's connection outlives this handle (Database.close closes this first).
    this.handle ??= await fs.open(this.walFile, 'r+');
    await this.handle.datasync();
  }
}
