// A RavenDB worker's TCP connection joined to Rookery's subscription WebSocket to the tenant, translating
// frames both ways (docs/ravendb-compatibility.md, "The subscription worker"):
//   tenant `Connected`                       → `ConnectionStatus` Accepted
//   tenant `Batch` {BatchId, Items}          → one `Data` per item (the document, its @metadata carrying
//                                               @id and @change-vector), then `EndOfBatch`
//   worker `Acknowledge` {ChangeVector}      → tenant `Ack` {BatchId} of the batch waiting for it, and
//                                               `Confirm` to the worker
//   tenant `Error` and close codes           → the ConnectionStatus or Error the worker acts on (answers.ts)
// The tenant sends the next batch only after the ack (and records the batch's progress first), so at most one
// batch is in flight here. Registered with LiveSockets like an upgraded WebSocket: metered, re-checked every
// sweep (a revoked certificate's worker is cut), cut when the gateway closes.
import type { TLSSocket } from 'node:tls';
import {
  RavenSubscriptionClientMessageSchema,
  type RavenSubscriptionServerMessage,
  type SubscriptionServerMessage,
} from '@rookery/protocol';
import type { WebSocket } from 'ws';
import { gatewayError } from '../refusal.js';
import { LINGER_MS } from '../upgrade-proxy.js';
import { ravenAnswerFor, ravenAnswerForClose } from './answers.js';
import { type ClientMessages, isWorkerLeft, writeMessage } from './client-messages.js';
import type { TenantSocket } from './tenant-subscription.js';

export class SubscriptionBridge {
  private bytesOut = 0;
  private openSides = 2;
  private readonly onClosed: Array<() => void> = [];
  /** The batch the worker has not acknowledged yet. */
  private outstanding: number | null = null;
  private lastError: { Code: string; Message: string } | null = null;
  private finished = false;
  private readonly tenant: WebSocket;

  constructor(
    private readonly socket: TLSSocket,
    private readonly messages: ClientMessages,
    tenantSocket: TenantSocket,
  ) {
    this.tenant = tenantSocket.ws;
    const sideClosed = () => {
      if (--this.openSides === 0) for (const listener of this.onClosed.splice(0)) listener();
    };
    const workerClosed = () => {
      sideClosed();
      this.finish(null);
    };
    // The worker may have left while the tenant's socket was being opened.
    if (socket.closed) queueMicrotask(workerClosed);
    else socket.once('close', workerClosed);
    this.tenant.on('error', () => this.finish(null));
    tenantSocket.handOver(
      (data, isBinary) => this.fromTenant(data, isBinary),
      (code) => {
        sideClosed();
        this.finish(ravenAnswerForClose(code, this.lastError));
      },
    );
    void this.fromWorker();
  }

  /** Bytes carried since the last call: from the worker (in) and to it (out). */
  takeBytes(): { bytesIn: number; bytesOut: number } {
    const bytesOut = this.bytesOut;
    this.bytesOut = 0;
    return { bytesIn: this.messages.takeBytesIn(), bytesOut };
  }

  /** Called once both the worker's connection and the tenant's socket have closed. */
  onClose(listener: () => void): void {
    if (this.openSides === 0) listener();
    else this.onClosed.push(listener);
  }

  /** Cuts both sides at once (a revocation, the gateway closing). */
  destroy(): void {
    this.finished = true;
    this.socket.destroy();
    this.tenant.terminate();
  }

  private async fromWorker(): Promise<void> {
    try {
      for (;;) {
        const message = await this.messages.next(
          RavenSubscriptionClientMessageSchema,
          'subscription message',
        );
        if (message.Type !== 'Acknowledge') continue; // None and the like carry nothing Rookery acts on
        if (this.outstanding === null) {
          throw gatewayError('InvalidRequest', 'An Acknowledge came with no batch waiting for it.');
        }
        this.tenant.send(JSON.stringify({ Type: 'Ack', BatchId: this.outstanding }));
        this.outstanding = null;
        // The tenant records the batch's progress before it sends anything more, and before it lets the
        // subscription go when this connection ends.
        this.toWorker({ Type: 'Confirm' });
      }
    } catch (error) {
      if (isWorkerLeft(error)) return this.finish(null);
      const refusal = error instanceof Error && 'code' in error ? (error as { code: string }) : null;
      this.finish(ravenAnswerFor(refusal?.code ?? 'InvalidRequest', (error as Error).message));
    }
  }

  private fromTenant(data: Buffer, isBinary: boolean): void {
    if (this.finished || isBinary) return;
    // The tenant's frames are its own protocol (live.ts), trusted as its answers to requests are.
    let message: SubscriptionServerMessage;
    try {
      message = JSON.parse(data.toString('utf8')) as SubscriptionServerMessage;
    } catch {
      this.finish(ravenAnswerFor('InternalError', 'the tenant sent a frame that is not JSON'));
      return;
    }
    switch (message.Type) {
      case 'Connected':
        this.toWorker({ Type: 'ConnectionStatus', Status: 'Accepted' });
        return;
      case 'Batch':
        this.outstanding = message.BatchId;
        for (const item of message.Items) {
          const metadata = (item.Document['@metadata'] ?? {}) as Record<string, unknown>;
          this.toWorker({
            Type: 'Data',
            Data: {
              ...item.Document,
              '@metadata': { ...metadata, '@id': item.Id, '@change-vector': item.ChangeVector },
            },
          });
        }
        this.toWorker({ Type: 'EndOfBatch' });
        return;
      case 'Error':
        this.lastError = { Code: message.Code, Message: message.Message };
        return;
    }
  }

  private toWorker(message: RavenSubscriptionServerMessage): void {
    this.bytesOut += writeMessage(this.socket, message);
  }

  /** Ends both sides once, telling the worker `last` first when there is something to tell. */
  private finish(last: RavenSubscriptionServerMessage | null): void {
    if (this.finished) return;
    this.finished = true;
    if (last) this.toWorker(last);
    this.socket.end();
    // A plain close: the tenant lets the subscription go at once (and keeps the last recorded ack).
    if (this.tenant.readyState === this.tenant.OPEN) this.tenant.close(1000);
    // A peer that never completes its close is cut after a while, as an upgraded one is (upgrade-proxy.ts).
    const linger = setTimeout(() => this.destroy(), LINGER_MS);
    linger.unref();
    this.onClose(() => clearTimeout(linger));
  }
}
