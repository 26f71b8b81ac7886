import fs from 'node:fs';
import path from 'node:path';
import { type MirrorStats, RookeryError } from '@rookery/protocol';
import type { RecordedOps } from '../storage/change-recorder.js';
import { findContinuation } from './continuation.js';
import {
  clearDeleted,
  createGeneration,
  epochOfGeneration,
  generationDir,
  newestEpoch,
  newGenerationName,
  readLocalState,
  SEGMENTS_DIR,
  segmentFileName,
  syncDirectory,
  writeLocalState,
} from './layout.js';
import {
  type MirrorLogger,
  type MirrorOptions,
  MirrorOptionsSchema,
  type ResolvedMirrorOptions,
  silentLogger,
} from './options.js';
import { pruneMirror } from './prune.js';
import { encodeRecord } from './record.js';
import { type BackupTo, takeSnapshot } from './snapshot.js';

/** What the mirror needs from the database it ships. */
export interface MirrorSource {
  /** The local database directory (docs.db, and mirror.json naming the generation it continues). */
  localDirectory: string;
  /** The last committed transaction number when mirroring starts. */
  txid: number;
  /** The file was just migrated to a newer schema: its history cannot continue an older chain. */
  migrated: boolean;
  backupTo: BackupTo;
  /** The last committed transaction number now. */
  currentTxid(): number;
}

/** A transaction shipped to the mirror: how long it waited (for the lag percentiles of the benchmark). */
export type ShippedListener = (shipped: { txid: number; lagMs: number }[]) => void;

interface Queued {
  txid: number;
  data: Buffer;
  /** Date.now() when the commit handed it over. */
  queuedAt: number;
}

interface Waiter {
  done: () => boolean;
  /** What happens when `done` is not true in time (or at close): fail with this error, or (null) go ahead. */
  failure: () => RookeryError | null;
  resolve: () => void;
  reject: (error: unknown) => void;
  timer: NodeJS.Timeout;
}

interface OpenSegment {
  handle: fs.promises.FileHandle;
  bytes: number;
}

const RETRY_MIN_MS = 100;
const RETRY_MAX_MS = 5_000;
const SNAPSHOT_CHECK_MS = 1_000;
/** Lag entries kept one per transaction before runs of them are merged (see coarsen). */
const MAX_LAG_ENTRIES = 20_000;

/**
 * Ships one database's committed transactions to its mirror directory, in commit order, as records
 * appended to segment files (one write and one fdatasync for everything queued meanwhile), and takes
 * snapshots so a restore replays a bounded number of transactions.
 *
 * The record of a transaction is encoded at commit (its operations are only known then) and queued;
 * everything else happens off the commit path. `append` answers a sync-mode commit with a promise
 * that resolves once a restore would bring the transaction back; an async-mode commit only waits
 * when the lag has grown past `maxLagMs`.
 */
export class MirrorShipper {
  private readonly options: ResolvedMirrorOptions;
  private queue: Queued[] = [];
  private inFlight: Queued[] = [];
  private queuedBytes = 0;
  /**
   * Every transaction appended and not yet restorable from the mirror, oldest first, with when it
   * was appended: the lag is the age of the first. A transaction shipped into a generation whose
   * snapshot is not taken yet stays here until it is.
   */
  private unrestorable: { txid: number; queuedAt: number; bytes: number }[] = [];
  private unrestorableBytes = 0;
  private waiters: Waiter[] = [];
  private readonly shippedListeners = new Set<ShippedListener>();

  private state: MirrorStats['State'] = 'starting';
  private initialised = false;
  private generation: string | null = null;
  private segment: OpenSegment | null = null;
  private rollSegment = false;
  /** The generation cannot be continued (chain broken): the pump starts a new one. */
  private brokenChain = false;
  /** The last transaction durable in this generation's segments. */
  private shippedTxid = 0;
  /** The last transaction a restore brings back (0 while a new generation has no snapshot yet). */
  private mirroredTxid = 0;
  private snapshotReady = false;
  private lastSnapshot: { txid: number; takenAt: number } | null = null;
  private bytesSinceSnapshot = 0;
  private snapshotting: Promise<void> | null = null;
  private forceSnapshot = false;
  private nextSnapshotAttempt = 0;
  private lastError: string | null = null;
  /**
   * Set once a higher placement epoch is seen on the mirror: another owner took the database over.
   * From then on nothing is written to the mirror and every acknowledgment still waiting, and every
   * later write, fails with this error.
   */
  private fenced: RookeryError | null = null;

