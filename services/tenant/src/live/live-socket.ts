import { LiveCloseCodes } from '@rookery/protocol';
import WebSocket, { type WebSocketServer } from 'ws';

/**
 * Most bytes a socket may have waiting to be sent before its consumer counts as too slow. Notifications are
 * produced by writes, not by the reader: a consumer that does not read would otherwise make the tenant hold
 * every change it missed. Past this, the socket is closed (1013, "try again later") and the consumer
 * reconnects; nothing more is queued for it meanwhile.
 */
export const MAX_BUFFERED_BYTES = 8 * 1024 * 1024;

/** Standard close code: the server is overloaded, try again later (here: the consumer fell too far behind). */
export const CLOSE_TOO_SLOW = 1013;

/** How long sockets closed because the tenant stops get to answer the close before they are cut. */
const CLOSE_GRACE_MS = 1_000;

export interface LiveSocketOptions {
  /** How often the peer is pinged; a peer that answered none of the last two pings is cut. */
  pingIntervalMs: number;
  maxBufferedBytes?: number;
}

/**
 * A server-side WebSocket of the live API (changes, subscriptions): JSON messages out, a heartbeat that
 * finds peers that are gone without closing (a dropped network, a frozen process), and a bound on what
 * waits to be sent to a slow one.
 */
export class LiveSocket {
  private missedPings = 0;
  private readonly heartbeat: NodeJS.Timeout;
  private readonly maxBufferedBytes: number;

  constructor(
    readonly socket: WebSocket,
    options: LiveSocketOptions,
  ) {
    this.maxBufferedBytes = options.maxBufferedBytes ?? MAX_BUFFERED_BYTES;
    this.heartbeat = setInterval(() => this.ping(), options.pingIntervalMs);
    socket.on('pong', () => {
      this.missedPings = 0;
    });
    socket.once('close', () => clearInterval(this.heartbeat));
  }

  get isOpen(): boolean {
    return this.socket.readyState === WebSocket.OPEN;
  }

  /** Sends one JSON message; false (and nothing sent) when the socket is closing or its consumer is too slow. */
  send(message: object): boolean {
    if (!this.isOpen) return false;
    if (this.socket.bufferedAmount > this.maxBufferedBytes) {
      this.close(
        CLOSE_TOO_SLOW,
        `consumer too slow: more than ${this.maxBufferedBytes} bytes waiting to be sent; reconnect`,
      );
      return false;
    }
    this.socket.send(JSON.stringify(message));
    return true;
  }

  /** Closes with a code and a reason (at most 123 bytes, as the protocol allows). */
  close(code: number, reason: string): void {
    const state = this.socket.readyState;
    if (state === WebSocket.OPEN || state === WebSocket.CONNECTING)
      this.socket.close(code, truncateReason(reason));
  }

  private ping(): void {
    if (this.missedPings >= 2) {
      // Two pings without a pong: nobody is there to answer a close handshake either.
      this.socket.terminate();
      return;
    }
    this.missedPings++;
    if (this.isOpen) this.socket.ping();
  }
}

function truncateReason(reason: string): string {
  let text = reason;
  while (Buffer.byteLength(text) > 123) text = text.slice(0, -1);
  return text;
}

/**
 * The WebSocket plugin's preClose: every live socket is told the tenant is stopping (4503), and those that
 * do not answer the close within a second are cut, so stopping never waits on a peer that is gone.
 */
export function closeLiveSockets(server: WebSocketServer, done: () => void): void {
  for (const client of server.clients)
    client.close(LiveCloseCodes.DatabaseUnavailable, 'the tenant is stopping; reconnect');
  const cut = setTimeout(() => {
    for (const client of server.clients) client.terminate();
  }, CLOSE_GRACE_MS);
  server.close(() => {
    clearTimeout(cut);
    done();
  });
}
