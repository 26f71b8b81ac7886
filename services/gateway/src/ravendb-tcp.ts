import { gatewayError } from './refusal.js';

/** Where RavenDB's subscription worker asks for the TCP endpoint it speaks its protocol on. */
export const RAVEN_TCP_INFO = '/info/remote-task/tcp';

/**
 * Rookery does not serve RavenDB's TCP protocol (docs/ravendb-compatibility.md says what it would take): the
 * worker is told so at once, as SubscriptionInvalidStateException (RavenTcpNotSupported), on which it stops
 * instead of retrying for ever, with the WebSocket that serves the same subscription. `url` is the request's
 * path and query: `?database=…&remote-task=<subscription>&tag=…`.
 */
export function ravenTcpNotSupported(url: string) {
  const query = new URLSearchParams(url.split('?', 2)[1] ?? '');
  const database = query.get('database') ?? '{db}';
  const subscription = query.get('remote-task') ?? '{name}';
  return gatewayError(
    'RavenTcpNotSupported',
    `Rookery does not speak RavenDB's TCP protocol, which this client's subscription worker needs. Consume the subscription over Rookery's WebSocket instead: GET /databases/${database}/subscriptions/${subscription}/connect (docs/live-data.md), e.g. with @rookery/client`,
  );
}