  /** Date.now() of the last snapshot, for the interval (`lastSnapshot.takenAt` follows the database's clock). */
  private lastSnapshotWallAt = Date.now();
  private closing = false;
  /** Set when close() stopped waiting: the pump must not touch the mirror (or recreate directories) afterwards. */
  private stopped = false;
  private wakePump: (() => void) | null = null;
  private readonly pumpDone: Promise<void>;
  private readonly snapshotTimer: NodeJS.Timeout;

  constructor(
    options: MirrorOptions,
    private readonly source: MirrorSource,
    private readonly log: MirrorLogger = silentLogger,
    /** The database's clock: snapshot and generation times, and the retention horizon, go by it. */
    private readonly clock: () => number = Date.now,
  ) {
    this.options = MirrorOptionsSchema.parse(options);
    this.shippedTxid = source.txid;
    this.pumpDone = this.pump();
    this.snapshotTimer = setInterval(() => {
      // An idle owner learns it was fenced too, so its next write is refused before it commits.
      if (this.initialised && !this.fenced && !this.closing) this.checkFenceQuietly();
      this.maybeSnapshot();
    }, SNAPSHOT_CHECK_MS);
    this.snapshotTimer.unref();
  }

  /** This database's directory on the mirror (the indexer copies index snapshots into it). */
  get directory(): string {
    return this.options.directory;
  }

  get mode(): 'async' | 'sync' {
    return this.options.mode;
  }

  /** Why this owner may not write any more (a newer epoch writes the mirror), or null. */
  fencedError(): RookeryError | null {
    return this.fenced;
  }

  /**
   * Queues a committed transaction. Returns a promise the acknowledgment must wait for (sync mode,
   * or async mode over its lag bound), or undefined when it may be acknowledged now.
   */
  append(txid: number, committedAt: number, schema: number, ops: RecordedOps): Promise<void> | undefined {
    if (this.fenced) return Promise.reject(this.fenced);
    let data: Buffer;
    try {
      data = encodeRecord(txid, committedAt, schema, ops);
    } catch (error) {
      // Never expected (every parameter is one SQLite took), but a transaction missing from the
      // chain must not go unnoticed: the chain is broken, and a new generation's snapshot covers it.
      this.log.error(
        { err: error, txid },
        'could not encode a transaction for the mirror; starting a new generation',
      );
      this.dropQueue();
      this.wakePump?.();
      return this.options.mode === 'sync'
        ? this.wait(
            () => this.mirroredTxid >= txid,
            () => this.unconfirmed(txid),
          )
        : undefined;
    }
    const queuedAt = this.now();
    this.queue.push({ txid, data, queuedAt });
    this.queuedBytes += data.length;
    this.unrestorable.push({ txid, queuedAt, bytes: data.length });
    this.unrestorableBytes += data.length;
    if (this.unrestorable.length > MAX_LAG_ENTRIES) this.unrestorable = coarsen(this.unrestorable);
    this.wakePump?.();
    if (this.options.mode === 'sync') {
      return this.wait(
        () => this.mirroredTxid >= txid,
        () => this.unconfirmed(txid),
      );
    }
    if (this.lagMs() > this.options.maxLagMs) {
      // Async mode never fails a write for the mirror: past the timeout it is acknowledged anyway.
      return this.wait(
        () => this.lagMs() <= this.options.maxLagMs,
        () => null,
      );
    }
    return undefined;
  }

  /** Resolves once every transaction committed so far is restorable from the mirror. */
  flushed(): Promise<void> {
    const txid = this.source.currentTxid();
    return this.wait(
      () => this.snapshotReady && this.mirroredTxid >= txid,
      () => this.unconfirmed(txid),
    );
  }

