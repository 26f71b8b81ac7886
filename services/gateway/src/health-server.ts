// The load balancer's health check, on a port of its own (ROOKERY_GATEWAY_HEALTH_PORT). The HTTPS port
// asks every client for a certificate, so a load balancer could only check that it accepts TCP; here it
// asks plain HTTP `GET /healthz` and learns more: 200 while the gateway serves, 503 GatewayStopping from the
// moment it begins to shut down, so that no new connection is sent to a gateway that is about to close.
// Nothing else is served on this port: no API, no tenant data, nothing that needs a certificate.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { gatewayError, sendProblem } from './refusal.js';

/** A health check's request is a line and a few headers: anything larger is not one. */
const MAX_HEADER_BYTES = 4096;
/** A load balancer's check has a few seconds; a connection that sends nothing is not one. */
const REQUEST_TIMEOUT_MS = 5_000;

export interface HealthServer {
  /** http://host:port */
  url: string;
  close(): Promise<void>;
}

export async function startHealthServer(options: {
  host: string;
  port: number;
  /** False from the moment the gateway begins to shut down. */
  serving: () => boolean;
}): Promise<HealthServer> {
  const server = http.createServer({ maxHeaderSize: MAX_HEADER_BYTES }, (request, response) => {
    // The checker never sends a body; one that does gets its answer and the connection closes.
    response.shouldKeepAlive = false;
    const path = (request.url ?? '').split('?')[0];
    if (path !== '/healthz') {
      sendProblem(
        response,
        gatewayError(
          'RouteNotFound',
          'The health port serves only GET /healthz; the API is on the gateway HTTPS port (ROOKERY_GATEWAY_PORT).',
        ),
      );
    } else if (request.method !== 'GET' && request.method !== 'HEAD') {
      response.setHeader('allow', 'GET, HEAD');
      sendProblem(response, gatewayError('MethodNotAllowed', 'The health check is GET /healthz (or HEAD).'));
    } else if (!options.serving()) {
      sendProblem(
        response,
        gatewayError(
          'GatewayStopping',
          'This gateway is shutting down: the load balancer sends new connections to the other gateways.',
        ),
      );
    } else {
      response.writeHead(200, { 'content-type': 'application/json' }).end('{"status":"ok"}');
    }
    request.resume();
  });
  server.headersTimeout = REQUEST_TIMEOUT_MS;
  server.requestTimeout = REQUEST_TIMEOUT_MS;
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port, options.host, () => {
      server.off('error', reject);
      resolve();
    });
  });
  const { port } = server.address() as AddressInfo;
  const host = options.host.includes(':') ? `[${options.host}]` : options.host;
  return {
    url: `http://${host}:${port}`,
    close: () =>
      new Promise<void>((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
