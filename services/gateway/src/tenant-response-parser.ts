// An incremental HTTP/1.1 response parser for the gateway's hop to a tenant
// container (tenant-pool.ts). Node's own client (http.request and its agent)
// cost the gateway more CPU per proxied GET than TLS did (docs/benchmarks.md);
// this one does only what that hop needs: the status line and header fields,
// then the body framed by Content-Length or chunked coding (with trailers),
// handing body bytes on as slices of what the socket read, never copied.
//
// The tenant is our own code, but a tenant process is where a tenant's data
// and definitions run: its answers are parsed strictly and within bounds
// (RFC 9112), and anything else is an error that ends the connection.

/** The most bytes a status line plus header fields (or a trailer section) may take. */
export const MAX_HEAD_BYTES = 64 * 1024;
/** Most hex digits in a chunk size: 12 is 2^48 bytes, beyond any answer. */
const MAX_CHUNK_SIZE_DIGITS = 12;

export class TenantProtocolError extends Error {}

export interface ResponseHandlers {
  /** Status and header fields as name/value pairs, as sent (names in their case, values trimmed). */
  head(status: number, rawHeaders: string[]): void;
  body(bytes: Buffer): void;
  trailers(rawTrailers: string[]): void;
  /** The answer is complete; `reusable` when the connection may carry another request. */
  complete(reusable: boolean): void;
}

type State =
  | { kind: 'head' }
  | { kind: 'length'; remaining: number }
  | { kind: 'chunk-size' }
  | { kind: 'chunk-data'; remaining: number }
  | { kind: 'chunk-end' }
  | { kind: 'trailers' }
  | { kind: 'until-close' }
  | { kind: 'done' };