  /** Takes a snapshot now (after what is queued is on the mirror), e.g. before a planned maintenance. */
  async snapshotNow(): Promise<void> {
    await this.flushed();
    await this.snapshotting;
    this.forceSnapshot = true;
    this.nextSnapshotAttempt = 0;
    this.maybeSnapshot();
    await this.snapshotting;
  }

  onShipped(listener: ShippedListener): () => void {
    this.shippedListeners.add(listener);
    return () => this.shippedListeners.delete(listener);
  }

  stats(): MirrorStats {
    const txid = this.source.currentTxid();
    return {
      Mode: this.options.mode,
      State: this.state,
      Generation: this.generation,
      Txid: txid,
      MirroredTxid: this.mirroredTxid,
      LagMs: this.lagMs(),
      LagBytes: this.unrestorableBytes,
      LagTransactions: Math.max(0, txid - this.mirroredTxid),
      LastSnapshot: this.lastSnapshot
        ? { Txid: this.lastSnapshot.txid, At: new Date(this.lastSnapshot.takenAt).toISOString() }
        : null,
      LastError: this.lastError,
    };
  }

  /**
   * Ships what is queued, then stops. Gives up after `confirmTimeoutMs` when the mirror does not
   * take it (the next start notices the gap and begins a new generation).
   */
  async close(): Promise<void> {
    if (this.closing) return this.pumpDone;
    this.closing = true;
    clearInterval(this.snapshotTimer);
    this.wakePump?.();
    const gaveUp = await raceTimeout(
      Promise.all([this.pumpDone, this.snapshotting]),
      this.options.confirmTimeoutMs,
    );
    this.stopped = true;
    if (gaveUp) {
      this.log.error(
        { unshipped: this.queue.length + this.inFlight.length },
        'mirror did not take the last transactions before close; the next start takes a new snapshot',
      );
    }
    await this.segment?.handle.close().catch(() => {});
    this.segment = null;
    this.state = 'closed';
    this.settleWaiters(true);
  }

  // ---- the pump: one loop writes segments, in commit order ------------------------------------

  private async pump(): Promise<void> {
    let retryMs = RETRY_MIN_MS;
    let lastFlush = 0;
    for (;;) {
      if (this.stopped || this.fenced) return;
      try {
        if (!this.initialised || this.brokenChain) await this.startOrContinue();
        if (this.queue.length === 0) {
          if (this.closing) return;
          await new Promise<void>((resolve) => {
            this.wakePump = resolve;
          });
          this.wakePump = null;
          continue;
        }
        if (this.options.mode === 'async' && !this.closing) {
          const wait = lastFlush + this.options.flushIntervalMs - this.now();
          if (wait > 0) await sleep(wait);
        }
        lastFlush = this.now();
        this.inFlight = this.queue;
        this.queue = [];
        await this.write(this.inFlight);
        this.shipped(this.inFlight);
        this.inFlight = [];
        retryMs = RETRY_MIN_MS;
      } catch (error) {
        if (this.fenced) return; // never retried: what is queued is not ours to ship any more
        this.failed(error);
        if (this.closing) return;
        await sleep(retryMs, { unref: true });
        retryMs = Math.min(retryMs * 2, RETRY_MAX_MS);
      }
    }
  }

  private async write(batch: Queued[]): Promise<void> {
    // Checked before every write: once a newer owner's generation is visible, not one more byte goes
    // to the mirror. (Visible: a shared file system may show it late; acknowledgments do not rely on
    // this check but on the lease deadline, see docs/scale-out.md.)
    this.checkFence();
    if (!this.segment || this.rollSegment || this.segment.bytes >= this.options.segmentBytes) {
      await this.openSegment(batch[0]!.txid);
    }
    const segment = this.segment!;
    const buffers = batch.map((q) => q.data);
    const total = buffers.reduce((sum, b) => sum + b.length, 0);
    const { bytesWritten } = await segment.handle.writev(buffers);
    if (bytesWritten !== total)
      throw new Error(`short write to the mirror (${bytesWritten} of ${total} bytes)`);
    await segment.handle.datasync();
    segment.bytes += total;
  }

