// The WebSockets open through this gateway. A request is checked once and is over in milliseconds; a
// socket can stay open for days, so what its upgrade was checked for is checked again every sweep (1 s):
// - its certificate still counts (revoked, expired, its principal deleted: the socket is cut, as a new
//   request would be refused; revocations reach the directory within about a second, so a revoked
//   certificate's sockets close within about two);
// - its principal may still reach the route (a role narrowed since the upgrade);
// - a person's two-factor session has not ended (a socket does not outlive the session it opened under).
// Each sweep also meters the bytes every socket carried since the last one, so a long-lived socket's
// usage lands in the minute it flowed (give or take a sweep) and is flushed with everything else,
// instead of appearing all at once when the socket closes.
import type { Logger } from 'pino';
import { authorize } from './authorize.js';
import type { UsageMeter } from './metering.js';
import type { Resolution } from './principals.js';
import type { TenantRoute } from './route-access.js';
import type { Tunnel } from './upgrade-proxy.js';

/** What a live socket is carried by: an upgrade's Tunnel, or a RavenDB worker's bridge (ravendb-tcp/). */
export type LiveTunnel = Pick<Tunnel, 'takeBytes' | 'onClose' | 'destroy'>;

export interface LiveSocket {
  tenantId: string;
  /** The client certificate's thumbprint. */
  thumbprint: string;
  route: TenantRoute;
  /** When the two-factor session it was opened under ends (epoch ms); null for programs. */
  sessionEndsAt: number | null;
  tunnel: LiveTunnel;
  requestId: string;
}

export interface LiveSocketsDeps {
  resolve(thumbprint: string): Promise<Resolution>;
  meter: UsageMeter;
  now: () => number;
  log: Logger;
  sweepMs: number;
}

export class LiveSockets {
  private readonly open = new Set<LiveSocket>();
  private timer: NodeJS.Timeout | null = null;
  private sweeping = false;
  private closed = false;

  constructor(private readonly deps: LiveSocketsDeps) {}

  get size(): number {
    return this.open.size;
  }

  add(socket: LiveSocket): void {
    if (this.closed) {
      socket.tunnel.destroy(); // upgraded while the gateway was shutting down
      return;
    }
    this.open.add(socket);
    socket.tunnel.onClose(() => {
      this.open.delete(socket);
      this.meter(socket);
    });
    if (!this.timer) {
      this.timer = setInterval(() => void this.sweep(), this.deps.sweepMs);
      this.timer.unref();
    }
  }

  /** Meters every socket's traffic and cuts the sockets whose upgrade would be refused now. */
  async sweep(): Promise<void> {
    if (this.sweeping) return;
    this.sweeping = true;
    try {
      const byCertificate = new Map<string, LiveSocket[]>();
      for (const socket of this.open) {
        this.meter(socket);
        const same = byCertificate.get(socket.thumbprint);
        if (same) same.push(socket);
        else byCertificate.set(socket.thumbprint, [socket]);
      }
      // One look-up per certificate, however many sockets it holds open.
      for (const [thumbprint, sockets] of byCertificate) {
        // The control store unreachable: keep the sockets, as requests keep their cached answers.
        const resolution = await this.deps.resolve(thumbprint).catch(() => null);
        if (!resolution) continue;
        const now = this.deps.now();
        for (const socket of sockets) {
          const refused = this.refusalOf(socket, resolution, now);
          if (!refused) continue;
          this.deps.log.info(
            { tenant: socket.tenantId, reqId: socket.requestId, reason: refused },
            'live socket cut: its upgrade would be refused now',
          );
          socket.tunnel.destroy();
        }
      }
      if (this.open.size === 0 && this.timer) {
        clearInterval(this.timer);
        this.timer = null;
      }
    } finally {
      this.sweeping = false;
    }
  }

  /** Cuts every socket (the gateway is closing); later upgrades are cut as they open. */
  closeAll(): void {
    this.closed = true;
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    for (const socket of this.open) socket.tunnel.destroy();
  }

  private refusalOf(socket: LiveSocket, resolution: Resolution, now: number): string | null {
    if (!resolution.ok) return resolution.code;
    if (!authorize(resolution.resolved.principal, socket.route).ok) return 'Forbidden';
    if (socket.sessionEndsAt !== null && socket.sessionEndsAt <= now) return 'TwoFactorRequired';
    return null;
  }

  private meter(socket: LiveSocket): void {
    this.deps.meter.recordTraffic(socket.tenantId, socket.tunnel.takeBytes());
  }
}
