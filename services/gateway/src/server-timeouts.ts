// The gateway's HTTPS server timeouts, set explicitly rather than left to Node's defaults, because the
// gateway carries answers that last as long as their reader takes (NDJSON streams, exports) and
// WebSockets that last for days. What each one bounds, and why none of them cuts a slow reader:
// - headersTimeout: receiving a request's headers. Over once the headers are in.
// - requestTimeout: receiving the whole request, headers and body. Over once the request is in: the
//   answer, however long it streams, is not bounded by it (Node checks only requests still being
//   received, and stops checking a connection once it is upgraded). It does bound a slow upload.
// - keepAliveTimeout: an idle kept-alive connection between two requests. Never during an answer.
// - timeout (socket inactivity): always 0. A reader that is slow but alive can leave the socket without
//   a byte moving for as long as its window stays full; an inactivity timeout would cut exactly that
//   reader. A reader that is gone is found by the socket closing (the proxy then destroys the tenant's
//   side at once), and a WebSocket's peer by the tenant's pings (every 5 s, docs/live-data.md).
// The tenant side has no timeout either: the keep-alive agent to the tenant sets none, and an upgrade
// travels on a connection of its own.
import type http from 'node:http';

export interface ServerTimeouts {
  headersTimeoutMs: number;
  requestTimeoutMs: number;
  keepAliveTimeoutMs: number;
}

export const DEFAULT_SERVER_TIMEOUTS: ServerTimeouts = {
  // Node's defaults for the first two, written down; 65 s outlasts the 60 s idle timeout of common load
  // balancers, so they close idle connections before the gateway does and never race its close.
  headersTimeoutMs: 60_000,
  requestTimeoutMs: 300_000,
  keepAliveTimeoutMs: 65_000,
};

export function applyServerTimeouts(server: http.Server, timeouts: ServerTimeouts): void {
  server.headersTimeout = timeouts.headersTimeoutMs;
  server.requestTimeout = timeouts.requestTimeoutMs;
  server.keepAliveTimeout = timeouts.keepAliveTimeoutMs;
  server.timeout = 0;
}
