// The export's row cap on the download path (src/query/export.ts), with a cap small enough to pass: the
// module runs here in Node (its Response, Blob and streams are the web platform's), reading a real HTTP
// answer shaped as the stream API's (rows, then the `@end` line). Past the cap the export stops with a
// message that says what to do and offers nothing; with no cap (a file the person picked) every row goes.
import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { blobSink, EXPORT_ROW_CAP, ExportError, type ExportSink, exportRows } from '../src/query/export.js';

const ROWS = 25;
let server: http.Server;
let url: string;

beforeAll(async () => {
  // One row per write, so the client reads the answer as it arrives (as from the tenant).
  server = http.createServer((_request, response) => {
    response.writeHead(200, { 'content-type': 'application/x-ndjson' });
    for (let n = 1; n <= ROWS; n++) response.write(`${JSON.stringify({ N: n, Name: `item ${n}` })}\n`);
    response.end(`${JSON.stringify({ '@end': { Count: ROWS } })}\n`);
  });
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  url = `http://127.0.0.1:${(server.address() as AddressInfo).port}/databases/shop/streams/queries`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

const open = () => fetch(url, { method: 'POST' });

/** A sink that keeps what it is told, as the file the person picked does. */
function recordingSink(): ExportSink & { text: string; closed: number; aborted: number } {
  const sink = {
    text: '',
    closed: 0,
    aborted: 0,
    async write(text: string) {
      sink.text += text;
    },
    async close() {
      sink.closed++;
    },
    async abort() {
      sink.aborted++;
    },
  };
  return sink;
}

describe('the export row cap', () => {
  it('is a million rows in the page', () => {
    expect(EXPORT_ROW_CAP).toBe(1_000_000);
  });

  it('stops a download past the cap, says what to do, and offers no file', async () => {
    for (const format of ['ndjson', 'csv'] as const) {
      const sink = blobSink('text/plain');
      const failed = await exportRows(open, format, sink, 10).then(
        () => null,
        (error: unknown) => error,
      );
      expect(failed).toBeInstanceOf(ExportError);
      expect((failed as Error).message).toBe(
        'The export stops at 10 rows in the browser, which holds a download until it is saved: pick "Write straight to a file" (Chromium, Edge), or narrow the query, or stream it with the CLI or the SDK.',
      );
      expect(() => sink.blob()).toThrow('the export was not completed');
    }
  });

  it('takes a download of exactly the cap whole', async () => {
    const sink = blobSink('application/x-ndjson');
    expect(await exportRows(open, 'ndjson', sink, ROWS)).toBe(ROWS);
    const lines = (await sink.blob().text()).trim().split('\n');
    expect(lines.map((line) => (JSON.parse(line) as { N: number }).N)).toEqual(
      Array.from({ length: ROWS }, (_, i) => i + 1),
    );
  });

  it('does not limit a file the person picked (no cap)', async () => {
    const sink = recordingSink();
    expect(await exportRows(open, 'csv', sink, null)).toBe(ROWS);
    expect([sink.closed, sink.aborted]).toEqual([1, 0]);
    const lines = sink.text.trimEnd().split('\r\n');
    expect(lines[0]).toBe('"N","Name"');
    expect(lines).toHaveLength(ROWS + 1);
    expect(lines.at(-1)).toBe(`"${ROWS}","item ${ROWS}"`);
  });
});
