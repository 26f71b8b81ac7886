// Streams one request to a tenant container's Unix socket and its answer back,
// both ways with backpressure: the request body is written as it arrives
// (paused while the tenant's socket is full), and reading the answer pauses
// whenever the client's socket is full, until it drains, so a slow client holds
// at most a couple of high-water marks of a large response in the gateway,
// never the whole body.
//
// The hot path of every request, so it does as little as it can (measured
// under the gateway benchmark, see docs/benchmarks.md): the request goes out as
// one written head over a pooled connection (tenant-pool.ts) and the answer is
// read by a parser of our own (tenant-response-parser.ts), not through Node's
// HTTP client; headers go through as raw name/value lists, and a body is only
// streamed when the request has one.
import type http from 'node:http';
import { INTERNAL_HEADER_PREFIX, WORK_UNITS_HEADER } from '@rookery/protocol';
import { readBody } from './request-body.js';
import type { TenantConnection, TenantPool } from './tenant-pool.js';

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
  // Node's server already answered it (100 Continue) on the client's connection.
  'expect',
  'host',
  'x-request-id',
]);

export interface ProxyOutcome {
  status: number;
  bytesIn: number;
  bytesOut: number;
  workUnits: number;
}

export class TenantUnreachable extends Error {
  constructor(
    cause: Error,
    /**
     * False when no connection to the tenant could be made (a relay's handshake refused or failed): then
     * nothing of the request left the gateway, and it may go elsewhere whatever its method.
     */
    readonly connected = true,
  ) {
    super(`the tenant container did not answer: ${cause.message}`, { cause });
  }
}

/** The raw name/value list minus what is not forwarded; `onInternal` sees the internal headers dropped. */
export function forwarded(raw: string[], onInternal?: (name: string, value: string) => void): string[] {
  const kept: string[] = [];
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (name.startsWith(INTERNAL_HEADER_PREFIX)) onInternal?.(name, raw[i + 1]!);
    else if (!NOT_FORWARDED.has(name)) kept.push(raw[i]!, raw[i + 1]!);
  }
  return kept;
}

const UNSAFE_TARGET = /[\s\0]/;

/** Methods a request may be sent again with (RFC 9110 §9.2.2) when it has no body. */
const IDEMPOTENT = new Set(['GET', 'HEAD', 'OPTIONS', 'DELETE']);
/**
 * A PUT or DELETE whose body is at most this many bytes is read whole before it is sent, so that it can go
 * again on a new connection when a kept-alive one turns out closed (below). Most document writes are
 * smaller; a larger body streams as before and is never repeated.
 */
export const REPLAYABLE_BODY_BYTES = 64 * 1024;
const REPLAYABLE_WITH_BODY = new Set(['PUT', 'DELETE']);

/** The body's bytes when the request is a small PUT/DELETE with a Content-Length; null otherwise. */
function replayableLength(request: http.IncomingMessage, method: string): number | null {
  if (!REPLAYABLE_WITH_BODY.has(method) || request.headers['transfer-encoding'] !== undefined) return null;
  const length = Number(request.headers['content-length']);
  return Number.isInteger(length) && length > 0 && length <= REPLAYABLE_BODY_BYTES ? length : null;
}

/** Small bodies read whole, by request. */
const heldBodies = new WeakMap<http.IncomingMessage, Promise<Buffer>>();

/** A request has a body when it says so (RFC 9112 §6.3); GETs, most of the traffic, stream nothing. */
function hasBody(request: http.IncomingMessage): boolean {
  const length = request.headers['content-length'];
  return request.headers['transfer-encoding'] !== undefined || (length !== undefined && length !== '0');
}

/**
 * The request's head for the tenant. Method, target and header fields are the ones Node's server parsed
 * (it refuses CR, LF and other bytes that could end a line early), written back as the bytes they were
 * read as (latin1). A body of unknown length goes on in chunked coding.
 */
function requestHead(
  request: http.IncomingMessage,
  path: string,
  requestId: string,
  chunked: boolean,
  internalHeaders: readonly string[],
): string {
  // The target comes from the raw request line (route-access.ts never decodes it); a caller that passed a
  // decoded one must not be able to end our request line early.
  if (UNSAFE_TARGET.test(path))
    throw new Error(`refusing to forward the request target ${JSON.stringify(path)}`);
  let head = `${request.method} ${path} HTTP/1.1\r\nhost: tenant\r\nx-request-id: ${requestId}\r\n`;
  const raw = request.rawHeaders;
  for (let i = 0; i < raw.length; i += 2) {
    const name = raw[i]!.toLowerCase();
    if (!name.startsWith(INTERNAL_HEADER_PREFIX) && !NOT_FORWARDED.has(name))
      head += `${raw[i]}: ${raw[i + 1]}\r\n`;
  }
  // After the client's fields, which never include ours (dropped above): the tenant reads only these.
  for (let i = 0; i < internalHeaders.length; i += 2)
    head += `${internalHeaders[i]}: ${internalHeaders[i + 1]}\r\n`;
  return `${head}${chunked ? 'transfer-encoding: chunked\r\n' : ''}\r\n`;
}