  /** Starts a segment at `firstTxid`. A file of that name holds nothing confirmed (see findContinuation), so it is replaced. */
  private async openSegment(firstTxid: number): Promise<void> {
    await this.segment?.handle.close().catch(() => {});
    this.segment = null;
    const directory = path.join(generationDir(this.options.directory, this.generation!), SEGMENTS_DIR);
    const handle = await fs.promises.open(path.join(directory, segmentFileName(firstTxid)), 'w');
    this.segment = { handle, bytes: 0 };
    this.rollSegment = false;
    syncDirectory(directory);
  }

  private shipped(batch: Queued[]): void {
    const last = batch[batch.length - 1]!;
    let bytes = 0;
    for (const q of batch) bytes += q.data.length;
    this.queuedBytes -= bytes;
    this.bytesSinceSnapshot += bytes;
    this.shippedTxid = last.txid;
    if (this.snapshotReady) this.restorableUpTo(last.txid);
    this.state = 'streaming';
    this.lastError = null;
    if (this.shippedListeners.size > 0) {
      const at = this.now();
      const shipped = batch.map((q) => ({ txid: q.txid, lagMs: at - q.queuedAt }));
      for (const listener of this.shippedListeners) listener(shipped);
    }
    this.settleWaiters(false);
    this.maybeSnapshot();
  }

  private failed(error: unknown): void {
    const message = error instanceof Error ? error.message : String(error);
    if (this.lastError !== message)
      this.log.error({ err: error, generation: this.generation }, 'mirror write failed; retrying');
    this.lastError = message;
    this.state = 'failing';
    // What was in flight goes again, into a new segment (the current one may end in a torn record).
    this.queue = [...this.inFlight, ...this.queue];
    this.inFlight = [];
    this.rollSegment = true;
    if (this.queuedBytes > this.options.maxQueueBytes) {
      // Holding more would risk the process's memory: drop it, and let a new snapshot cover it later.
      this.log.error(
        { queuedBytes: this.queuedBytes, generation: this.generation },
        'mirror unreachable for too long: dropping queued transactions; a new generation starts when it is back',
      );
      this.dropQueue();
    }
    this.settleWaiters(false);
  }

  /** Gives up on the transactions not yet shipped: the chain is broken, the next generation's snapshot holds them. */
  private dropQueue(): void {
    this.queue = [];
    this.queuedBytes = 0;
    this.brokenChain = true;
  }

  // ---- generations ------------------------------------------------------------------------------

  /** At start: continue the newest generation if the local file is exactly where it ends; else start one. */
  private async startOrContinue(): Promise<void> {
    this.checkFence();
    const epoch = this.options.epoch;
    let parent: { generation: string; txid: number } | null = null;
    if (!this.initialised && !this.brokenChain && !this.source.migrated) {
      const continuation = findContinuation(
        this.options.directory,
        this.source.localDirectory,
        this.source.txid,
      );
      // The local file is exactly where an older owner's generation ends (a new owner that just
      // restored it, or a planned move): branch off it in a generation of our own epoch, recording
      // where, so a restore before our first snapshot stops there and never takes what the older
      // owner may still append afterwards.
      const restored = readLocalState(this.source.localDirectory);
      if (continuation && epochOfGeneration(continuation.generation) < epoch)
        parent = { generation: continuation.generation, txid: continuation.txid };
      else if (
        // Restored from an older owner's generation, which that owner (paused, not yet fenced) has
        // appended to since: the chain no longer ends here, but the restore said where we took it.
        !continuation &&
        restored?.txid === this.source.txid &&
        epochOfGeneration(restored.generation) < epoch
      )
        parent = { generation: restored.generation, txid: restored.txid };
      else if (continuation) {
        this.initialised = true;
        this.generation = continuation.generation;
        this.shippedTxid = continuation.txid;
        this.mirroredTxid = continuation.txid;
        this.snapshotReady = true;
        this.lastSnapshot = continuation.snapshot;
        this.rollSegment = true;
        this.state = 'streaming';
        this.log.info(
          { generation: this.generation, txid: continuation.txid },
          'mirror continues its generation',
        );
        return;
      }
    }
    const generation = newGenerationName(this.clock(), epoch);
    createGeneration(this.options.directory, generation, parent);
    writeLocalState(this.source.localDirectory, { generation });
    this.initialised = true;
    this.brokenChain = false;
    this.generation = generation;
    this.shippedTxid = 0;
    // Until the new generation's first snapshot, a restore of this history brings back nothing.
    this.mirroredTxid = 0;
    this.snapshotReady = false;
    this.rollSegment = true;
    this.nextSnapshotAttempt = 0;
    this.log.info(
      { generation, epoch, txid: this.source.currentTxid(), parent },
      'mirror starts a new generation',
    );
    this.maybeSnapshot();
  }

