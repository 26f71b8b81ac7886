import { describe, expect, it } from 'vitest';
import { MAX_HEAD_BYTES, TenantProtocolError, TenantResponseParser } from './tenant-response-parser.js';

interface Seen {
  status: number | null;
  headers: string[];
  body: string;
  trailers: string[];
  completed: boolean[];
}

function parser() {
  const seen: Seen = { status: null, headers: [], body: '', trailers: [], completed: [] };
  const p = new TenantResponseParser({
    head: (status, rawHeaders) => {
      seen.status = status;
      seen.headers = rawHeaders;
    },
    body: (bytes) => {
      seen.body += bytes.toString('latin1');
    },
    trailers: (rawTrailers) => {
      seen.trailers = rawTrailers;
    },
    complete: (reusable) => seen.completed.push(reusable),
  });
  return { p, seen };
}

/** Feeds `text` whole, byte by byte, and split at every position: the outcome must not depend on how it was read. */
function everySplit(method: string, text: string, check: (seen: Seen) => void) {
  const bytes = Buffer.from(text, 'latin1');
  const splits: Buffer[][] = [[bytes], [...bytes].map((b) => Buffer.from([b]))];
  for (let at = 1; at < bytes.length; at++) splits.push([bytes.subarray(0, at), bytes.subarray(at)]);
  for (const pieces of splits) {
    const { p, seen } = parser();
    p.expect(method);
    for (const piece of pieces) p.push(piece);
    check(seen);
  }
}

const failsWith = (method: string, text: string, message: RegExp) => {
  const { p } = parser();
  p.expect(method);
  expect(() => p.push(Buffer.from(text, 'latin1'))).toThrow(message);
};