export function proxyToTenant(
  request: http.IncomingMessage,
  response: http.ServerResponse,
  target: {
    path: string;
    pool: TenantPool;
    requestId: string;
    /** Name/value list of the gateway's own `x-rookery-…` fields for the tenant (values of our making only). */
    internalHeaders?: readonly string[];
  },
): Promise<ProxyOutcome> {
  const method = request.method ?? 'GET';
  const withBody = hasBody(request);
  const chunked = withBody && request.headers['content-length'] === undefined;
  let head: string;
  try {
    head = requestHead(request, target.path, target.requestId, chunked, target.internalHeaders ?? []);
  } catch (error) {
    return Promise.reject(error);
  }
  // A small PUT or DELETE is held whole, so it can be sent again like a GET (below).
  const smallBody = replayableLength(request, method);
  const mayRetry = (!withBody && IDEMPOTENT.has(method)) || smallBody !== null;
  const outcome: ProxyOutcome = { status: 502, bytesIn: 0, bytesOut: 0, workUnits: 0 };
  if (smallBody !== null) {
    // Read once per request: the gateway sends a request again through another host after a 421
    // (forward() in gateway.ts), calling this again with a body already read.
    let held = heldBodies.get(request);
    if (!held) {
      held = readBody(request, smallBody).then((body) => {
        if (body?.length !== smallBody) throw new Error('the body did not match its Content-Length');
        return body;
      });
      heldBodies.set(request, held);
    }
    return held.then((body) => {
      outcome.bytesIn = body.length;
      return exchange(request, response, target, method, head, outcome, mayRetry, body);
    });
  }
  return exchange(request, response, target, method, head, outcome, mayRetry, null);
}

/**
 * Sends the request on a connection of the pool and forwards the answer. `body`, when given, is the whole
 * body, read already; otherwise a body streams from the client as it comes.
 */
function exchange(
  request: http.IncomingMessage,
  response: http.ServerResponse,
  target: { pool: TenantPool },
  method: string,
  head: string,
  outcome: ProxyOutcome,
  mayRetry: boolean,
  body: Buffer | null,
): Promise<ProxyOutcome> {
  const withBody = body === null && hasBody(request);
  const chunked = withBody && request.headers['content-length'] === undefined;
  return new Promise((resolve, reject) => {
    const attempt = (connection: TenantConnection, retry: boolean) => {
      if (response.destroyed) {
        // The client left while this request waited for a connection.
        target.pool.release(connection, true);
        reject(new Error('the client left before its request was sent'));
        return;
      }
      let bodySent = !withBody;
      // The client went away before its answer was all sent: stop the tenant's side too.
      const onClientClose = () => {
        if (!response.writableFinished) connection.destroy();
      };
      const resumeAnswer = () => connection.resume();
      const resumeBody = () => request.resume();
      const onData = (chunk: Buffer) => {
        outcome.bytesIn += chunk.length;
        if (!(chunked ? connection.writeChunk(chunk) : connection.write(chunk))) request.pause();
      };
      const onEnd = () => {
        if (chunked) connection.write('0\r\n\r\n');
        bodySent = true;
      };
      let stopWatchingDrain = () => {};
      const settle = () => {
        response.off('close', onClientClose);
        response.off('drain', resumeAnswer);
        request.off('data', onData);
        request.off('end', onEnd);
        stopWatchingDrain();
        // Answered (or failed) before the whole body came in: the rest is read and dropped, so the client's
        // upload is not left stuck behind a paused stream.
        if (!bodySent) request.resume();
      };
      response.once('close', onClientClose);
      connection.send(method, head, {
        head(status, rawHeaders) {
          outcome.status = status;
          const headers = forwarded(rawHeaders, (name, value) => {
            if (name === WORK_UNITS_HEADER) outcome.workUnits = Number(value) || 0;
          });
          response.writeHead(status, headers);
          response.on('drain', resumeAnswer);
        },
        body(bytes) {
          outcome.bytesOut += bytes.length;
          if (!response.write(bytes)) connection.pause();
        },
        // A streamed answer's header could only count the request side: its whole work follows as a
        // trailer (docs/live-data.md), read here and never forwarded.
        trailers(rawTrailers) {
          forwarded(rawTrailers, (name, value) => {
            const total = Number(value);
            if (name === WORK_UNITS_HEADER && Number.isFinite(total) && total > 0) outcome.workUnits = total;
          });
        },
        complete(reusable) {
          settle();
          response.end();
          // An answer that came before the whole body was sent leaves the rest unsent: that connection goes.
          target.pool.release(connection, reusable && bodySent);
          resolve(outcome);
        },
        failed(error, answered) {
          settle();
          // A kept-alive connection the tenant closed as this request went out (it stopped, or moved with a
          // drain): nothing was answered, and a request that may be repeated — a GET, a DELETE, or a small
          // PUT held whole — goes again, once, on a new connection. A tenant that closes a kept-alive
          // connection never read what came after, so the first never ran; one that died while working on it
          // would have a repeated PUT or DELETE set the same document again, as any HTTP client's retry does.
          if (!answered && mayRetry && connection.reused && !retry && !response.destroyed) {
            target.pool.acquire((fresh) => attempt(fresh, true), notConnected, true);
            return;
          }
          // The tenant's connection broke mid-answer (or the client left and we cut it): the caller ends the
          // response. Nothing answered and the client still there: the tenant is gone (stopped, crashed).
          reject(answered || response.destroyed ? error : new TenantUnreachable(error));
        },
      });
      if (body !== null) connection.write(body);
      if (withBody) {
        stopWatchingDrain = connection.onDrain(resumeBody);
        request.on('data', onData);
        request.on('end', onEnd);
      }
    };
    const notConnected = (error: Error) => reject(new TenantUnreachable(error, false));
    target.pool.acquire((connection) => attempt(connection, false), notConnected);
  });
}
