// Carries one WebSocket upgrade to a tenant container (its Unix socket, or a fleet host's relay to it).
// The upgrade request goes over a connection of its own, never the keep-alive pool (an upgraded
// connection leaves HTTP for good), and the tenant either
// - switches protocols (101): its answer is relayed and the two sockets are piped both ways with
//   backpressure, as a Tunnel that counts bytes and watches for the end but never parses a frame; or
// - answers an ordinary HTTP response (404 DatabaseNotFound, 409 SubscriptionInUse, …), relayed as it
//   is, after which the client's connection closes.
import http from 'node:http';
import type { Duplex } from 'node:stream';
import { MAX_LIVE_FRAME_BYTES, WORK_UNITS_HEADER } from '@rookery/protocol';
import { forwarded, TenantUnreachable } from './proxy.js';
import type { Connect } from './tenant-pool.js';

/**
 * How long a socket may stay open after it, or its other half, ended: its peer has this long to close
 * its side (a WebSocket closing handshake is a few frames), then it is destroyed. Without it a peer
 * that never closes would hold a half-open socket forever.
 */
export const LINGER_MS = 5_000;

export type UpgradeOutcome =
  | { upgraded: true; workUnits: number; tunnel: Tunnel }
  | { upgraded: false; status: number; bytesOut: number; workUnits: number };

export interface UpgradeTarget {
  /** Opens the connection the upgrade goes over (tenant-pool.ts). */
  connect: Connect;
  /** The path (with query string) the tenant container serves. */
  path: string;
  requestId: string;
}

/**
 * The client's socket while its upgrade waits (admission, a tenant waking, the tenant's answer). It is
 * read all along: Node hands an upgrade's socket over unread, and an unread socket never reports its
 * peer leaving, so a client that gave up would hold the tenant's side open until the first write to it
 * failed. A client sends nothing before the 101 (RFC 6455 §4.1); whatever it does send is kept for the
 * tenant, up to a frame's worth, and a client that sends more is cut.
 */
export class WaitingClient {
  private readonly early: Buffer[] = [];
  private earlyBytes = 0;
  private readonly onData = (chunk: Buffer) => {
    this.earlyBytes += chunk.length;
    if (this.earlyBytes > MAX_LIVE_FRAME_BYTES) this.socket.destroy();
    else this.early.push(chunk);
  };
  private readonly onEnd = () => this.socket.destroy();

  constructor(
    readonly socket: Duplex,
    head: Buffer,
  ) {
    if (head.length > 0) this.onData(head);
    socket.on('data', this.onData);
    socket.once('end', this.onEnd);
  }

  /** Stops reading (the tunnel reads from here on) and hands over what the client sent meanwhile. */
  stopWaiting(): Buffer {
    this.socket.off('data', this.onData);
    this.socket.off('end', this.onEnd);
    this.socket.pause();
    return this.early.length === 1 ? this.early[0]! : Buffer.concat(this.early);
  }
}

/** Ends a socket and destroys it if its peer has not closed within LINGER_MS. */
export function endThenDestroy(socket: Duplex, last?: string): void {
  socket.end(last);
  const timer = setTimeout(() => socket.destroy(), LINGER_MS);
  timer.unref();
  socket.once('close', () => clearTimeout(timer));
}

/**
 * An upgraded connection, client ↔ tenant. An end passes through (the other side is ended, then both
 * get LINGER_MS to close); an error or an abrupt close takes both down at once; `destroy` is how the
 * gateway cuts one (revocation, shutdown). Frames are never parsed, so a cut is a TCP close, which a
 * WebSocket client sees as close code 1006.
 */
export class Tunnel {
  private bytesIn = 0;
  private bytesOut = 0;
  private openSides = 2;
  private lingering: NodeJS.Timeout | null = null;
  private readonly onClosed: Array<() => void> = [];

  constructor(
    private readonly client: Duplex,
    private readonly tenant: Duplex,
    /** Frames that came along with the handshakes, carried before the tunnel opened. */
    carried: { bytesIn: number; bytesOut: number },
  ) {
    this.bytesIn = carried.bytesIn;
    this.bytesOut = carried.bytesOut;
    client.on('data', (chunk: Buffer) => {
      this.bytesIn += chunk.length;
    });
    tenant.on('data', (chunk: Buffer) => {
      this.bytesOut += chunk.length;
    });
    for (const [side, other] of [
      [client, tenant],
      [tenant, client],
    ] as const) {
      side.on('error', () => this.destroy());
      side.once('end', () => this.linger());
      side.once('close', () => {
        if (!side.readableEnded) other.destroy();
        if (--this.openSides > 0) return;
        if (this.lingering) clearTimeout(this.lingering);
        for (const listener of this.onClosed.splice(0)) listener();
      });
    }
    // pipe: each side is paused while the other's write buffer is full, so a slow reader holds at most
    // a couple of high-water marks here; and each end is passed on as an end.
    client.pipe(tenant);
    tenant.pipe(client);
  }

  /** Bytes carried since the last call: client → tenant (in) and tenant → client (out). */
  takeBytes(): { bytesIn: number; bytesOut: number } {
    const taken = { bytesIn: this.bytesIn, bytesOut: this.bytesOut };
    this.bytesIn = 0;
    this.bytesOut = 0;
    return taken;
  }