  // ---- snapshots --------------------------------------------------------------------------------

  private maybeSnapshot(): void {
    if (this.snapshotting || this.closing || this.fenced || !this.generation || this.brokenChain) return;
    const now = this.now();
    if (now < this.nextSnapshotAttempt) return;
    const due =
      this.forceSnapshot ||
      !this.snapshotReady ||
      this.bytesSinceSnapshot >= this.options.snapshotEveryBytes ||
      (this.bytesSinceSnapshot > 0 && now - this.lastSnapshotWallAt >= this.options.snapshotEveryMs);
    if (!due) return;
    this.forceSnapshot = false;
    this.snapshotting = this.snapshot(this.generation).finally(() => {
      this.snapshotting = null;
    });
  }

  private async snapshot(generation: string): Promise<void> {
    const directory = generationDir(this.options.directory, generation);
    const started = this.now();
    const bytesBefore = this.bytesSinceSnapshot;
    try {
      this.checkFence();
      const entry = await takeSnapshot(
        (file) => this.source.backupTo(file, () => this.closing),
        directory,
        this.clock,
      );
      if (generation !== this.generation) return; // a new generation began meanwhile: this one is history
      this.lastSnapshot = { txid: entry.txid, takenAt: entry.takenAt };
      this.lastSnapshotWallAt = this.now();
      this.bytesSinceSnapshot = Math.max(0, this.bytesSinceSnapshot - bytesBefore);
      // Later transactions go to a new segment, so older segments can be pruned whole.
      this.rollSegment = true;
      if (!this.snapshotReady) {
        // Every transaction after the snapshot is in this generation's segments (they were queued
        // here from before the backup started), so the generation is now restorable up to both.
        this.snapshotReady = true;
        this.restorableUpTo(Math.max(entry.txid, this.shippedTxid));
        clearDeleted(this.options.directory);
        this.settleWaiters(false);
      }
      this.log.info(
        { generation, txid: entry.txid, bytes: entry.bytes, ms: this.now() - started },
        'mirror snapshot taken',
      );
      this.checkFence(); // a fenced owner deletes nothing: what it would prune may be the new owner's base
      const pruned = pruneMirror(this.options.directory, generation, this.options.retentionMs, this.clock());
      if (pruned.files > 0) this.log.info({ generation, ...pruned }, 'mirror pruned');
    } catch (error) {
      if (this.closing || this.fenced) return;
      this.lastError = error instanceof Error ? error.message : String(error);
      this.nextSnapshotAttempt = this.now() + RETRY_MAX_MS;
      this.log.error({ err: error, generation }, 'mirror snapshot failed; retrying');
    }
  }

  /** Wall-clock time for lag and pacing (never a test's fake clock). */
  private now(): number {
    return Date.now();
  }

  // ---- fencing ----------------------------------------------------------------------------------

  /** Throws (and fences this shipper for good) when a higher placement epoch has written the mirror. */
  private checkFence(): void {
    if (this.fenced) throw this.fenced;
    const newest = newestEpoch(this.options.directory);
    if (newest <= this.options.epoch) return;
    this.fenced = new RookeryError(
      'MirrorFenced',
      `This host no longer owns the database: placement epoch ${newest} writes its mirror now (this owner has epoch ${this.options.epoch}). Nothing more is shipped or acknowledged here; retry the request, the gateway routes it to the new owner.`,
      { epoch: this.options.epoch, newerEpoch: newest },
    );
    this.state = 'fenced';
    this.lastError = this.fenced.message;
    this.log.error(
      { epoch: this.options.epoch, newerEpoch: newest, unshipped: this.queue.length + this.inFlight.length },
      'mirror fenced: a newer owner writes this database; shipping stopped',
    );
    this.queue = [];
    this.inFlight = [];
    this.queuedBytes = 0;
    this.wakePump?.();
    this.settleWaiters(true);
    throw this.fenced;
  }

