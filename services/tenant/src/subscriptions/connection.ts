import {
  compileSubscriptionQuery,
  type Database,
  type LoadedDocument,
  type SubscriptionBatch,
  SubscriptionCursor,
} from '@rookery/engine';
import {
  LiveCloseCodes,
  RookeryError,
  SubscriptionAckSchema,
  type SubscriptionServerMessage,
  type SubscriptionStrategy,
} from '@rookery/protocol';
import type WebSocket from 'ws';
import { LiveSocket } from '../live/live-socket.js';
import type { SubscriptionConsumer, SubscriptionRegistry } from './registry.js';

export interface ConnectionOptions {
  strategy: SubscriptionStrategy;
  batchSize: number;
  maxWaitMs: number;
  pingIntervalMs: number;
}

/**
 * Progress over documents that matched nothing is recorded at most this often: a subscription on a busy
 * collection that rarely matches must not add a write to every commit. Losing it (a crash) only means
 * scanning those documents again.
 */
export const SKIPPED_PROGRESS_EVERY_MS = 1_000;

/**
 * One consumer's WebSocket on `…/subscriptions/{name}/connect` (docs/live-data.md): claims the
 * subscription by its strategy, sends `Connected`, then one batch at a time, each only after the previous
 * one was acknowledged and its progress recorded through the database's writer. Ends (and lets go of the
 * subscription) when the socket closes, the consumer is taken over or the subscription deleted, or the
 * database closes.
 */
export class SubscriptionConnection implements SubscriptionConsumer {
  private readonly live: LiveSocket;
  private readonly abort = new AbortController();
  private ended = false;
  /** Claimed and reading: it then lets go only when its loop has stopped. */
  private serving = false;
  /** The batch waiting for its ack, and how to wake the loop when it comes (or the connection ends). */
  private outstanding: { id: number; acknowledged: (ok: boolean) => void } | null = null;
  private nextBatchId = 1;
  /** Progress writes in flight: whoever takes the subscription next waits for them. */
  private recording: Promise<unknown> = Promise.resolve();
  private lastRecordedAt = 0;
  private skipped: { etag: number; timer: NodeJS.Timeout | null } = { etag: 0, timer: null };
  private readonly letGo: Promise<void>;
  private markLetGo!: () => void;

  constructor(
    socket: WebSocket,
    private readonly db: Database,
    private readonly name: string,
    private readonly options: ConnectionOptions,
    private readonly registry: SubscriptionRegistry,
  ) {
    this.live = new LiveSocket(socket, { pingIntervalMs: options.pingIntervalMs });
    this.letGo = new Promise((resolve) => {
      this.markLetGo = resolve;
    });
    // Listeners first, synchronously: a frame that arrives while the claim is pending must not be lost.
    socket.on('message', (data, isBinary) => this.onMessage(data, isBinary));
    const stopOnClose = db.onClose(() =>
      this.stop(LiveCloseCodes.DatabaseUnavailable, `database ${db.name} was deleted or is closing`),
    );
    socket.once('close', () => {
      stopOnClose();
      // Freed only once the last acknowledged progress is on disk: the next consumer starts after it.
      void this.end(1000, '').then(() => registry.release(db.name, name, this));
    });
  }

  /** Claims the subscription and serves it until the connection ends. */
  async serve(): Promise<void> {
    try {
      const claimed = await this.registry.claim(
        this.db.name,
        this.name,
        this,
        this.options.strategy,
        LiveCloseCodes.SubscriptionTakenOver,
      );
      if (this.ended) return;
      if (!claimed) {
        this.stop(
          LiveCloseCodes.SubscriptionInUse,
          `subscription ${this.name} has a consumer; connect with strategy TakeOver or WaitForFree`,
        );
        return;
      }
      await this.run();
    } catch (error) {
      // The database closed under a read or a write: its onClose already ended the connection, or this does.
      const failure = error instanceof RookeryError ? error : null;
      this.stop(
        failure?.code === 'DatabaseUnavailable' ? LiveCloseCodes.DatabaseUnavailable : 1011,
        failure?.message ?? 'internal error',
      );
    } finally {
      this.markLetGo();
    }
  }

  end(code: number, reason: string): Promise<void> {
    this.stop(code, reason);
    return this.letGo.then(async () => {
      await this.recording; // settles, never rejects
    });
  }

  /** Ends the connection without waiting for it to let go (what the serving loop itself calls). */
  private stop(code: number, reason: string): void {
    if (this.ended) return;
    this.ended = true;
    this.abort.abort();
    this.outstanding?.acknowledged(false);
    this.flushSkipped();
    if (code === LiveCloseCodes.SubscriptionTakenOver) {
      this.send({ Type: 'Error', Code: 'SubscriptionTakenOver', Message: reason });
    }
    if (code !== 1000) this.live.close(code, reason);
    // A consumer that never claimed has nothing to let go of.
    if (!this.serving) this.markLetGo();
  }

