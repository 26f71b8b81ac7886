// Real TLS endpoints for the tests: a server that demands a client certificate from our CA
// and answers each connection with the identity it read, and a client that reports either
// what it received or why it failed.
import { once } from 'node:events';
import type { AddressInfo } from 'node:net';
import * as tls from 'node:tls';
import { identityOf } from '../identity.js';

export interface TestServer {
  port: number;
  /** Handshake failures the server saw (client refused). */
  clientErrors: Error[];
  /** Connections that completed the handshake and reached the handler. */
  accepted(): number;
  close(): Promise<void>;
}

export async function startMutualTlsServer(options: {
  certPem: string;
  keyPem: string;
  caPem: string;
  host?: string;
}): Promise<TestServer> {
  const clientErrors: Error[] = [];
  let accepted = 0;
  const server = tls.createServer(
    {
      cert: options.certPem,
      key: options.keyPem,
      ca: [options.caPem],
      requestCert: true,
      rejectUnauthorized: true,
    },
    (socket) => {
      accepted++;
      let body: unknown;
      try {
        body = identityOf(socket.getPeerCertificate().raw);
      } catch (error) {
        body = { error: (error as { code?: string }).code ?? String(error) };
      }
      socket.end(JSON.stringify(body));
    },
  );
  server.on('tlsClientError', (error) => clientErrors.push(error));
  server.listen(0, options.host ?? '127.0.0.1');
  await once(server, 'listening');
  const sockets = new Set<tls.TLSSocket>();
  server.on('secureConnection', (socket) => {
    sockets.add(socket);
    socket.on('close', () => sockets.delete(socket));
  });
  return {
    port: (server.address() as AddressInfo).port,
    clientErrors,
    accepted: () => accepted,
    async close() {
      for (const socket of sockets) socket.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}

export interface ConnectResult {
  /** Everything the server sent, if the connection got that far. */
  data: string;
  /** The error that ended the connection, if any. */
  error: (Error & { code?: string }) | null;
  /** Whether the TLS handshake completed from the client's point of view. */
  secure: boolean;
}

export function connect(options: tls.ConnectionOptions): Promise<ConnectResult> {
  return new Promise((resolve) => {
    let data = '';
    let error: Error | null = null;
    let secure = false;
    const socket = tls.connect(options, () => {
      secure = true;
    });
    socket.setEncoding('utf8');
    socket.on('data', (chunk: string) => {
      data += chunk;
    });
    socket.on('error', (err) => {
      error = err;
    });
    socket.on('close', () => resolve({ data, error, secure }));
  });
}