describe('TenantResponseParser', () => {
  it('reads a Content-Length answer, however the bytes arrive', () => {
    everySplit(
      'GET',
      'HTTP/1.1 200 OK\r\nContent-Type: application/json\r\ncontent-length: 11\r\n\r\n{"ok":true}',
      (seen) => {
        expect(seen.status).toBe(200);
        expect(seen.headers).toEqual(['Content-Type', 'application/json', 'content-length', '11']);
        expect(seen.body).toBe('{"ok":true}');
        expect(seen.completed).toEqual([true]);
      },
    );
  });

  it('reads a chunked answer with extensions and trailers, however the bytes arrive', () => {
    const text =
      'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\ntrailer: x-rookery-work-units\r\n\r\n' +
      '8\r\n{"n":1}\n\r\n9;ext=1\r\n{"n":22}\n\r\n0\r\nx-rookery-work-units: 42\r\n\r\n';
    everySplit('GET', text, (seen) => {
      expect(seen.body).toBe('{"n":1}\n{"n":22}\n');
      expect(seen.trailers).toEqual(['x-rookery-work-units', '42']);
      expect(seen.completed).toEqual([true]);
    });
  });

  it('ends a chunked answer without trailers at the empty line', () => {
    everySplit(
      'GET',
      'HTTP/1.1 200 OK\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n0\r\n\r\n',
      (seen) => {
        expect(seen.body).toBe('abc');
        expect(seen.trailers).toEqual([]);
        expect(seen.completed).toEqual([true]);
      },
    );
  });

  it('knows the answers that have no body whatever their headers say', () => {
    for (const [method, text] of [
      ['HEAD', 'HTTP/1.1 200 OK\r\ncontent-length: 500\r\n\r\n'],
      ['GET', 'HTTP/1.1 304 Not Modified\r\netag: "x"\r\n\r\n'],
      ['DELETE', 'HTTP/1.1 204 No Content\r\n\r\n'],
      ['GET', 'HTTP/1.1 200 OK\r\ncontent-length: 0\r\n\r\n'],
    ] as const) {
      everySplit(method, text, (seen) => {
        expect(seen.body).toBe('');
        expect(seen.completed).toEqual([true]);
      });
    }
  });

  it('skips interim answers and reads the final one', () => {
    everySplit(
      'POST',
      'HTTP/1.1 100 Continue\r\n\r\nHTTP/1.1 201 Created\r\ncontent-length: 2\r\n\r\nok',
      (seen) => {
        expect(seen.status).toBe(201);
        expect(seen.body).toBe('ok');
      },
    );
  });

  it('does not reuse a connection the tenant closes, and reads a body delimited by the close', () => {
    const closing = parser();
    closing.p.expect('GET');
    closing.p.push(
      Buffer.from('HTTP/1.1 413 Payload Too Large\r\nConnection: close\r\ncontent-length: 3\r\n\r\nbig'),
    );
    expect(closing.seen.completed).toEqual([false]);

    const untilClose = parser();
    untilClose.p.expect('GET');
    untilClose.p.push(Buffer.from('HTTP/1.1 200 OK\r\n\r\npart one, '));
    untilClose.p.push(Buffer.from('part two'));
    expect(untilClose.seen.completed).toEqual([]);
    untilClose.p.end();
    expect(untilClose.seen.body).toBe('part one, part two');
    expect(untilClose.seen.completed).toEqual([false]);
  });

  it('carries one answer after another on the same connection', () => {
    const { p, seen } = parser();
    p.expect('GET');
    p.push(Buffer.from('HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\na'));
    p.expect('GET');
    p.push(Buffer.from('HTTP/1.1 404 Not Found\r\ncontent-length: 1\r\n\r\nb'));
    expect(seen.status).toBe(404);
    expect(seen.body).toBe('ab');
    expect(seen.completed).toEqual([true, true]);
  });

  it('refuses malformed and hostile answers', () => {
    failsWith('GET', 'HTTP/2 200 OK\r\n\r\n', /bad status line/);
    failsWith('GET', 'HTTP/1.1 20 OK\r\n\r\n', /bad status line/);
    failsWith('GET', 'HTTP/1.1 200 OK\r\nbad header\r\n\r\n', /bad header line/);
    failsWith('GET', 'HTTP/1.1 200 OK\r\nname : value\r\n\r\n', /bad header line/);
    failsWith('GET', 'HTTP/1.1 200 OK\r\nx-a: 1\r\n folded\r\n\r\n', /bad header line/);
    failsWith('GET', 'HTTP/1.1 200 OK\r\ncontent-length: -1\r\n\r\n', /bad Content-Length/);
    failsWith(
      'GET',
      'HTTP/1.1 200 OK\r\ncontent-length: 1\r\ncontent-length: 2\r\n\r\n',
      /bad Content-Length/,
    );
    failsWith(
      'GET',
      'HTTP/1.1 200 OK\r\ntransfer-encoding: gzip, chunked\r\n\r\n',
      /unsupported Transfer-Encoding/,
    );
    failsWith(
      'GET',
      'HTTP/1.1 200 OK\r\ncontent-length: 3\r\ntransfer-encoding: chunked\r\n\r\n',
      /both Content-Length and Transfer-Encoding/,
    );
    failsWith('GET', 'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\nzz\r\n', /bad chunk size/);
    failsWith(
      'GET',
      'HTTP/1.1 200 OK\r\ntransfer-encoding: chunked\r\n\r\n1\r\nabc',
      /chunk did not end with CRLF/,
    );
    failsWith('GET', 'HTTP/1.1 101 Switching Protocols\r\n\r\n', /switched protocols/);
    failsWith('GET', 'HTTP/1.1 200 OK\r\ncontent-length: 1\r\n\r\nab', /bytes after its answer/);
  });

  it('bounds what it keeps of a head that does not end', () => {
    const { p } = parser();
    p.expect('GET');
    const line = Buffer.from(`x-filler: ${'a'.repeat(1000)}\r\n`);
    p.push(Buffer.from('HTTP/1.1 200 OK\r\n'));
    expect(() => {
      for (let sent = 0; sent <= MAX_HEAD_BYTES; sent += line.length) p.push(line);
    }).toThrow(TenantProtocolError);
  });

  it('fails an answer cut short by the close, and bytes nobody asked for', () => {
    const cut = parser();
    cut.p.expect('GET');
    cut.p.push(Buffer.from('HTTP/1.1 200 OK\r\ncontent-length: 10\r\n\r\nabc'));
    expect(() => cut.p.end()).toThrow(/before its answer was complete/);

    const unasked = parser();
    expect(() => unasked.p.push(Buffer.from('HTTP/1.1 200 OK\r\n\r\n'))).toThrow(TenantProtocolError);
  });
});
