// A subscription consumer: `for await (const batch of worker)`. The server sends one batch and waits for
// its Ack before the next, so the worker acknowledges a batch when the loop asks for the next one: the
// loop body finished it. Leaving the loop (break, return, throw) closes the worker without acknowledging
// the batch in hand: it is delivered again to the next consumer (at least once; nothing acknowledged is
// sent again). A dropped connection is reopened with backoff; a batch held across the drop is delivered
// again too. Close codes 4404 / 4409 / 4410 end the loop with their typed errors.
import { LiveCloseCodes, type SubscriptionStrategy } from '@rookery/protocol';
import type WebSocket from 'ws';
import { clientError, errorForCode, type RookeryClientError } from '../errors.js';
import { isJsonObject } from '../json-object.js';
import { parseFrame, SubscriptionFrameSchema } from '../live/frames.js';
import { Listeners } from '../live/listeners.js';
import {
  Backoff,
  isTransientRefusal,
  type LiveSocketOptions,
  openLiveSocket,
  watchLiveness,
} from '../live/live-socket.js';
import type { EntityType, Metadata } from '../session/tracked-documents.js';

export interface SubscriptionWorkerOptions {
  /** OpenIfFree (default): refused with SubscriptionInUseError while another consumer holds it. */
  strategy?: SubscriptionStrategy;
  /** Most documents per batch (server default 256). */
  batchSize?: number;
  /** How long the server may hold a partial batch waiting for more documents. */
  maxWaitMs?: number;
  /** Give the documents this class's prototype. */
  documentType?: EntityType<unknown>;
}

export interface SubscriptionItem<T> {
  id: string;
  changeVector: string;
  metadata: Metadata;
  /** The document without its `@metadata`. */
  result: T;
}

export interface SubscriptionBatch<T> {
  batchId: number;
  lastEtag: number;
  items: SubscriptionItem<T>[];
  /** Acknowledges now instead of when the next batch is pulled (e.g. before leaving the loop). */
  acknowledge(): void;
}

/** Close codes that end the worker: retrying would be refused the same way. */
const TERMINAL_CLOSES: Readonly<Record<number, string>> = {
  [LiveCloseCodes.SubscriptionNotFound]: 'SubscriptionNotFound',
  [LiveCloseCodes.SubscriptionInUse]: 'SubscriptionInUse',
  [LiveCloseCodes.SubscriptionTakenOver]: 'SubscriptionTakenOver',
  [LiveCloseCodes.ProtocolError]: 'InvalidRequest',
};

interface WorkerEvents extends Record<string, unknown> {
  /** The connection dropped; the worker reconnects. */
  connectionError: RookeryClientError;
  connected: { lastAcknowledgedEtag: number };
}

interface Delivered<T> {
  batch: SubscriptionBatch<T>;
  socket: WebSocket;
}

