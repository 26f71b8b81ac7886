// Streams one request to a tenant container's Unix socket and its answer back,
// both ways with backpressure: the request body is piped (paused while the
// tenant's socket is full), and the answer is paused whenever the client's
// socket is, until it drains, so a slow client holds at most a couple of
// high-water marks of a large response in the gateway, never the whole body.
//
// The hot path of every request, so it does as little as it can (measured
// under the gateway benchmark, see docs/benchmarks.md): headers go through as
// raw name/value lists (no header objects built and validated twice), a body
// is only streamed when the request has one, and no stream/promises pipeline
// (it costs an AbortSignal and its listeners per stream).
import http from 'node:http';

/** Headers that describe one hop, not the message (RFC 9110 §7.6.1), plus ones the gateway sets itself. */
const NOT_FORWARDED = new Set([
  'connection',
  'keep-alive',
  'proxy-authenticate',
  'proxy-authorization',
  'proxy-connection',
  'te',
  'trailer',
  'transfer-encoding',
  'upgrade',
  'host',
  'x-request-id',
]);
const INTERNAL_PREFIX = 'x-rookery-';
export const WORK_UNITS_HEADER = 'x-rookery-work-units';

export interface ProxyOutcome {
  status: number;
  bytesIn: number;
  bytesOut: number;
  workUnits: number;
}

export class TenantUnreachable extends Error {
  constructor(cause: Error) {
    super(`the tenant container did not answer: ${cause.message}`, { cause });
  }
}

/**
 * Most connections the gateway opens to one tenant for requests; one more waits for one of them. A streamed
 * answer holds its connection while it lasts, hence the stream limit below this (live-limits.ts).
 */
export const TENANT_AGENT_MAX_SOCKETS = 256;

/** One keep-alive agent per socket: connections to a tenant are reused across requests. */
export class TenantAgents {
  private readonly agents = new Map<string, http.Agent>();

  for(socketPath: string): http.Agent {
    let agent = this.agents.get(socketPath);
    if (!agent) {
      agent = new http.Agent({ keepAlive: true, maxSockets: TENANT_AGENT_MAX_SOCKETS });
      this.agents.set(socketPath, agent);
    }
    return agent;
  }

  /** Drops the pooled connections of a tenant that stopped. */
  forget(socketPath: string): void {
    this.agents.get(socketPath)?.destroy();
    this.agents.delete(socketPath);
  }

  close(): void {
    for (const agent of this.agents.values()) agent.destroy();
    this.agents.clear();
  }
}

/** The raw name/value list minus what is not forwarded; `onInternal` sees the internal headers dropped. */
export function forwarded(raw: string[], onInternal?: (name: string, value: string) => void): string[] {
  const kept: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (name.startsWith(INTERNAL_PREFIX)) onInternal?.(name, raw[i + 1]!);
    else if (!NOT_FORWARDED.has(name)) kept.push(raw[i]!, raw[i + 1]!);
  }
  return kept;
}

/** A request has a body when it says so (RFC 9112 §6.3); GETs, most of the traffic, stream nothing. */
function hasBody(request: http.IncomingMessage): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

export function proxyToTenant(
  request: http.IncomingMessage,
  response: http.ServerResponse,
  target: { socketPath: string; path: string; agent: http.Agent; requestId: string },
): Promise<ProxyOutcome> {
  const headers = forwarded(request.rawHeaders);
  headers.push('host', 'tenant', 'x-request-id', target.requestId);
  const outcome: ProxyOutcome = { status: 502, bytesIn: 0, bytesOut: 0, workUnits: 0 };

  return new Promise((resolve, reject) => {
    const upstream = http.request({
      socketPath: target.socketPath,
      path: target.path,
      method: request.method,
      headers,
      agent: target.agent,
    });
    let answering = false;
    // The client went away before its answer was all sent: stop the tenant's side too.
    const onClientClose = () => {
      if (!response.writableFinished) upstream.destroy();
    };
    response.once('close', onClientClose);
    // `on`, not `once`: only the first error settles the promise, but a late one (the body still being
    // piped after an early answer) must never find no listener, which would take the gateway down.
    upstream.on('error', (error) => {
      response.off('close', onClientClose);
      // Nothing answered and the client still there: the tenant is gone (stopped, crashed).
      reject(answering || response.destroyed ? error : new TenantUnreachable(error));
    });
    upstream.once('response', (answer) => {
      answering = true;
      outcome.status = answer.statusCode ?? 502;
      const outHeaders = forwarded(answer.rawHeaders, (name, value) => {
        if (name === WORK_UNITS_HEADER) outcome.workUnits = Number(value) || 0;
      });
      response.writeHead(outcome.status, outHeaders);
      const resume = () => answer.resume();
      response.on('drain', resume);
      answer.on('data', (chunk: Buffer) => {
        outcome.bytesOut += chunk.length;
        if (!response.write(chunk)) answer.pause();
      });
      const settle = () => {
        response.off('drain', resume);
        response.off('close', onClientClose);
      };
      answer.once('end', () => {
        settle();
        // A streamed answer's header could only count the request side: its whole work follows as a
        // trailer (docs/live-data.md), read here and never forwarded.
        if (answer.rawTrailers.length > 0) {
          const total = Number(answer.trailers[WORK_UNITS_HEADER]);
          if (Number.isFinite(total) && total > 0) outcome.workUnits = total;
        }
        response.end();
        resolve(outcome);
      });
      // The tenant's connection broke mid-answer (or the client left and we cut it): the caller ends the response.
      answer.on('error', (error) => {
        settle();
        reject(error);
      });
    });
    if (hasBody(request)) {
      request.on('data', (chunk: Buffer) => {
        outcome.bytesIn += chunk.length;
      });
      request.pipe(upstream);
    } else upstream.end();
  });
}