  get closed(): boolean {
    return this.openSides === 0;
  }

  /** Called once both sockets have closed (at once if they already have). */
  onClose(listener: () => void): void {
    if (this.closed) listener();
    else this.onClosed.push(listener);
  }

  destroy(): void {
    this.client.destroy();
    this.tenant.destroy();
  }

  private linger(): void {
    this.lingering ??= setTimeout(() => this.destroy(), LINGER_MS);
    this.lingering.unref();
  }
}

/**
 * Sends the upgrade request to the tenant and settles with what the tenant did: upgraded (a Tunnel,
 * open) or answered (relayed, the client's connection ending). Rejects with TenantUnreachable when the
 * tenant's socket did not answer at all, with another error when the client left first.
 */
export function proxyUpgrade(
  request: http.IncomingMessage,
  waiting: WaitingClient,
  target: UpgradeTarget,
): Promise<UpgradeOutcome> {
  const client = waiting.socket;
  // Gone already (the gateway closing, or the client leaving during admission): nothing to carry.
  if (client.destroyed) return Promise.reject(new Error('the client left before its upgrade was carried'));
  const headers = forwarded(request.rawHeaders);
  headers.push(
    'connection',
    'Upgrade',
    'upgrade',
    request.headers.upgrade ?? 'websocket',
    'host',
    'tenant',
    'x-request-id',
    target.requestId,
  );

  return new Promise((resolve, reject) => {
    const upstream = http.request({
      // Node's client waits for a connection given through the callback (a relay's, after its handshake);
      // a connection that could not be made is the request's 'error', before anything was sent.
      createConnection: (_options, made) => {
        Promise.resolve()
          .then(target.connect)
          .then(
            (socket) => made(null, socket),
            (error: Error) => made(error, undefined as unknown as Duplex),
          );
        return undefined;
      },
      path: target.path,
      method: 'GET',
      headers,
      // No agent: it would open its own connection and ignore createConnection.
    });
    let answered = false;
    // The client left before the tenant's answer was carried: the tenant's side goes too.
    const onClientGone = () => upstream.destroy();
    client.once('close', onClientGone);
    upstream.on('error', (error) => {
      client.off('close', onClientGone);
      // Mid-answer, the client already has part of a response: it can only be cut.
      if (answered) client.destroy();
      reject(answered || client.destroyed ? error : new TenantUnreachable(error));
    });

    upstream.once('upgrade', (answer: http.IncomingMessage, socket: Duplex, upstreamHead: Buffer) => {
      answered = true;
      client.off('close', onClientGone);
      if (client.destroyed) {
        socket.destroy();
        reject(new Error('the client left during the upgrade'));
        return;
      }
      let workUnits = 0;
      const answerHeaders = forwarded(answer.rawHeaders, (name, value) => {
        if (name === WORK_UNITS_HEADER) workUnits = Number(value) || 0;
      });
      client.write(
        headBytes(
          'HTTP/1.1 101 Switching Protocols',
          ['connection', 'Upgrade', 'upgrade', answer.headers.upgrade ?? 'websocket', ...answerHeaders],
          upstreamHead,
        ),
      );
      const head = waiting.stopWaiting();
      if (head.length > 0) socket.write(head);
      // Node's client no longer watches an upgraded socket's errors: the tunnel does from here on (a
      // write's error is emitted on a later tick, so none is missed).
      const tunnel = new Tunnel(client, socket, { bytesIn: head.length, bytesOut: upstreamHead.length });
      resolve({ upgraded: true, workUnits, tunnel });
    });

    upstream.once('response', (answer: http.IncomingMessage) => {
      answered = true;
      const status = answer.statusCode ?? 502;
      let workUnits = 0;
      let bytesOut = 0;
      const answerHeaders = forwarded(answer.rawHeaders, (name, value) => {
        if (name === WORK_UNITS_HEADER) workUnits = Number(value) || 0;
      });
      client.write(
        headBytes(
          `HTTP/1.1 ${status} ${http.STATUS_CODES[status] ?? 'Unknown'}`,
          // The body goes as it came (decoded, so with its Content-Length if it had one); the close
          // ends a body that had none.
          [...answerHeaders, 'connection', 'close'],
        ),
      );
      answer.on('data', (chunk: Buffer) => {
        bytesOut += chunk.length;
      });
      answer.on('error', () => client.destroy());
      answer.pipe(client, { end: false });
      answer.once('end', () => endThenDestroy(client));
      // 'close' comes after 'end', or alone when the client left (onClientGone cut the tenant's side).
      answer.once('close', () => {
        client.off('close', onClientGone);
        resolve({ upgraded: false, status, bytesOut, workUnits });
      });
    });
    upstream.end();
  });
}

function headBytes(statusLine: string, headers: readonly string[], after?: Buffer): Buffer {
  let text = `${statusLine}\r\n`;
  for (let i = 0; i < headers.length; i += 2) text += `${headers[i]}: ${headers[i + 1]}\r\n`;
  const head = Buffer.from(`${text}\r\n`, 'latin1');
  return after && after.length > 0 ? Buffer.concat([head, after]) : head;
}
