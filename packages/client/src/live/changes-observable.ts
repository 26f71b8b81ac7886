// One stream of change notifications (a document, a collection, an index, …), used three ways:
// `subscribe(listener)`, `on('data' | 'error', listener)`, or `for await (const change of observable)`.
// Connection drops are 'error' events, not the end: the connection comes back and so do notifications
// (those made while it was down are not replayed). Only close() or a refusal that cannot be retried ends it.
import type { RookeryClientError } from '../errors.js';
import type { DatabaseChanges } from './database-changes.js';
import type { DocumentChange, IndexChange } from './frames.js';
import { Listeners, PushQueue } from './listeners.js';

/** Notifications an async iterator may hold for a consumer that is behind before it fails. */
const ITERATOR_BUFFER_LIMIT = 10_000;

interface ObservableEvents<T> extends Record<string, unknown> {
  data: T;
  error: RookeryClientError;
}

export class ChangesObservable<T extends DocumentChange | IndexChange> implements AsyncIterable<T> {
  private readonly listeners = new Listeners<ObservableEvents<T>>();
  private readonly iterators = new Set<PushQueue<T>>();
  private closed = false;
  /** Why it ended, when it ended on a refusal rather than close(). */
  private failure: RookeryClientError | null = null;

  constructor(
    private readonly changes: DatabaseChanges,
    private readonly watchKey: string,
    private readonly filter: (change: DocumentChange | IndexChange) => boolean,
  ) {}

  /** Calls `listener` with every matching notification; returns the function that stops it. */
  subscribe(listener: (change: T) => void): () => void {
    return this.listeners.on('data', listener);
  }

  on<K extends keyof ObservableEvents<T>>(
    event: K,
    listener: (value: ObservableEvents<T>[K]) => void,
  ): () => void {
    return this.listeners.on(event, listener);
  }

  off<K extends keyof ObservableEvents<T>>(
    event: K,
    listener: (value: ObservableEvents<T>[K]) => void,
  ): void {
    this.listeners.off(event, listener);
  }

  /** Resolves once the server confirmed the watch: changes committed after that are notified. */
  ensureSubscribedNow(): Promise<void> {
    return this.changes.confirmation(this.watchKey);
  }

  /** Whether the watch is confirmed on a live connection right now. */
  get isSubscribed(): boolean {
    return !this.closed && this.changes.isConfirmed(this.watchKey);
  }

  [Symbol.asyncIterator](): AsyncIterableIterator<T> {
    const queue: PushQueue<T> = new PushQueue<T>(ITERATOR_BUFFER_LIMIT, () => this.iterators.delete(queue));
    if (this.failure !== null) queue.fail(this.failure);
    else if (this.closed) queue.end();
    else this.iterators.add(queue);
    return queue;
  }

  /** Stops this observable (and its watch, when no other observable shares it). */
  close(): void {
    if (this.closed) return;
    this.terminate(null);
    this.changes.release(this.watchKey, this as unknown as ChangesObservable<DocumentChange | IndexChange>);
  }

  /** @internal A notification from the connection; kept if it matches. */
  offer(change: DocumentChange | IndexChange): void {
    if (this.closed || !this.filter(change)) return;
    this.listeners.emit('data', change as T);
    for (const queue of this.iterators) queue.push(change as T);
  }

  /** @internal The connection dropped (it reconnects): listeners hear of it, iterators carry on. */
  reportError(error: RookeryClientError): void {
    this.listeners.emit('error', error);
  }

  /** @internal The end: iterators finish (or fail with `error`), listeners get nothing more. */
  terminate(error: RookeryClientError | null): void {
    if (this.closed) return;
    this.closed = true;
    this.failure = error;
    if (error !== null) this.listeners.emit('error', error);
    for (const queue of this.iterators) {
      if (error === null) queue.end();
      else queue.fail(error);
    }
    this.iterators.clear();
  }
}
