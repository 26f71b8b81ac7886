// Small typed listener sets (instead of EventEmitter, whose 'error' event throws when nobody listens:
// a dropped changes connection must never crash a program that did not subscribe to errors), and a
// bounded queue that turns pushed events into an async iterator.
import { clientError, type RookeryClientError } from '../errors.js';

export class Listeners<E extends Record<string, unknown>> {
  private readonly sets = new Map<keyof E, Set<(value: never) => void>>();

  on<K extends keyof E>(event: K, listener: (value: E[K]) => void): () => void {
    let set = this.sets.get(event);
    if (set === undefined) {
      set = new Set();
      this.sets.set(event, set);
    }
    set.add(listener as (value: never) => void);
    return () => this.off(event, listener);
  }

  off<K extends keyof E>(event: K, listener: (value: E[K]) => void): void {
    this.sets.get(event)?.delete(listener as (value: never) => void);
  }

  emit<K extends keyof E>(event: K, value: E[K]): void {
    for (const listener of [...(this.sets.get(event) ?? [])]) {
      try {
        (listener as (value: E[K]) => void)(value);
      } catch {
        // A listener's failure is its own: the others still get the event.
      }
    }
  }

  count(event: keyof E): number {
    return this.sets.get(event)?.size ?? 0;
  }
}

/**
 * Events pushed by a connection, pulled by `for await`. Bounded: a consumer that falls more than
 * `limit` events behind gets an error instead of the process growing without end.
 */
export class PushQueue<T> implements AsyncIterableIterator<T> {
  private readonly items: T[] = [];
  private waiting: { resolve: (r: IteratorResult<T>) => void; reject: (e: unknown) => void } | null = null;
  private failure: RookeryClientError | null = null;
  private done = false;

  constructor(
    private readonly limit: number,
    private readonly onReturn: () => void,
  ) {}

  push(item: T): void {
    if (this.done || this.failure !== null) return;
    if (this.waiting !== null) {
      const { resolve } = this.waiting;
      this.waiting = null;
      resolve({ value: item, done: false });
      return;
    }
    if (this.items.length >= this.limit) {
      this.fail(clientError('ConsumerTooSlow', `More than ${this.limit} events waited for this iterator`));
      return;
    }
    this.items.push(item);
  }

  fail(error: RookeryClientError): void {
    if (this.done) return;
    this.failure = error;
    if (this.waiting !== null) {
      const { reject } = this.waiting;
      this.waiting = null;
      reject(error);
    }
  }

  end(): void {
    this.done = true;
    if (this.waiting !== null) {
      const { resolve } = this.waiting;
      this.waiting = null;
      resolve({ value: undefined, done: true });
    }
  }

  next(): Promise<IteratorResult<T>> {
    if (this.items.length > 0) return Promise.resolve({ value: this.items.shift()!, done: false });
    if (this.failure !== null) return Promise.reject(this.failure);
    if (this.done) return Promise.resolve({ value: undefined, done: true });
    return new Promise((resolve, reject) => {
      this.waiting = { resolve, reject };
    });
  }

  return(): Promise<IteratorResult<T>> {
    this.end();
    this.items.length = 0;
    this.onReturn();
    return Promise.resolve({ value: undefined, done: true });
  }

  [Symbol.asyncIterator](): this {
    return this;
  }
}
