// Fleet mode: the host's HTTPS port for other machines (docs/scale-out.md, "Routing"). Mutual TLS: a peer
// must present a certificate of Rookery's CA that names a Rookery service (a principal's certificate of the
// same CA is refused), and the internal token like on the plain port. It serves
// - the relay (packages/protocol/src/relay.ts): a gateway's `GET /tenants/{id}/relay` upgrade becomes,
//   once this host confirmed it owns the tenant and woke it, a byte pipe to the tenant's Unix socket that
//   the gateway uses as a connection of its pool. Every refusal (421 TenantNotHere, 503 LeaseExpired, what
//   a wake answers) is written before the tenant's socket is even opened;
// - the internal API's routes (server.ts, the same handlers) for a gateway's stats or a worker's purge.
import http from 'node:http';
import net from 'node:net';
import type { Duplex } from 'node:stream';
import type tls from 'node:tls';
import type { SecureContextOptions, TLSSocket } from 'node:tls';
import { serviceOf } from '@rookery/pki';
import {
  INTERNAL_TOKEN_HEADER,
  PLACEMENT_EPOCH_HEADER,
  PlacementEpochHeaderSchema,
  RELAY_UPGRADE_PROTOCOL,
  RookeryError,
  rawProblemResponse,
  tenantOfRelayPath,
} from '@rookery/protocol';
import type { FastifyInstance } from 'fastify';
import type { TenantOwnership } from './ownership.js';
import { frontRelayConnections, type HandOffOptions } from './relay-handoff.js';
import {
  buildHostApi,
  type HostServerOptions,
  INTERNAL_TOKEN_PROBLEM,
  internalTokenCheck,
} from './server.js';
import type { TenantMoves } from './tenant-moves.js';

/** Services whose certificates may call the internal routes here; the relay itself is the gateway's only. */
const ROUTE_CALLERS = new Set(['gateway', 'worker']);

/** A relay request's head must arrive within this long (a peer that sends nothing holds no socket). */
export const RELAY_HEADERS_TIMEOUT_MS = 10_000;

export interface RelayTls {
  certPem: string;
  keyPem: string;
  /** Rookery's CA: the only issuer a peer's certificate may chain to. */
  caPem: string;
  /** Issues the tenants' certificates for the hand-off (relay-handoff.ts); without it every connection is piped. */
  tenantCertificates?: HandOffOptions['certificates'];
}

export interface RelayServerOptions extends HostServerOptions {
  ownership: Pick<TenantOwnership, 'confirm' | 'forget'>;
  /** The tenants' doors: a tenant being moved is never handed a connection (relay-handoff.ts). */
  moves?: Pick<TenantMoves, 'admit' | 'isMoving'>;
  tls: RelayTls;
}

/** The relay port's server (not yet listening): the internal routes plus the relay upgrade, over mutual TLS. */
export function buildRelayServer(options: RelayServerOptions): FastifyInstance {
  const https: SecureContextOptions & { requestCert: boolean; rejectUnauthorized: boolean } = {
    key: options.tls.keyPem,
    cert: options.tls.certPem,
    ca: [options.tls.caPem],
    requestCert: true,
    rejectUnauthorized: true,
    minVersion: 'TLSv1.2',
  };
  const app = buildHostApi(options, https);
  app.server.headersTimeout = RELAY_HEADERS_TIMEOUT_MS;
  app.addHook('onRequest', async (request, reply) => {
    const service = peerService(request.raw.socket as TLSSocket);
    if (service !== null && ROUTE_CALLERS.has(service)) return;
    const refusal = notAService(service);
    return reply
      .code(refusal.status)
      .type('application/problem+json')
      .send(JSON.stringify(refusal.toProblem()));
  });
  if (options.tls.tenantCertificates) {
    frontRelayConnections(app.server as unknown as tls.Server, {
      ownership: options.ownership,
      supervisor: options.supervisor,
      moves: options.moves,
      certificates: options.tls.tenantCertificates,
      helloTimeoutMs: RELAY_HEADERS_TIMEOUT_MS,
    });
  }
  const relay = new Relay(options);
  app.server.on('upgrade', (request: http.IncomingMessage, socket: Duplex, head: Buffer) =>
    relay.handle(request, socket as TLSSocket, head),
  );
  return app;
}

function peerService(socket: TLSSocket): string | null {
  const raw = socket.getPeerCertificate?.(false)?.raw;
  return raw ? serviceOf(raw) : null;
}

function notAService(service: string | null): RookeryError {
  return new RookeryError(
    'Forbidden',
    service === null
      ? "This port is for Rookery's services: present the gateway's (or a worker's) certificate, not a principal's"
      : `A ${service} certificate cannot use this route; it is for the gateway`,
  );
}

