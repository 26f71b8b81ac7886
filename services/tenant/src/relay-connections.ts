// Relay connections handed to this process by its fleet host (docs/scale-out.md, "The hand-off";
// services/host/src/relay-handoff.ts): a gateway's TCP connection whose ClientHello the host read and
// found to be for this tenant, which it owns and runs. Here TLS ends — with the tenant's own short-lived
// certificate, the host's message carries it — and the connection becomes one of the HTTP server's, as
// if it had come in on the Unix socket. Mutual TLS as on the host's relay port: the peer must present a
// certificate of Rookery's CA naming the gateway service (a principal's certificate of the same CA, or a
// worker's, is refused), else the connection is closed before an HTTP byte is read.
import type http from 'node:http';
import net from 'node:net';
import tls from 'node:tls';
import { serviceOf } from '@rookery/pki';
import { RelayHandOffMessageSchema, type RelayTenantTls } from '@rookery/protocol';
import type { FastifyBaseLogger } from 'fastify';

/** The TLS handshake of a handed connection must end within this long (the host's hello wait is the same). */
export const HANDOFF_HANDSHAKE_TIMEOUT_MS = 10_000;

export class RelayConnections {
  /** Ends TLS for handed sockets; never listens. Null until the host sent the material. */
  private tlsServer: tls.Server | null = null;
  private serial: string | null = null;

  constructor(
    private readonly http: http.Server,
    private readonly log: FastifyBaseLogger,
  ) {}

  /** An IPC message from the host: a handed connection (true), or not this kind of message (false). */
  receive(raw: unknown, handle: unknown): boolean {
    const parsed = RelayHandOffMessageSchema.safeParse(raw);
    if (!parsed.success) return false;
    if (!(handle instanceof net.Socket)) return true; // the socket did not survive the passage
    if (parsed.data.tls) this.use(parsed.data.tls);
    if (!this.tlsServer) {
      // A host sends the material with its first connection to a process: without it, nothing to answer with.
      this.log.warn('a relay connection came without TLS material; closed');
      handle.destroy();
      return true;
    }
    handle.unshift(Buffer.from(parsed.data.hello, 'base64'));
    this.tlsServer.emit('connection', handle);
    return true;
  }

  private use(material: RelayTenantTls): void {
    if (material.serial === this.serial) return;
    const options = {
      key: material.keyPem,
      cert: material.certPem,
      ca: [material.caPem],
      requestCert: true,
      rejectUnauthorized: true,
      minVersion: 'TLSv1.2' as const,
    };
    this.serial = material.serial;
    if (this.tlsServer) {
      this.tlsServer.setSecureContext(options); // connections already open keep theirs
      return;
    }
    this.tlsServer = tls.createServer({ ...options, handshakeTimeout: HANDOFF_HANDSHAKE_TIMEOUT_MS });
    this.tlsServer.on('secureConnection', (secure) => {
      const raw = secure.getPeerCertificate(false)?.raw;
      if (!raw || serviceOf(raw) !== 'gateway') {
        secure.destroy();
        return;
      }
      this.http.emit('connection', secure);
    });
    // A failed handshake (another CA, no certificate, not TLS): the socket is destroyed by the TLS server.
    this.tlsServer.on('tlsClientError', () => {});
  }
}
