// WebSocket upgrades through the gateway: the changes feed (`GET /databases/{db}/changes`), subscription
// connections (`…/subscriptions/{name}/connect`), and any other GET under /databases/{db}/ the tenant
// upgrades. An upgrade is admitted exactly as a request is (admission.ts: certificate, two-factor
// session, authorisation, tenant isolation, request rate, waking the tenant), and holds one of the
// tenant's WebSockets from then until it closes (live-limits.ts), carried by
// upgrade-proxy.ts, metered as one request plus its traffic, and watched while open by live-sockets.ts.
// Node hands an upgrade to the server's 'upgrade' event with the raw socket and no ServerResponse, so a
// refusal is written on that socket as a whole HTTP response.
import type http from 'node:http';
import type { Duplex } from 'node:stream';
import type { TLSSocket } from 'node:tls';
import { RookeryError } from '@rookery/protocol';
import type { Logger } from 'pino';
import type { Admission } from './admission.js';
import type { BrowserSessions } from './browser-session.js';
import type { LiveSockets } from './live-sockets.js';
import type { UsageMeter } from './metering.js';
import type { GatewayMetrics } from './metrics.js';
import { TenantUnreachable } from './proxy.js';
import { gatewayError, rawProblemResponse, unexpectedFailure } from './refusal.js';
import { classifyTenantRoute } from './route-access.js';
import type { TenantRouter } from './tenant-router.js';
import { endThenDestroy, proxyUpgrade, type UpgradeOutcome, WaitingClient } from './upgrade-proxy.js';

export interface UpgradesDeps {
  admission: Admission;
  /** Refuses WebSockets that pages of other sites open (browser-session.ts). */
  browsers: BrowserSessions;
  live: LiveSockets;
  meter: UsageMeter;
  metrics: GatewayMetrics;
  log: Logger;
  nextRequestId(): string;
  /** Where the tenant is reached (its socket, or its fleet host's relay). */
  router: TenantRouter;
}

export class Upgrades {
  /** Sockets between their upgrade request and the tunnel (or refusal): cut when the gateway closes. */
  private readonly pending = new Set<Duplex>();

  constructor(private readonly deps: UpgradesDeps) {}

  /** The server's 'upgrade' listener. */
  handle(request: http.IncomingMessage, socket: Duplex, head: Buffer): void {
    // Node removed its own error listener before handing the socket over: without one, a client that
    // resets the connection now would take the gateway down.
    socket.on('error', () => socket.destroy());
    const waiting = new WaitingClient(socket, head);
    this.pending.add(socket);
    const started = performance.now();
    const requestId = this.deps.nextRequestId();
    let status = 101;
    this.upgrade(request, waiting, requestId)
      .then((answered) => {
        status = answered;
      })
      .catch((error: unknown) => {
        if (socket.destroyed) return; // the client left, or the tenant's side broke mid-answer
        const failure =
          error instanceof RookeryError ? { answer: error, bug: false } : unexpectedFailure(error);
        if (failure.bug) this.deps.log.error({ err: error, reqId: requestId }, 'gateway upgrade failed');
        const answer = failure.answer;
        status = answer.status;
        endThenDestroy(socket, rawProblemResponse(answer));
      })
      .finally(() => {
        this.pending.delete(socket);
        this.deps.metrics.observe(request.method ?? 'GET', status, performance.now() - started);
      });
  }

  /** Cuts every upgrade in progress and every open socket. */
  close(): void {
    for (const socket of this.pending) socket.destroy();
    this.deps.live.closeAll();
  }

  /** Admits, carries and registers one upgrade; resolves with the status the client got. */
  private async upgrade(
    request: http.IncomingMessage,
    waiting: WaitingClient,
    requestId: string,
  ): Promise<number> {
    const { admission } = this.deps;
    const { socket } = waiting;
    // Who, first: nothing about routes is said to a caller who is not let in.
    const caller = await admission.identify(socket as TLSSocket);
    this.deps.browsers.refuseCrossSite(request, 'any method');
    const sessionEndsAt = await admission.requireSecondFactor(caller, request.headers.cookie);
    if (request.headers.upgrade?.toLowerCase() !== 'websocket') {
      throw gatewayError(
        'InvalidRequest',
        'The gateway carries WebSocket upgrades only (Upgrade: websocket).',
      );
    }
    if (request.method !== 'GET') {
      throw gatewayError('MethodNotAllowed', `A WebSocket upgrade is a GET request, not ${request.method}.`);
    }
    const url = request.url ?? '/';
    const route = classifyTenantRoute('GET', url);
    if (!route || route.database === null) {
      throw gatewayError(
        'RouteNotFound',
        `There is no WebSocket at ${url.split('?', 1)[0]}: live data is under /databases/{db}/ (…/changes, …/subscriptions/{name}/connect).`,
      );
    }
    const tenant = await admission.admit(caller.principal, route);
    // Held before the tenant is woken or asked, so upgrades still waiting count against the limit too.
    const release = admission.holdLiveConnection(tenant.id, 'websocket');
    let outcome: UpgradeOutcome;
    try {
      outcome = await this.carry(request, waiting, tenant.id, route.upstreamPath, requestId);
    } catch (error) {
      release();
      throw error;
    }
    this.deps.metrics.tenantRequest(tenant.id);
    if (!outcome.upgraded) {
      release(); // the tenant answered instead (404, 409): no socket was opened
      this.deps.meter.record(tenant.id, {
        bytesIn: 0,
        bytesOut: outcome.bytesOut,
        workUnits: outcome.workUnits,
      });
      return outcome.status;
    }
    // The upgrade is one request, of at least one work unit like any request; the frames that follow
    // are metered as they flow (live-sockets.ts).
    this.deps.meter.record(tenant.id, { bytesIn: 0, bytesOut: 0, workUnits: Math.max(1, outcome.workUnits) });
    outcome.tunnel.onClose(release);
    this.deps.live.add({
      tenantId: tenant.id,
      thumbprint: caller.certificate.thumbprint,
      route,
      sessionEndsAt,
      tunnel: outcome.tunnel,
      requestId,
    });
    return 101;
  }

  /**
   * Carries the upgrade to the tenant, woken first if it sleeps. An upgrade has no body, so a tenant that
   * stopped since the gateway learnt its socket (an idle stop, a crash), or moved to another fleet host,
   * costs one more try, not a refusal.
   */
  private async carry(
    request: http.IncomingMessage,
    waiting: WaitingClient,
    tenantId: string,
    path: string,
    requestId: string,
  ): Promise<UpgradeOutcome> {
    for (let attempt = 1; ; attempt++) {
      const target = await this.deps.router.target(tenantId);
      try {
        return await proxyUpgrade(request, waiting, { connect: target.connect, path, requestId });
      } catch (error) {
        if (!(error instanceof TenantUnreachable)) throw error;
        const refusal = await this.deps.router.unreachable(tenantId, target, error);
        if (attempt === 2)
          throw (
            refusal ??
            gatewayError('TenantUnavailable', 'The tenant was restarting; retry the request.', {}, 1)
          );
      }
    }
  }
}
