// The gateway's TLS listener for RavenDB's TCP protocol (ROOKERY_RAVEN_TCP_PORT): the same server
// certificate, the same CA for client certificates and the same TLS floor as the HTTPS port, one
// subscription worker per connection (connection.ts). Every connection is tracked from its first byte so
// that closing the gateway ends them all, whether still negotiating or carrying a subscription.
import { X509Certificate } from 'node:crypto';
import type { AddressInfo, Socket } from 'node:net';
import tls from 'node:tls';
import { type RavenTcpDeps, serveRavenTcp } from './connection.js';

export interface RavenTcpListener {
  port: number;
  /** The server certificate's DER as base64: what `/info/remote-task/tcp` names, which the client pins. */
  certificateBase64(): string;
  /** New handshakes get the new certificate (the HTTPS server's rotation). */
  setSecureContext(options: tls.SecureContextOptions & { certPem: string }): void;
  close(): Promise<void>;
}

export async function startRavenTcpListener(options: {
  host: string;
  port: number;
  tls: tls.TlsOptions & { cert: string };
  deps: RavenTcpDeps;
}): Promise<RavenTcpListener> {
  const { deps } = options;
  const sockets = new Set<Socket>();
  let certificate = derBase64(options.tls.cert);
  const server = tls.createServer(
    // A handshake that does not finish is cut like a negotiation that does not (slowloris).
    { ...options.tls, handshakeTimeout: deps.limits.negotiationTimeoutMs },
    (socket) => {
      socket.on('error', () => socket.destroy());
      socket.setKeepAlive(true, 30_000);
      socket.setNoDelay(true);
      void serveRavenTcp(socket, deps);
    },
  );
  server.on('connection', (socket: Socket) => {
    sockets.add(socket);
    socket.once('close', () => sockets.delete(socket));
    // A connection reset mid-handshake must not take the gateway down.
    socket.on('error', () => socket.destroy());
  });
  // A client whose certificate the CA did not issue (or none) fails here; the TLS alert is its answer.
  server.on('tlsClientError', (error, socket) => {
    deps.log.debug({ err: error }, 'RavenDB TCP handshake refused');
    socket.destroy();
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => resolve());
  });
  const port = (server.address() as AddressInfo).port;
  deps.log.info({ port }, 'RavenDB TCP listener listening');
  return {
    port,
    certificateBase64: () => certificate,
    setSecureContext(context) {
      server.setSecureContext(context);
      certificate = derBase64(context.certPem);
    },
    async close() {
      const closed = new Promise<void>((resolve) => server.close(() => resolve()));
      for (const socket of sockets) socket.destroy();
      await closed;
    },
  };
}

function derBase64(pem: string): string {
  return new X509Certificate(pem).raw.toString('base64');
}