export class SubscriptionWorker<T = Record<string, unknown>>
  implements AsyncIterableIterator<SubscriptionBatch<T>>
{
  private readonly listeners = new Listeners<WorkerEvents>();
  private readonly backoff: Backoff;
  private socket: WebSocket | null = null;
  private connecting: Promise<void> | null = null;
  /** The batch the consumer holds (acknowledged when it asks for the next one). */
  private held: Delivered<T> | null = null;
  /** A batch received before the consumer asked for it. */
  private ready: Delivered<T> | null = null;
  private waiter: { resolve: (d: Delivered<T> | null) => void; reject: (e: unknown) => void } | null = null;
  private failure: RookeryClientError | null = null;
  private closed = false;
  private reconnectTimer: NodeJS.Timeout | null = null;
  private stopWatching: (() => void) | null = null;
  private everConnected = false;

  constructor(
    readonly name: string,
    private readonly socketOptions: () => LiveSocketOptions,
    private readonly options: SubscriptionWorkerOptions,
    reconnect: { minDelayMs: number; maxDelayMs: number },
    private readonly onClose: () => void = () => undefined,
  ) {
    this.backoff = new Backoff(reconnect.minDelayMs, reconnect.maxDelayMs);
  }

  on<K extends keyof WorkerEvents>(event: K, listener: (value: WorkerEvents[K]) => void): () => void {
    return this.listeners.on(event, listener);
  }

  [Symbol.asyncIterator](): this {
    return this;
  }

  async next(): Promise<IteratorResult<SubscriptionBatch<T>>> {
    if (this.held !== null) {
      this.held.batch.acknowledge();
      this.held = null;
    }
    if (this.failure !== null) throw this.failure;
    if (this.closed) return { value: undefined, done: true };
    this.ensureConnection();
    const delivered = await this.nextDelivered();
    if (delivered === null) return { value: undefined, done: true };
    this.held = delivered;
    return { value: delivered.batch, done: false };
  }

  /** Leaving the loop: closes the worker; the batch in hand is not acknowledged. */
  async return(): Promise<IteratorResult<SubscriptionBatch<T>>> {
    await this.close();
    return { value: undefined, done: true };
  }

  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    this.onClose();
    if (this.reconnectTimer !== null) clearTimeout(this.reconnectTimer);
    this.stopWatching?.();
    this.held = null;
    this.ready = null;
    this.resolveWaiter(null);
    const socket = this.socket;
    this.socket = null;
    if (socket !== null && socket.readyState === socket.OPEN) {
      await new Promise<void>((resolve) => {
        socket.once('close', () => resolve());
        socket.close(1000);
        setTimeout(() => {
          socket.terminate();
          resolve();
        }, 2_000).unref();
      });
    }
  }

  private nextDelivered(): Promise<Delivered<T> | null> {
    if (this.ready !== null) {
      const delivered = this.ready;
      this.ready = null;
      return Promise.resolve(delivered);
    }
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  private ensureConnection(): void {
    if (this.socket !== null || this.connecting !== null || this.reconnectTimer !== null) return;
    this.connecting = this.connect().finally(() => {
      this.connecting = null;
    });
  }

  private async connect(): Promise<void> {
    const outcome = await openLiveSocket(this.socketOptions(), {
      open: (socket) => {
        if (this.closed) {
          socket.close(1000);
          return;
        }
        this.socket = socket;
        this.stopWatching = watchLiveness(socket);
      },
      message: (socket, data) => {
        if (this.socket === socket) this.receive(socket, data);
      },
      close: (socket, code, reason) => this.socketClosed(socket, code, reason),
    });
    if (this.closed || outcome.ok) return;
    if (isTransientRefusal(outcome.error) || this.meetsItsOldSelf(outcome.error.code))
      this.dropped(outcome.error);
    else this.fail(outcome.error);
  }

  private socketClosed(socket: WebSocket, code: number, reason: string): void {
    if (this.socket !== socket) return;
    this.stopWatching?.();
    this.socket = null;
    if (this.closed) return;
    const terminal = TERMINAL_CLOSES[code];
    const detail = reason || `The subscription connection closed (${code})`;
    if (terminal !== undefined && !this.meetsItsOldSelf(terminal)) {
      this.fail(errorForCode({ code: terminal, status: null, detail }));
    } else this.dropped(clientError('ConnectionFailed', detail));
  }

  /**
   * After a dropped connection the server may not have noticed yet that the old connection is gone (up to
   * three ping intervals for a peer that vanished): "in use" then means in use by this worker's own past,
   * so it is retried with backoff instead of ending the loop.
   */
  private meetsItsOldSelf(code: string): boolean {
    return this.everConnected && code === 'SubscriptionInUse';
  }

  private receive(socket: WebSocket, data: unknown): void {
    const parsed = parseFrame(SubscriptionFrameSchema, data);
    if (!parsed.ok) {
      this.fail(clientError('UnexpectedResponse', `Subscription ${this.name} sent ${parsed.reason}`));
      socket.close(4400);
      return;
    }
    const frame = parsed.frame;
    switch (frame.Type) {
      case 'Connected':
        this.everConnected = true;
        this.backoff.reset();
        this.listeners.emit('connected', { lastAcknowledgedEtag: frame.LastAcknowledgedEtag });
        return;
      case 'Error':
        this.fail(errorForCode({ code: frame.Code, status: null, detail: frame.Message }));
        socket.close(1000);
        return;
      case 'Batch': {
        let acknowledged = false;
        const batch: SubscriptionBatch<T> = {
          batchId: frame.BatchId,
          lastEtag: frame.LastEtag,
          items: frame.Items.map((item) => this.toItem(item)),
          acknowledge: () => {
            // Only the connection that delivered a batch can acknowledge it: after a reconnection the
            // server sends it again, and that copy is the one to acknowledge.
            if (acknowledged || this.socket !== socket || socket.readyState !== socket.OPEN) return;
            acknowledged = true;
            socket.send(JSON.stringify({ Type: 'Ack', BatchId: frame.BatchId }));
          },
        };
        const delivered = { batch, socket };
        if (!this.resolveWaiter(delivered)) this.ready = delivered;
        return;
      }
    }
  }

  private toItem(item: {
    Id: string;
    ChangeVector: string;
    Document: Record<string, unknown>;
  }): SubscriptionItem<T> {
    const { '@metadata': metadata, ...body } = item.Document;
    const documentType = this.options.documentType;
    const result =
      documentType === undefined ? body : Object.assign(Object.create(documentType.prototype), body);
    return {
      id: item.Id,
      changeVector: item.ChangeVector,
      metadata: isJsonObject(metadata) ? metadata : {},
      result: result as T,
    };
  }

  private dropped(error: RookeryClientError): void {
    // Whatever was delivered on the lost connection comes again on the next one.
    this.ready = null;
    this.listeners.emit('connectionError', error);
    this.reconnectTimer = setTimeout(() => {
      this.reconnectTimer = null;
      if (!this.closed) this.ensureConnection();
    }, this.backoff.next());
  }

  private fail(error: RookeryClientError): void {
    if (this.failure !== null) return;
    this.failure = error;
    if (this.waiter !== null) {
      const { reject } = this.waiter;
      this.waiter = null;
      reject(error);
    }
  }

  private resolveWaiter(delivered: Delivered<T> | null): boolean {
    if (this.waiter === null) return false;
    const { resolve } = this.waiter;
    this.waiter = null;
    resolve(delivered);
    return true;
  }
}
