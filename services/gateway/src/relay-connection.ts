// One connection from the gateway to a tenant through its fleet host's relay (the contract:
// packages/protocol/src/relay.ts): mutual TLS to the host's relay port with the gateway's service
// certificate, then the `rookery-relay` upgrade. Once the host answers 101 the TLS socket carries the
// tenant's HTTP/1.1 byte for byte and goes to the pool (tenant-pool.ts) like a Unix socket would. Any
// other answer, or no answer, rejects — and nothing of a client's request was sent on it.
import https from 'node:https';
import type { Duplex } from 'node:stream';
import {
  INTERNAL_TOKEN_HEADER,
  PLACEMENT_EPOCH_HEADER,
  type Problem,
  ProblemSchema,
  RELAY_UPGRADE_PROTOCOL,
  relayPath,
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

/** Opens a relay to `tenantId` at the host `address` (https://host:port), believing in placement `epoch`. */
export function openRelay(
  address: string,
  tenantId: string,
  epoch: number,
  credentials: RelayCredentials,
): Promise<Duplex> {
  const url = new URL(address);
  return new Promise((resolve, reject) => {
    const request = https.request({
      host: url.hostname.replace(/^\[|\]$/g, ''),
      port: url.port || 443,
      path: relayPath(tenantId),
      method: 'GET',
      ca: credentials.caPem,
      cert: credentials.certPem,
      key: credentials.keyPem,
      minVersion: 'TLSv1.2',
      // A connection of its own, handed to the pool after the handshake: never an agent's.
      agent: false,
      headers: {
        connection: 'Upgrade',
        upgrade: RELAY_UPGRADE_PROTOCOL,
        [INTERNAL_TOKEN_HEADER]: credentials.internalToken,
        [PLACEMENT_EPOCH_HEADER]: String(epoch),
      },
    });
    let settled = false;
    request.setTimeout(credentials.handshakeTimeoutMs, () =>
      request.destroy(
        new Error(`no answer to the relay request within ${credentials.handshakeTimeoutMs} ms`),
      ),
    );
    request.on('error', (error) => {
      if (settled) return;
      settled = true;
      reject(new HostUnreachable(address, error));
    });
    request.on('upgrade', (_answer, socket: Duplex & { setTimeout(ms: number): void }, head: Buffer) => {
      settled = true;
      socket.setTimeout(0);
      // Bytes the tenant sent right behind the 101 belong to the first exchange: read again by the pool.
      if (head.length > 0) socket.unshift(head);
      resolve(socket);
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
        settled = true;
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
