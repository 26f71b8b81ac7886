// The tenant's side of a RavenDB subscription connection: Rookery's own subscription WebSocket
// (`GET /databases/{db}/subscriptions/{name}/connect`, docs/live-data.md), opened by the gateway itself to
// the tenant through the same router as every request and upgrade (its Unix socket on one machine, its
// host's relay in a fleet), so the tenant serves a RavenDB worker exactly as it serves @rookery/client's.
import type { Duplex } from 'node:stream';
import { WebSocket } from 'ws';
import { TenantUnreachable } from '../proxy.js';
import { gatewayError } from '../refusal.js';
import type { TenantRouter } from '../tenant-router.js';

/** What the tenant answered instead of switching protocols: its problem's code and message. */
export interface TenantRefusal {
  status: number;
  code: string;
  message: string;
}

export type TenantSocketOutcome =
  | { opened: true; socket: TenantSocket }
  | { opened: false; refusal: TenantRefusal };

/** A refusal body is a small problem+json; more than this is not read. */
const MAX_REFUSAL_BYTES = 16 * 1024;

/**
 * Opens the subscription's WebSocket to the tenant (woken first if it sleeps). A tenant that stopped since
 * the router learnt its socket costs one more try, as an upgrade does (upgrade.ts); a second failure is
 * a RookeryError the caller reports.
 */
export async function openTenantSubscription(
  router: TenantRouter,
  tenantId: string,
  path: string,
  requestId: string,
): Promise<TenantSocketOutcome> {
  for (let attempt = 1; ; attempt++) {
    const target = await router.target(tenantId);
    try {
      const connection = await Promise.resolve()
        .then(target.connect)
        .catch((error: Error) => {
          throw new TenantUnreachable(error, false);
        });
      return await handshake(connection, path, requestId);
    } catch (error) {
      if (!(error instanceof TenantUnreachable)) throw error;
      const refusal = await router.unreachable(tenantId, target, error);
      if (attempt === 2 || (refusal !== null && error.connected)) {
        throw (
          refusal ?? gatewayError('TenantUnavailable', 'The tenant was restarting; retry the request.', {}, 1)
        );
      }
    }
  }
}

function handshake(connection: Duplex, path: string, requestId: string): Promise<TenantSocketOutcome> {
  return new Promise((resolve, reject) => {
    const socket = new WebSocket(`ws://tenant${path}`, {
      createConnection: () => connection as never,
      headers: { 'x-request-id': requestId },
      perMessageDeflate: false,
      followRedirects: false,
    });
    let settled = false;
    // Listening from now: the 101 and the tenant's first frames may come in one read, and ws delivers those
    // frames before a promise's continuation could add its listener.
    const tenantSocket = new TenantSocket(socket);
    socket.once('open', () => {
      settled = true;
      resolve({ opened: true, socket: tenantSocket });
    });
    socket.once('unexpected-response', (_request, response) => {
      settled = true;
      const chunks: Buffer[] = [];
      let length = 0;
      response.on('data', (chunk: Buffer) => {
        length += chunk.length;
        if (length <= MAX_REFUSAL_BYTES) chunks.push(chunk);
      });
      response.once('end', () => {
        connection.destroy();
        resolve({ opened: false, refusal: refusalOf(response.statusCode ?? 502, Buffer.concat(chunks)) });
      });
      response.once('error', (error: Error) => {
        connection.destroy();
        reject(new TenantUnreachable(error));
      });
    });
    socket.once('error', (error: Error) => {
      if (settled) return; // after the open, the bridge watches the socket
      settled = true;
      connection.destroy();
      reject(new TenantUnreachable(error));
    });
  });
}

/**
 * The tenant's WebSocket, its frames and its close kept from the moment it opens until the bridge takes
 * them (`handOver`), so that none is missed between the two.
 */
export class TenantSocket {
  private early: Array<{ data: Buffer; isBinary: boolean }> = [];
  private closedWith: number | null = null;
  private onMessage: ((data: Buffer, isBinary: boolean) => void) | null = null;
  private onClose: ((code: number) => void) | null = null;

  constructor(readonly ws: WebSocket) {
    ws.on('message', (data, isBinary) => {
      if (this.onMessage) this.onMessage(data as Buffer, isBinary);
      else this.early.push({ data: data as Buffer, isBinary });
    });
    ws.once('close', (code: number) => {
      if (this.onClose) this.onClose(code);
      else this.closedWith = code;
    });
  }

  /** From now on frames and the close go to these, starting with what came meanwhile. */
  handOver(onMessage: (data: Buffer, isBinary: boolean) => void, onClose: (code: number) => void): void {
    for (const frame of this.early.splice(0)) onMessage(frame.data, frame.isBinary);
    this.onMessage = onMessage;
    if (this.closedWith !== null) onClose(this.closedWith);
    else this.onClose = onClose;
  }
}

function refusalOf(status: number, body: Buffer): TenantRefusal {
  try {
    const problem = JSON.parse(body.toString('utf8')) as { code?: unknown; detail?: unknown };
    return {
      status,
      code: typeof problem.code === 'string' ? problem.code : `Http${status}`,
      message: typeof problem.detail === 'string' ? problem.detail : `the tenant answered ${status}`,
    };
  } catch {
    return { status, code: `Http${status}`, message: `the tenant answered ${status}` };
  }
}