  /** checkFence from a timer: a mirror that cannot be read now is the pump's business, not the timer's. */
  private checkFenceQuietly(): void {
    try {
      this.checkFence();
    } catch {
      // fenced (recorded) or unreadable (the next write reports it)
    }
  }

  // ---- acknowledgments --------------------------------------------------------------------------

  private restorableUpTo(txid: number): void {
    this.mirroredTxid = Math.max(this.mirroredTxid, txid);
    let done = 0;
    while (done < this.unrestorable.length && this.unrestorable[done]!.txid <= this.mirroredTxid) {
      this.unrestorableBytes -= this.unrestorable[done]!.bytes;
      done++;
    }
    if (done > 0) this.unrestorable.splice(0, done);
  }

  /** Age of the oldest transaction a restore would not bring back yet. */
  private lagMs(): number {
    const oldest = this.unrestorable[0];
    return oldest ? Math.max(0, this.now() - oldest.queuedAt) : 0;
  }

  private wait(done: () => boolean, failure: () => RookeryError | null): Promise<void> {
    if (done()) return Promise.resolve();
    return new Promise<void>((resolve, reject) => {
      const waiter: Waiter = {
        done,
        failure,
        resolve,
        reject,
        timer: setTimeout(() => {
          this.waiters = this.waiters.filter((w) => w !== waiter);
          this.finish(waiter);
        }, this.options.confirmTimeoutMs),
      };
      this.waiters.push(waiter);
    });
  }

  private finish(waiter: Waiter): void {
    clearTimeout(waiter.timer);
    // Once fenced, nothing not yet confirmed is acknowledged, whatever the mode.
    const error = waiter.done() ? null : (this.fenced ?? waiter.failure());
    if (error) waiter.reject(error);
    else waiter.resolve();
  }

  private unconfirmed(txid: number): RookeryError {
    return new RookeryError(
      'MirrorUnavailable',
      `The write was committed on this machine but the mirror did not confirm it in time (transaction ${txid}${
        this.lastError ? `: ${this.lastError}` : ''
      }); it would be lost with this machine's disk. Check the mirror, then read the document back before retrying.`,
      { txid },
    );
  }

  /** Answers the waiters whose condition now holds; at close, every waiter. */
  private settleWaiters(final: boolean): void {
    if (this.waiters.length === 0) return;
    const remaining: Waiter[] = [];
    for (const waiter of this.waiters) {
      if (final || waiter.done()) this.finish(waiter);
      else remaining.push(waiter);
    }
    this.waiters = remaining;
  }
}

/**
 * Merges runs of lag entries into one each (the run's first time, last txid, total bytes), so a mirror
 * that stays unreachable for hours does not grow this list without bound. The lag it reports can
 * only come out higher, never lower.
 */
function coarsen(entries: { txid: number; queuedAt: number; bytes: number }[]) {
  const merged: typeof entries = [];
  for (let i = 0; i < entries.length; i += 100) {
    const run = entries.slice(i, i + 100);
    merged.push({
      txid: run[run.length - 1]!.txid,
      queuedAt: run[0]!.queuedAt,
      bytes: run.reduce((sum, e) => sum + e.bytes, 0),
    });
  }
  return merged;
}

/** `unref`: a retry pause must not keep an exiting process alive. */
function sleep(ms: number, options: { unref?: boolean } = {}): Promise<void> {
  return new Promise((resolve) => {
    const timer = setTimeout(resolve, ms);
    if (options.unref) timer.unref();
  });
}

/** Resolves true if `promise` did not settle within `ms`. */
async function raceTimeout(promise: Promise<unknown>, ms: number): Promise<boolean> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<boolean>((resolve) => {
    timer = setTimeout(() => resolve(true), ms);
  });
  try {
    return await Promise.race([promise.then(() => false).catch(() => false), timeout]);
  } finally {
    clearTimeout(timer);
  }
}
