// `GET /info/remote-task/tcp`: where RavenDB's subscription worker connects to speak its TCP protocol (the
// gateway's RavenDB TCP listener, ravendb-tcp/), asked over HTTPS with the worker's certificate first.
import type http from 'node:http';
import { isIP } from 'node:net';
import type { Principal } from '@rookery/control-store';
import type { Admission } from './admission.js';
import { gatewayError } from './refusal.js';
import { classifyTenantRoute } from './route-access.js';

/** Where RavenDB's subscription worker asks for the TCP endpoint it speaks its protocol on. */
export const RAVEN_TCP_INFO = '/info/remote-task/tcp';

export interface RavenTcpEndpoint {
  port: number;
  certificateBase64(): string;
}

/**
 * The client's TcpConnectionInfo: `Url` (the listener, on the host name the client reached the gateway by:
 * only its host and port are read), `Certificate` (the server certificate's DER, which the client pins byte
 * for byte on its TLS connection) and `NodeTag` null (the client would look the tag up in its topology,
 * which Rookery does not serve). Admitted like a request on the database's subscriptions: its
 * authorisation, the tenant's rate. `url` is the request's path and query:
 * `?database=…&remote-task=<subscription>&tag=…`.
 */
export async function serveRavenTcpInfo(
  request: http.IncomingMessage,
  response: http.ServerResponse,
  principal: Principal,
  admission: Admission,
  endpoint: RavenTcpEndpoint | null,
): Promise<void> {
  const url = request.url ?? RAVEN_TCP_INFO;
  const query = new URLSearchParams(url.split('?', 2)[1] ?? '');
  const database = query.get('database');
  if (!database) throw gatewayError('InvalidRequest', `${RAVEN_TCP_INFO} takes ?database=<name>.`);
  if (!endpoint) throw ravenTcpNotSupported(database, query.get('remote-task') ?? '{name}');
  const route = classifyTenantRoute('GET', `/databases/${encodeURIComponent(database)}/subscriptions`);
  if (!route) throw gatewayError('InvalidRequest', `There is no database ${database}.`);
  await admission.admit(principal, route);
  const host = hostOf(request);
  if (isIP(host.slice(1, -1)) === 6) throw ipv6HostUnusable(host);
  response.writeHead(200, { 'content-type': 'application/json' });
  response.end(
    JSON.stringify({
      Url: `tcp://${host}:${endpoint.port}`,
      Certificate: endpoint.certificateBase64(),
      NodeTag: null,
    }),
  );
}

/** The host name the client used for HTTPS (it resolves, and the server certificate names it). */
function hostOf(request: http.IncomingMessage): string {
  try {
    return new URL(`https://${request.headers.host ?? 'localhost'}`).hostname || 'localhost';
  } catch {
    return 'localhost';
  }
}

/**
 * The client reached the gateway by an IPv6 address. No `tcp://` URL can give it back usably: the client
 * reads `new URL(Url).hostname`, which keeps the brackets (`[::1]`), and hands that to tls.connect, which
 * looks it up as a DNS name and fails (ENOTFOUND), then retries for ever. Refused with the code that stops
 * the worker (SubscriptionInvalidStateException) and says to use a host name instead.
 */
function ipv6HostUnusable(host: string) {
  return gatewayError(
    'RavenTcpNotSupported',
    `The official client's subscription worker cannot connect to an IPv6 address (${host}): it passes the address to tls.connect with its brackets, which fails. Reach the gateway by a host name that resolves to it (its DNS name, or localhost) or an IPv4 address, e.g. new DocumentStore('https://localhost:8443', …).`,
  );
}

/**
 * The gateway runs without its RavenDB TCP listener (ROOKERY_RAVEN_TCP_PORT=off): the worker is told so at
 * once, as SubscriptionInvalidStateException (RavenTcpNotSupported), on which it stops instead of retrying
 * for ever, with the WebSocket that serves the same subscription.
 */
function ravenTcpNotSupported(database: string, subscription: string) {
  return gatewayError(
    'RavenTcpNotSupported',
    `This gateway does not serve RavenDB's TCP protocol (ROOKERY_RAVEN_TCP_PORT is off), which this client's subscription worker needs. Consume the subscription over Rookery's WebSocket instead: GET /databases/${database}/subscriptions/${subscription}/connect (docs/live-data.md), e.g. with @rookery/client`,
  );
}
