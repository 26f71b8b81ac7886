import type { IncomingMessage } from 'node:http';
import WebSocket, { type ClientOptions } from 'ws';

/**
 * A WebSocket client for tests of the live API: JSON messages are queued as they arrive and taken in
 * order with `next`; `closed` settles with the close code and reason.
 */
export class TestSocket {
  readonly closed: Promise<{ code: number; reason: string }>;
  private readonly received: unknown[] = [];
  private waiter: (() => void) | null = null;

  private constructor(readonly ws: WebSocket) {
    ws.on('message', (data) => {
      this.received.push(JSON.parse(String(data)));
      this.waiter?.();
    });
    this.closed = new Promise((resolve) =>
      ws.once('close', (code, reason) => {
        this.waiter?.();
        resolve({ code, reason: reason.toString() });
      }),
    );
  }

  static open(url: string, options: ClientOptions = {}): Promise<TestSocket> {
    const ws = new WebSocket(url, options);
    const socket = new TestSocket(ws);
    return new Promise((resolve, reject) => {
      ws.once('open', () => resolve(socket));
      ws.once('error', reject);
      ws.once('unexpected-response', (request, response) => {
        request.destroy();
        reject(new Error(`unexpected response ${response.statusCode}`));
      });
    });
  }

  send(message: unknown): void {
    this.ws.send(typeof message === 'string' ? message : JSON.stringify(message));
  }

  /** The next message (of those not taken yet); rejects if the socket closes first. */
  async next<T = Record<string, unknown>>(): Promise<T> {
    for (;;) {
      const message = this.received.shift();
      if (message !== undefined) return message as T;
      if (this.ws.readyState === WebSocket.CLOSED) throw new Error('the socket closed');
      await new Promise<void>((resolve) => {
        this.waiter = resolve;
      });
      this.waiter = null;
    }
  }

  /** Messages that arrived and were not taken yet. */
  get pending(): readonly unknown[] {
    return this.received;
  }

  /** Sends a command and returns its answer (a Confirm or an Error). */
  async command(command: Record<string, unknown>): Promise<Record<string, unknown>> {
    this.send(command);
    return this.next();
  }

  close(): Promise<{ code: number; reason: string }> {
    this.ws.close();
    return this.closed;
  }
}

/** What a WebSocket upgrade that was refused answered: its status and problem body. */
export function refusedUpgrade(url: string): Promise<{ status: number; body: Record<string, unknown> }> {
  return new Promise((resolve, reject) => {
    const ws = new WebSocket(url);
    ws.once('open', () => {
      ws.close();
      reject(new Error('the upgrade was accepted'));
    });
    ws.once('error', () => {});
    ws.once('unexpected-response', (_request, response: IncomingMessage) => {
      let text = '';
      response.setEncoding('utf8');
      response.on('data', (chunk: string) => {
        text += chunk;
      });
      response.once('end', () => {
        resolve({ status: response.statusCode ?? 0, body: JSON.parse(text) });
        ws.terminate();
      });
    });
  });
}