function refuse(socket: Duplex, problem: { status: number }, retryAfterSeconds: number | null): void {
  socket.end(rawProblemResponse(problem, http.STATUS_CODES[problem.status] ?? 'Error', retryAfterSeconds));
}

/** Carries relay upgrades: checks, ownership, wake, then a pipe to the tenant's socket. */
class Relay {
  private readonly tokenMatches: (given: unknown) => boolean;

  constructor(private readonly options: RelayServerOptions) {
    this.tokenMatches = internalTokenCheck(options.internalToken);
  }

  handle(request: http.IncomingMessage, socket: TLSSocket, head: Buffer): void {
    // Node removed its own error listener before handing the socket over: a reset must not end the host.
    socket.on('error', () => socket.destroy());
    this.open(request, socket, head).catch((error: unknown) => {
      if (socket.destroyed) return;
      const refusal =
        error instanceof RookeryError
          ? error
          : new RookeryError('InternalError', 'The host failed to relay; the request may be retried');
      if (!(error instanceof RookeryError)) this.options.logger.error({ err: error }, 'relay failed');
      const retryAfter = refusal.details.retryAfterSeconds;
      refuse(socket, refusal.toProblem(), typeof retryAfter === 'number' ? retryAfter : null);
    });
  }

  private async open(request: http.IncomingMessage, socket: TLSSocket, head: Buffer): Promise<void> {
    const tenantId = tenantOfRelayPath(request.url ?? '');
    if (
      request.method !== 'GET' ||
      tenantId === null ||
      request.headers.upgrade?.toLowerCase() !== RELAY_UPGRADE_PROTOCOL
    ) {
      throw new RookeryError(
        'InvalidRequest',
        `The relay port upgrades GET /tenants/{id}/relay with "Upgrade: ${RELAY_UPGRADE_PROTOCOL}" only (packages/protocol/src/relay.ts)`,
      );
    }
    if (!this.tokenMatches(request.headers[INTERNAL_TOKEN_HEADER])) {
      refuse(socket, INTERNAL_TOKEN_PROBLEM, null);
      return;
    }
    if (peerService(socket) !== 'gateway') throw notAService(peerService(socket));
    const asked = request.headers[PLACEMENT_EPOCH_HEADER];
    const believed = asked === undefined ? null : PlacementEpochHeaderSchema.safeParse(asked);
    if (believed && !believed.success) {
      throw new RookeryError('InvalidRequest', `${PLACEMENT_EPOCH_HEADER} is not a placement epoch`);
    }
    const { ownership, supervisor, moves } = this.options;
    const open = async () => {
      let epoch = await ownership.confirm(tenantId);
      // The gateway read a newer placement than the one this host confirmed a moment ago (it is cached for
      // up to a second): ask the store again rather than serve under an epoch that is no longer the tenant's.
      if (believed?.success && believed.data > epoch) {
        ownership.forget(tenantId);
        epoch = await ownership.confirm(tenantId);
      }
      const { socketPath } = await supervisor.wake(tenantId);
      return { epoch, socketPath };
    };
    // Through the tenant's door (tenant-moves.ts): held while a drain moves the tenant away, then 421.
    const { epoch, socketPath } = await (moves ? moves.admit(tenantId, open) : open());
    if (socket.destroyed) return;
    await this.pipe(socket, head, socketPath, epoch);
  }

  /** Connects to the tenant's socket, answers 101 and pipes both ways; refuses (503) if the socket does not answer. */
  private pipe(socket: TLSSocket, head: Buffer, socketPath: string, epoch: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const tenant = net.connect(socketPath);
      tenant.once('error', (error) =>
        reject(
          new RookeryError(
            'TenantUnavailable',
            `The tenant's process did not take the connection (${error.message}); retry in a moment`,
            { retryAfterSeconds: 1 },
          ),
        ),
      );
      tenant.once('connect', () => {
        tenant.removeAllListeners('error');
        socket.write(
          `HTTP/1.1 101 Switching Protocols\r\nconnection: Upgrade\r\nupgrade: ${RELAY_UPGRADE_PROTOCOL}\r\n${PLACEMENT_EPOCH_HEADER}: ${epoch}\r\n\r\n`,
        );
        if (head.length > 0) tenant.write(head);
        // pipe: each side pauses while the other's write buffer is full, so a slow reader on either end
        // holds a couple of high-water marks here, never a whole answer; an end passes through as an end.
        // Either side going away takes the other with it.
        for (const [side, other] of [
          [socket, tenant],
          [tenant, socket],
        ] as const) {
          side.on('error', () => other.destroy());
          side.once('close', () => other.destroy());
        }
        socket.pipe(tenant);
        tenant.pipe(socket);
        resolve();
      });
    });
  }
}
