// Streams one request to a tenant container's Unix socket and its answer back,
// both ways with backpressure: `pipeline` pauses the reading side whenever the
// writing side's buffer is full, so a slow client holds at most a couple of
// high-water marks of a large response in the gateway, never the whole body.
import http from 'node:http';
import { pipeline } from 'node:stream/promises';

/** Headers that describe one hop, not the message (RFC 9110 §7.6.1), plus our own internal ones. */
const HOP_BY_HOP = new Set([
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

/** One keep-alive agent per socket: connections to a tenant are reused across requests. */
export class TenantAgents {
  private readonly agents = new Map<string, http.Agent>();

  for(socketPath: string): http.Agent {
    let agent = this.agents.get(socketPath);
    if (!agent) {
      agent = new http.Agent({ keepAlive: true, maxSockets: 256 });
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

export async function proxyToTenant(
  request: http.IncomingMessage,
  response: http.ServerResponse,
  target: { socketPath: string; path: string; agent: http.Agent; requestId: string },
): Promise<ProxyOutcome> {
  const headers: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(request.headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || name.startsWith(INTERNAL_PREFIX)) continue;
    headers[name] = value;
  }
  headers.host = 'tenant';
  headers['x-request-id'] = target.requestId;

  let bytesIn = 0;
  let bytesOut = 0;
  const upstream = http.request({
    socketPath: target.socketPath,
    path: target.path,
    method: request.method,
    headers,
    agent: target.agent,
  });
  request.on('data', (chunk: Buffer) => {
    bytesIn += chunk.length;
  });
  const answered = new Promise<http.IncomingMessage>((resolve, reject) => {
    upstream.once('response', resolve);
    upstream.once('error', (error) => reject(new TenantUnreachable(error)));
  });
  // The body flows while the answer is awaited; a tenant may answer (413, 400) before reading it all.
  const sent = pipeline(request, upstream).catch(() => undefined);
  const answer = await answered;

  const workUnits = Number(answer.headers[WORK_UNITS_HEADER] ?? 0) || 0;
  const outHeaders: http.OutgoingHttpHeaders = {};
  for (const [name, value] of Object.entries(answer.headers)) {
    if (value === undefined || HOP_BY_HOP.has(name) || name.startsWith(INTERNAL_PREFIX)) continue;
    outHeaders[name] = value;
  }
  response.writeHead(answer.statusCode ?? 502, outHeaders);
  answer.on('data', (chunk: Buffer) => {
    bytesOut += chunk.length;
  });
  try {
    await pipeline(answer, response);
  } finally {
    await sent;
  }
  return { status: answer.statusCode ?? 502, bytesIn, bytesOut, workUnits };
}