const CRLF = Buffer.from('\r\n');
const HEAD_END = Buffer.from('\r\n\r\n');
const TOKEN = /^[!#$%&'*+\-.^_`|~0-9A-Za-z]+$/;
const STATUS_LINE = /^HTTP\/1\.[01] ([1-9][0-9]{2})(?: [^\r\n]*)?$/;
const HEX = /^[0-9a-fA-F]+$/;

/** One answer at a time: `expect(method)` before each request's answer, then `push` what the socket reads. */
export class TenantResponseParser {
  private state: State = { kind: 'done' };
  /** Bytes of a head, chunk-size line or trailer section not yet complete. */
  private pending: Buffer | null = null;
  private headOnly = false;
  private keepAlive = true;
  /** The answer ended within the bytes being pushed: `complete` is called once they are all looked at. */
  private completing = false;

  constructor(private readonly on: ResponseHandlers) {}

  /** Readies the parser for the answer to a request with this method (a HEAD's answer has no body). */
  expect(method: string): void {
    this.state = { kind: 'head' };
    this.pending = null;
    this.headOnly = method === 'HEAD';
    this.keepAlive = true;
    this.completing = false;
  }

  /** Feeds bytes read from the connection; throws TenantProtocolError on anything malformed. */
  push(data: Buffer): void {
    let rest: Buffer | null = this.pending ? Buffer.concat([this.pending, data]) : data;
    this.pending = null;
    while (rest !== null && rest.length > 0) {
      if (this.state.kind === 'done') throw new TenantProtocolError('the tenant sent bytes after its answer');
      rest = this.step(rest);
    }
    if (this.completing) {
      this.completing = false;
      this.on.complete(this.keepAlive);
    }
  }

  /** The connection ended: completes an answer delimited by the close, fails one cut short. */
  end(): void {
    if (this.state.kind === 'until-close') {
      this.state = { kind: 'done' };
      this.on.complete(false);
    } else if (this.state.kind !== 'done') {
      throw new TenantProtocolError('the tenant closed the connection before its answer was complete');
    }
  }

  /** Consumes what it can of `data`; returns the unconsumed rest, or null when it waits for more. */
  private step(data: Buffer): Buffer | null {
    const state = this.state;
    switch (state.kind) {
      case 'done':
        throw new TenantProtocolError('the tenant sent bytes without being asked');
      case 'head': {
        const end = this.until(data, HEAD_END);
        if (end < 0) return null;
        this.head(data.toString('latin1', 0, end));
        return data.subarray(end + HEAD_END.length);
      }
      case 'length':
      case 'chunk-data': {
        const take = Math.min(state.remaining, data.length);
        this.on.body(take === data.length ? data : data.subarray(0, take));
        state.remaining -= take;
        if (state.remaining === 0) {
          if (state.kind === 'length') this.finish();
          else this.state = { kind: 'chunk-end' };
        }
        return data.subarray(take);
      }
      case 'chunk-end': {
        if (data.length < 2) {
          this.pending = data;
          return null;
        }
        if (data[0] !== 0x0d || data[1] !== 0x0a)
          throw new TenantProtocolError('a chunk did not end with CRLF');
        this.state = { kind: 'chunk-size' };
        return data.subarray(2);
      }
      case 'chunk-size': {
        const end = this.until(data, CRLF);
        if (end < 0) return null;
        const line = data.toString('latin1', 0, end);
        const digits = line.split(';', 1)[0]!.trimEnd();
        if (!HEX.test(digits) || digits.length > MAX_CHUNK_SIZE_DIGITS) {
          throw new TenantProtocolError(`bad chunk size line ${JSON.stringify(line.slice(0, 40))}`);
        }
        const size = Number.parseInt(digits, 16);
        this.state = size === 0 ? { kind: 'trailers' } : { kind: 'chunk-data', remaining: size };
        return data.subarray(end + CRLF.length);
      }
      case 'trailers': {
        // The trailer section ends at an empty line; with no trailers that is the CRLF right away.
        if (data.length >= 2 && data[0] === 0x0d && data[1] === 0x0a) {
          this.finish();
          return data.subarray(2);
        }
        const end = this.until(data, HEAD_END);
        if (end < 0) return null;
        this.on.trailers(parseFields(data.toString('latin1', 0, end).split('\r\n')).fields);
        this.finish();
        return data.subarray(end + HEAD_END.length);
      }
      case 'until-close':
        this.on.body(data);
        return null;
    }
  }

  /** Index of `delimiter` in `data`, or -1 after keeping `data` for the next push (within MAX_HEAD_BYTES). */
  private until(data: Buffer, delimiter: Buffer): number {
    const end = data.indexOf(delimiter);
    if (end >= 0 && end <= MAX_HEAD_BYTES) return end;
    if (end > MAX_HEAD_BYTES || data.length > MAX_HEAD_BYTES) {
      throw new TenantProtocolError(`the tenant's answer has a head or line over ${MAX_HEAD_BYTES} bytes`);
    }
    this.pending = data;
    return -1;
  }

  private head(text: string): void {
    const lines = text.split('\r\n');
    const status = STATUS_LINE.exec(lines[0]!);
    if (!status) throw new TenantProtocolError(`bad status line ${JSON.stringify(lines[0]!.slice(0, 60))}`);
    const code = Number(status[1]);
    const { fields, contentLength, chunked, close } = parseFields(lines.slice(1));
    // An interim answer (100 Continue, 103 Early Hints) is skipped: the final one follows. 101 is for upgrades,
    // which take their own path (upgrade-proxy.ts).
    if (code < 200) {
      if (code === 101) throw new TenantProtocolError('the tenant switched protocols on a plain request');
      return;
    }
    this.keepAlive = !close && !lines[0]!.startsWith('HTTP/1.0');
    this.on.head(code, fields);
    if (this.headOnly || code === 204 || code === 304) this.finish();
    else if (chunked) this.state = { kind: 'chunk-size' };
    else if (contentLength !== null) {
      this.state = { kind: 'length', remaining: contentLength };
      if (contentLength === 0) this.finish();
    } else {
      this.keepAlive = false;
      this.state = { kind: 'until-close' };
    }
  }

  private finish(): void {
    this.state = { kind: 'done' };
    this.completing = true;
  }
}

interface Fields {
  fields: string[];
  contentLength: number | null;
  chunked: boolean;
  close: boolean;
}

function parseFields(lines: string[]): Fields {
  const parsed: Fields = { fields: [], contentLength: null, chunked: false, close: false };
  for (const line of lines) {
    const colon = line.indexOf(':');
    const name = colon > 0 ? line.slice(0, colon) : '';
    // No obsolete line folding, no whitespace before the colon (RFC 9112 §5.1, §5.2).
    if (!TOKEN.test(name))
      throw new TenantProtocolError(`bad header line ${JSON.stringify(line.slice(0, 60))}`);
    const value = line.slice(colon + 1).trim();
    const lower = name.toLowerCase();
    if (lower === 'content-length') {
      const length = /^[0-9]{1,15}$/.test(value) ? Number(value) : Number.NaN;
      if (Number.isNaN(length) || (parsed.contentLength !== null && parsed.contentLength !== length)) {
        throw new TenantProtocolError(`bad Content-Length ${JSON.stringify(value.slice(0, 20))}`);
      }
      parsed.contentLength = length;
    } else if (lower === 'transfer-encoding') {
      if (value.toLowerCase() !== 'chunked') {
        throw new TenantProtocolError(`unsupported Transfer-Encoding ${JSON.stringify(value.slice(0, 40))}`);
      }
      parsed.chunked = true;
    } else if (lower === 'connection') {
      parsed.close ||= value
        .toLowerCase()
        .split(',')
        .some((token) => token.trim() === 'close');
    }
    parsed.fields.push(name, value);
  }
  // Both framings at once is how requests get smuggled: refused rather than guessed (RFC 9112 §6.3).
  if (parsed.chunked && parsed.contentLength !== null) {
    throw new TenantProtocolError('the answer has both Content-Length and Transfer-Encoding');
  }
  return parsed;
}
