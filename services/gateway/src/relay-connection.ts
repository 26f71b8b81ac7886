// One connection from the gateway to a tenant through its fleet host's relay (the contract:
// packages/protocol/src/relay.ts): mutual TLS to the host's relay port with the gateway's service
// certificate, then either the tenant's process ends TLS (the host handed the connection over) or the host
// does and the `rookery-relay` upgrade follows. Once the tenant's certificate is shown or the host answers
// 101, the TLS socket carries the tenant's HTTP/1.1 and goes to the pool (tenant-pool.ts) like a Unix
// socket would. Any other answer, or no answer, rejects — and nothing of a client's request was sent on it.
import http from 'node:http';
import type { Duplex } from 'node:stream';
import tls from 'node:tls';
import { serviceOf } from '@rookery/pki';
import {
  INTERNAL_TOKEN_HEADER,
  PLACEMENT_EPOCH_HEADER,
  type Problem,
  ProblemSchema,
  RELAY_UPGRADE_PROTOCOL,
  relayAlpn,
  relayPath,
  relayServerName,
} from '@rookery/protocol';

/** What the gateway proves itself with to every host, and how long it waits for a relay's answer. */
export interface RelayCredentials {
  /** The gateway's service certificate (server-certificate.ts, ensureRelayClientCertificate). */
  certPem: string;
  keyPem: string;
  /** Rookery's CA: a host's relay certificate must chain to it. */
  caPem: string;
  internalToken: string;
  /**
   * From connecting until the host's answer: it wakes the tenant first, within its start deadline
   * (ROOKERY_START_DEADLINE_MS, 2 s by default), so this must be longer.
   */
  handshakeTimeoutMs: number;
}

/** The host answered the relay request with something other than 101: its problem, as it sent it. */
export class RelayRefused extends Error {
  constructor(
    readonly address: string,
    readonly status: number,
    /** The host's problem+json (a 421 is HostTenantNotHereAnswerSchema), or null when it sent none. */
    readonly problem: Problem | null,
    readonly retryAfterSeconds: number | null,
  ) {
    super(
      `the host at ${address} refused the relay: ${status}${problem ? ` ${problem.code}: ${problem.detail}` : ''}`,
    );
  }
}

/** No answer from the host at all: connection refused, TLS failed, or the answer did not come in time. */
export class HostUnreachable extends Error {
  constructor(
    readonly address: string,
    cause: Error,
  ) {
    super(`the host at ${address} cannot be reached: ${cause.message}`, { cause });
  }
}

/** Longest refusal body read: a problem+json is a few hundred bytes. */
const MAX_REFUSAL_BYTES = 64 * 1024;

/**
 * Opens a relay to `tenantId` at the host `address` (https://host:port), believing in placement `epoch`.
 * The ClientHello names the tenant (server name) and the epoch (ALPN), so that a host owning and running
 * the tenant hands the connection to the tenant's process (docs/scale-out.md, "The hand-off"): the
 * certificate shown is then the tenant's own, and the connection is ready as it is. Shown the host's,
 * the host kept it: the upgrade request follows, as before hand-offs existed.
 */
export function openRelay(
  address: string,
  tenantId: string,
  epoch: number,
  credentials: RelayCredentials,
): Promise<Duplex> {
  const url = new URL(address);
  const host = url.hostname.replace(/^\[|\]$/g, '');
  const serverName = relayServerName(tenantId);
  return new Promise((resolve, reject) => {
    let settled = false;
    const fail = (error: Error) => {
      if (settled) return;
      settled = true;
      reject(error);
      socket.destroy();
    };
    const socket = tls.connect({
      host,
      port: Number(url.port || 443),
      servername: serverName,
      // http/1.1 too: the host's HTTPS server, which ends TLS when it keeps the connection, selects it.
      ALPNProtocols: [relayAlpn(epoch), 'http/1.1'],
      ca: credentials.caPem,
      cert: credentials.certPem,
      key: credentials.keyPem,
      minVersion: 'TLSv1.2',
      // The tenant's certificate names its relay server name; the host's names the host (and says so).
      checkServerIdentity: (_name, certificate) =>
        tls.checkServerIdentity(serverName, certificate) &&
        (serviceOf(certificate.raw) === 'host'
          ? tls.checkServerIdentity(host, certificate)
          : new Error(`neither ${serverName} nor a host's relay certificate`)),
    });
    socket.setTimeout(credentials.handshakeTimeoutMs, () =>
      fail(
        new HostUnreachable(
          address,
          new Error(`no answer to the relay request within ${credentials.handshakeTimeoutMs} ms`),
        ),
      ),
    );
    socket.on('error', (error) => fail(new HostUnreachable(address, error)));
    socket.once('secureConnect', () => {
      if (serviceOf(socket.getPeerCertificate(false).raw) === 'host') {
        upgrade(socket, address, tenantId, epoch, credentials.internalToken).then((upgraded) => {
          if (settled) return;
          settled = true;
          socket.setTimeout(0);
          resolve(upgraded);
        }, fail);
        return;
      }
      settled = true;
      socket.setTimeout(0);
      socket.removeAllListeners('error'); // the pool's from here on
      resolve(socket);
    });
  });
}

/** The relay upgrade over a TLS connection the host ended itself: 101 → the connection, else RelayRefused. */
function upgrade(
  socket: tls.TLSSocket,
  address: string,
  tenantId: string,
  epoch: number,
  internalToken: string,
): Promise<Duplex> {
  return new Promise((resolve, reject) => {
    const request = http.request({
      createConnection: () => socket,
      path: relayPath(tenantId),
      method: 'GET',
      headers: {
        host: new URL(address).host,
        connection: 'Upgrade',
        upgrade: RELAY_UPGRADE_PROTOCOL,
        [INTERNAL_TOKEN_HEADER]: internalToken,
        [PLACEMENT_EPOCH_HEADER]: String(epoch),
      },
    });
    request.on('error', (error) => reject(new HostUnreachable(address, error)));
    request.on('upgrade', (_answer, upgraded: Duplex, head: Buffer) => {
      // Bytes the tenant sent right behind the 101 belong to the first exchange: read again by the pool.
      if (head.length > 0) upgraded.unshift(head);
      resolve(upgraded);
    });
    request.on('response', (answer) => {
      const chunks: Buffer[] = [];
      let size = 0;
      answer.on('data', (chunk: Buffer) => {
        size += chunk.length;
        if (size <= MAX_REFUSAL_BYTES) chunks.push(chunk);
      });
      answer.on('error', (error) => request.destroy(error));
      answer.on('end', () => {
        let problem: Problem | null = null;
        try {
          const parsed = ProblemSchema.safeParse(JSON.parse(Buffer.concat(chunks).toString('utf8')));
          if (parsed.success) problem = parsed.data;
        } catch {
          // not JSON: a host off the contract, told by its status alone
        }
        const retryAfter = Number(answer.headers['retry-after']);
        reject(
          new RelayRefused(
            address,
            answer.statusCode ?? 502,
            problem,
            Number.isFinite(retryAfter) ? retryAfter : null,
          ),
        );
      });
    });
    request.end();
  });
}
