// What the changes connection and subscription workers share: opening a WebSocket with the store's client
// certificate (refusals arrive as the same typed errors as HTTP answers), noticing a dead peer, and
// waiting longer between each failed reconnection.
import { LIVE_PING_INTERVAL_MS } from '@rookery/protocol';
import WebSocket from 'ws';
import { clientError, type RookeryClientError } from '../errors.js';
import { errorFromResponse } from '../http/error-from-response.js';
import type { TlsClientOptions } from '../tls-options.js';

export interface LiveSocketOptions {
  url: URL;
  tls: TlsClientOptions;
  headers: Record<string, string>;
}

export type OpenOutcome = { ok: true; socket: WebSocket } | { ok: false; error: RookeryClientError };

/**
 * Opens a WebSocket; the promise settles once the upgrade succeeded or failed. A refused upgrade (401 TwoFactorRequired, 404
 * DatabaseNotFound, 503 TenantStarting…) comes back as the typed error of its problem body.
 */
/**
 * What a live connection does with its socket's frames and its end. Attached before the upgrade: ws can
 * emit the first frames in the same tick as 'open' (they arrive in the same TCP read as the upgrade
 * answer), so listeners added once the returned promise settled would miss them.
 */
export interface LiveSocketHandlers {
  /** Called in the 'open' event itself, before any frame is delivered. */
  open(socket: WebSocket): void;
  message(socket: WebSocket, data: WebSocket.RawData): void;
  /** After a successful open only: a refused upgrade is the promise's error instead. */
  close(socket: WebSocket, code: number, reason: string): void;
}

export function openLiveSocket(
  options: LiveSocketOptions,
  handlers: LiveSocketHandlers,
): Promise<OpenOutcome> {
  return new Promise((resolve) => {
    const url = new URL(options.url);
    url.protocol = url.protocol === 'http:' ? 'ws:' : 'wss:';
    const socket = new WebSocket(url, {
      ...options.tls,
      headers: options.headers,
      perMessageDeflate: false,
      handshakeTimeout: 15_000,
    });
    let settled = false;
    const settle = (outcome: OpenOutcome) => {
      if (settled) return;
      settled = true;
      resolve(outcome);
    };
    let opened = false;
    socket.on('message', (data) => {
      if (opened) handlers.message(socket, data);
    });
    socket.on('close', (code, reason) => {
      if (opened) handlers.close(socket, code, reason.toString());
    });
    socket.once('open', () => {
      opened = true;
      handlers.open(socket);
      settle({ ok: true, socket });
    });
    socket.once('unexpected-response', (_request, response) => {
      const chunks: Buffer[] = [];
      response.on('data', (chunk: Buffer) => chunks.push(chunk));
      response.on('end', () => {
        const body = Buffer.concat(chunks).toString('utf8');
        settle({ ok: false, error: errorFromResponse(response.statusCode ?? 0, response.headers, body) });
        socket.terminate();
      });
      response.on('error', () =>
        settle({ ok: false, error: errorFromResponse(response.statusCode ?? 0, {}, '') }),
      );
    });
    socket.on('error', (error) => {
      // After the open, 'close' follows an error and reports the end.
      settle({
        ok: false,
        error: clientError('ConnectionFailed', `WebSocket ${url.pathname} failed: ${error.message}`, error),
      });
    });
  });
}

/** Whether a refused upgrade is worth retrying: the service is busy or starting, not saying no. */
export function isTransientRefusal(error: RookeryClientError): boolean {
  return error.status === null || error.status >= 500 || error.status === 429 || error.status === 408;
}

/**
 * Terminates a socket whose peer went quiet: the server pings every LIVE_PING_INTERVAL_MS, so more than
 * two intervals without a ping (or any frame) means the connection is gone even if TCP has not noticed.
 * Returns the function that stops watching.
 */
export function watchLiveness(socket: WebSocket, intervalMs = LIVE_PING_INTERVAL_MS): () => void {
  let lastSeen = Date.now();
  const seen = () => {
    lastSeen = Date.now();
  };
  socket.on('ping', seen);
  socket.on('message', seen);
  socket.on('pong', seen);
  const timer = setInterval(() => {
    if (Date.now() - lastSeen > 2 * intervalMs + intervalMs / 2) socket.terminate();
  }, intervalMs / 2);
  timer.unref();
  return () => clearInterval(timer);
}

/** Exponential backoff with jitter between reconnection attempts; reset after a success. */
export class Backoff {
  private attempt = 0;

  constructor(
    private readonly minMs: number,
    private readonly maxMs: number,
  ) {}

  next(): number {
    const ceiling = Math.min(this.maxMs, this.minMs * 2 ** this.attempt);
    this.attempt += 1;
    // Half fixed, half random: many clients dropped at once do not come back in lockstep.
    return ceiling / 2 + Math.random() * (ceiling / 2);
  }

  reset(): void {
    this.attempt = 0;
  }
}