  private async run(): Promise<void> {
    this.serving = true;
    const subscription = this.db.subscription(this.name);
    if (!subscription) {
      this.stop(LiveCloseCodes.SubscriptionNotFound, `subscription ${this.name} does not exist`);
      return;
    }
    const cursor = new SubscriptionCursor(
      this.db,
      compileSubscriptionQuery(subscription.query, subscription.parameters),
      subscription.lastEtag,
    );
    this.send({ Type: 'Connected', Name: subscription.name, LastAcknowledgedEtag: subscription.lastEtag });
    for (;;) {
      const batch = await cursor.next({
        batchSize: this.options.batchSize,
        maxWaitMs: this.options.maxWaitMs,
        signal: this.abort.signal,
        onIdle: (etag) => this.skippedTo(etag),
      });
      if (batch === null || this.ended) return;
      const id = this.nextBatchId++;
      const acknowledged = new Promise<boolean>((resolve) => {
        this.outstanding = { id, acknowledged: resolve };
      });
      this.live.socket.send(batchFrame(id, batch));
      if (!(await acknowledged)) return;
      await this.record(batch.lastEtag, true);
    }
  }

  private onMessage(data: WebSocket.RawData, isBinary: boolean): void {
    if (this.ended) return; // an ack from a consumer taken over (or closing) is ignored
    const problem = this.ackProblem(data, isBinary);
    if (problem) {
      this.send({ Type: 'Error', Code: 'InvalidRequest', Message: problem });
      this.stop(LiveCloseCodes.ProtocolError, problem);
      return;
    }
    const outstanding = this.outstanding!;
    this.outstanding = null; // a second ack of the same batch is a protocol error
    outstanding.acknowledged(true);
  }

  /** What is wrong with a frame, or null when it acknowledges the batch waiting for it. */
  private ackProblem(data: WebSocket.RawData, isBinary: boolean): string | null {
    if (isBinary) return 'acks are JSON text frames, not binary ones';
    let json: unknown;
    try {
      // The server keeps ws's default binaryType ('nodebuffer'): a text frame arrives as one Buffer.
      json = JSON.parse((data as Buffer).toString('utf8'));
    } catch {
      return 'the frame is not JSON; an ack looks like {"Type":"Ack","BatchId":1}';
    }
    const ack = SubscriptionAckSchema.safeParse(json);
    if (!ack.success) return 'the only message a consumer sends is {"Type":"Ack","BatchId":n}';
    if (!this.outstanding) return `no batch is waiting for an ack (got one for batch ${ack.data.BatchId})`;
    if (ack.data.BatchId !== this.outstanding.id) {
      return `ack for batch ${ack.data.BatchId}, but batch ${this.outstanding.id} is the one waiting for it`;
    }
    return null;
  }

  /** Records progress through the database's single writer; every write is awaited by whoever comes next. */
  private record(etag: number, acknowledged: boolean): Promise<unknown> {
    this.lastRecordedAt = Date.now();
    const write = this.db.recordSubscriptionProgress(this.name, etag, acknowledged);
    this.recording = Promise.allSettled([this.recording, write]);
    return write;
  }

  /** Progress past documents that did not match: recorded later (see SKIPPED_PROGRESS_EVERY_MS). */
  private skippedTo(etag: number): void {
    this.skipped.etag = etag;
    if (this.skipped.timer) return;
    const wait = Math.max(0, this.lastRecordedAt + SKIPPED_PROGRESS_EVERY_MS - Date.now());
    this.skipped.timer = setTimeout(() => this.flushSkipped(), wait);
  }

  private flushSkipped(): void {
    if (!this.skipped.timer) return;
    clearTimeout(this.skipped.timer);
    this.skipped.timer = null;
    // Safe whenever it runs: nothing up to this etag is waiting for an ack (and progress never moves back).
    this.record(this.skipped.etag, false).catch(() => {});
  }

  private send(message: SubscriptionServerMessage): void {
    this.live.send(message);
  }
}

/**
 * A `Batch` frame, the documents' stored JSON spliced in as it is (as document reads send it) rather than
 * parsed and printed again.
 */
function batchFrame(id: number, batch: SubscriptionBatch): string {
  const items = batch.documents.map(
    (doc: LoadedDocument) =>
      `{"Id":${JSON.stringify(doc.id)},"ChangeVector":${JSON.stringify(doc.changeVector)},"Document":${doc.json}}`,
  );
  return `{"Type":"Batch","BatchId":${id},"LastEtag":${batch.lastEtag},"Items":[${items.join(',')}]}`;
}
