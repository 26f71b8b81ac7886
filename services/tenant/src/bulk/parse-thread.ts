// The request thread's side of bulk insert's parse thread: starts the worker
// on the first bulk insert, multiplexes the bulk inserts in flight over it as
// sessions, and fails every session if the thread dies (the next bulk insert
// starts a new one).
import { SiblingWorker } from '@rookery/engine';
import { emptyPreparedChunk, type PreparedChunk } from '@rookery/protocol';
import { type FromParseThread, FromParseThreadSchema, type ToParseThread } from './parse-messages.js';

/** What a session hands the bulk insert: chunks to store, then the end or the failure. */
export type ParseEvent = Exclude<FromParseThread, { type: 'consumed' }>;

export class BulkParseThread {
  // An idle parse thread never keeps the tenant process alive.
  private readonly thread = new SiblingWorker(import.meta.url, 'parse-worker', {
    message: (raw) => {
      const message = FromParseThreadSchema.safeParse(raw);
      if (message.success) this.sessions.get(message.data.session)?.receive(message.data);
    },
    lost: (why) => this.lost(why),
  });
  private readonly sessions = new Map<number, BulkParseSession>();
  private nextSession = 0;

  open(maxDocumentBytes: number): BulkParseSession {
    const worker = this.thread.running();
    const id = this.nextSession++;
    const session = new BulkParseSession(
      id,
      (message, transfer) => worker.postMessage(message, transfer),
      () => this.sessions.delete(id),
    );
    this.sessions.set(id, session);
    worker.postMessage({ type: 'open', session: id, maxDocumentBytes } satisfies ToParseThread);
    return session;
  }

  close(): Promise<void> {
    return this.thread.close();
  }

  private lost(why: string): void {
    for (const session of this.sessions.values()) {
      session.receive({
        type: 'failed',
        session: session.id,
        chunk: emptyPreparedChunk(),
        error: {
          code: 'InternalError',
          message: `Bulk insert's parse thread stopped (${why}); what was stored is counted in Processed, send the rest again`,
          details: {},
        },
      });
    }
    this.sessions.clear();
  }
}

/** One bulk insert's traffic with the parse thread. */
export class BulkParseSession {
  private readonly events: ParseEvent[] = [];
  private wake: (() => void) | null = null;
  private unconsumed = 0;
  private closed = false;

  constructor(
    readonly id: number,
    private readonly post: (message: ToParseThread, transfer?: ArrayBuffer[]) => void,
    private readonly onClose: () => void,
  ) {}

  /** Bytes sent to the parse thread that it has not parsed yet: the request thread stops reading above a bound. */
  get backlog(): number {
    return this.unconsumed;
  }

  push(data: Buffer): void {
    // A copy of exactly these bytes, moved rather than cloned: a socket's Buffer may be a view of a larger pool.
    const bytes = new Uint8Array(data);
    this.unconsumed += bytes.byteLength;
    this.post({ type: 'data', session: this.id, bytes }, [bytes.buffer]);
  }

  end(): void {
    this.post({ type: 'end', session: this.id });
  }

  /** The next event ready now, if any. */
  take(): ParseEvent | undefined {
    return this.events.shift();
  }

  /** The chunks ready now, up to the first event that is not one (left in place). */
  takeChunks(): PreparedChunk[] {
    const chunks: PreparedChunk[] = [];
    for (let event = this.events[0]; event?.type === 'chunk'; event = this.events[0]) {
      chunks.push(event.chunk);
      this.events.shift();
    }
    return chunks;
  }

  /** The next event, waiting for it. */
  async next(): Promise<ParseEvent> {
    for (;;) {
      const event = this.events.shift();
      if (event) return event;
      await this.changed();
    }
  }

  /** Resolves when an event arrives or the backlog shrinks. */
  changed(): Promise<void> {
    return new Promise((resolve) => {
      this.wake = resolve;
    });
  }

  receive(message: FromParseThread): void {
    if (message.type === 'consumed') this.unconsumed -= message.bytes;
    else this.events.push(message);
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }

  /** Tells the parse thread to drop this session (whatever it still holds of it is not stored). */
  close(): void {
    if (this.closed) return;
    this.closed = true;
    this.post({ type: 'close', session: this.id });
    this.onClose();
  }
}
