// The worker's side of a RavenDB TCP connection as a queue of whole JSON messages (json-frames.ts), each
// parsed with its zod schema, and the writing of the server's messages with the bytes they took.
import type { Duplex } from 'node:stream';
import type { z } from 'zod';
import { gatewayError } from '../refusal.js';
import { JsonFrameReader } from './json-frames.js';

/** Messages read ahead of the one being handled; past this the socket is no longer read until they are. */
const MAX_QUEUED_MESSAGES = 16;

export class ClientMessages {
  private readonly queue: string[] = [];
  private waiter: { resolve(text: string): void; reject(error: Error): void } | null = null;
  private failure: Error | null = null;
  /** Bytes read from the worker since the last takeBytesIn(). */
  private bytesIn = 0;

  constructor(
    private readonly socket: Duplex,
    maxMessageBytes: number,
  ) {
    const reader = new JsonFrameReader(maxMessageBytes);
    socket.on('data', (chunk: Buffer) => {
      this.bytesIn += chunk.length;
      if (this.failure) return;
      try {
        for (const message of reader.push(chunk)) this.deliver(message);
      } catch (error) {
        this.fail(error as Error);
      }
    });
    socket.once('end', () => this.fail(new WorkerLeft()));
    socket.once('close', () => this.fail(new WorkerLeft()));
  }

  /** The next whole message, parsed by `schema`; rejects when the worker left or sent what is not one. */
  async next<T extends z.ZodType>(schema: T, what: string): Promise<z.infer<T>> {
    const text = await this.nextText();
    let json: unknown;
    try {
      json = JSON.parse(text);
    } catch {
      throw gatewayError('InvalidRequest', `The ${what} is not valid JSON.`);
    }
    const parsed = schema.safeParse(json);
    if (!parsed.success) {
      const issues = parsed.error.issues.map((i) => `${i.path.join('.') || '(message)'}: ${i.message}`);
      throw gatewayError('InvalidRequest', `The ${what} is not one Rookery reads: ${issues.join('; ')}.`);
    }
    return parsed.data;
  }

  takeBytesIn(): number {
    const taken = this.bytesIn;
    this.bytesIn = 0;
    return taken;
  }

  /** Fails the reading: a wait in progress and every later one reject with `error`. */
  fail(error: Error): void {
    this.failure ??= error;
    const waiter = this.waiter;
    this.waiter = null;
    waiter?.reject(this.failure);
  }

  private nextText(): Promise<string> {
    const queued = this.queue.shift();
    if (queued !== undefined) {
      if (this.queue.length < MAX_QUEUED_MESSAGES) this.socket.resume();
      return Promise.resolve(queued);
    }
    if (this.failure) return Promise.reject(this.failure);
    return new Promise((resolve, reject) => {
      this.waiter = { resolve, reject };
    });
  }

  private deliver(message: string): void {
    const waiter = this.waiter;
    this.waiter = null;
    if (waiter) {
      waiter.resolve(message);
      return;
    }
    this.queue.push(message);
    // A worker that writes faster than it is read (during the checks, say) waits: what is held stays small.
    if (this.queue.length >= MAX_QUEUED_MESSAGES) this.socket.pause();
  }
}

/** The worker closed its connection (or it broke): nothing to answer. */
export class WorkerLeft extends Error {
  constructor() {
    super('the worker closed its connection');
  }
}

/** Writes one message of the server's to the worker; resolves with the bytes it took. */
export function writeMessage(socket: Duplex, message: object): number {
  if (socket.destroyed || socket.writableEnded) return 0;
  const bytes = Buffer.from(JSON.stringify(message), 'utf8');
  socket.write(bytes);
  return bytes.length;
}

/** Whether `error` is the worker's own leaving rather than a failure to report. */
export function isWorkerLeft(error: unknown): boolean {
  return error instanceof WorkerLeft;
}
