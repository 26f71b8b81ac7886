// Export of a query's results through the stream API (POST …/streams/queries, docs/live-data.md): every
// matching row, not one page, as NDJSON or CSV, read from the answer as it arrives and written on at once,
// so the page never holds the rows themselves: into a file the person picked (the File System Access API,
// where the browser has it) or into Blob parts (which the browser may keep on disk) offered as a download,
// stopped at EXPORT_ROW_CAP rows. The stream's last line says whether it is whole: {"@end": …} (complete),
// {"@error": …} (failed after its headers) or neither (cut short); a file that is not whole is never kept.
import { z } from 'zod';
import { databasePath, openStream } from '../api.js';

const EndSchema = z.object({ '@end': z.looseObject({ Count: z.number() }) });
const FailedSchema = z.object({ '@error': z.looseObject({ code: z.string(), detail: z.string() }) });

/** The most rows offered as a download (held by the browser until saved); a file picked to write to has no cap. */
export const EXPORT_ROW_CAP = 1_000_000;
/** Rows encoded together into one Blob part (and the rows whose fields name a CSV's columns). */
const ROWS_PER_PART = 5_000;

export class ExportError extends Error {}

export type ExportFormat = 'ndjson' | 'csv';

/** Where the encoded text goes; `abort` drops what was written (a stream that failed or was cut). */
export interface ExportSink {
  write(text: string): Promise<void>;
  close(): Promise<void>;
  abort(): Promise<void>;
}

/** Blob parts of at most ROWS_PER_PART rows each, the whole only once the stream ended well. */
export function blobSink(type: string): ExportSink & { blob(): Blob } {
  let parts: Blob[] = [];
  let whole: Blob | null = null;
  return {
    async write(text) {
      parts.push(new Blob([text], { type }));
    },
    async close() {
      whole = new Blob(parts, { type });
      parts = [];
    },
    async abort() {
      parts = [];
    },
    blob() {
      if (whole === null) throw new Error('the export was not completed');
      return whole;
    },
  };
}

/** A file the person picked, written as the rows arrive (FileSystemWritableFileStream keeps a swap file until close). */
export function fileSink(writable: {
  write(data: string): Promise<void>;
  close(): Promise<void>;
  abort(): Promise<void>;
}): ExportSink {
  return {
    write: (text) => writable.write(text),
    close: () => writable.close(),
    abort: () => writable.abort(),
  };
}

/** Opens the stream of every row of the query (POST …/streams/queries), as it was run. */
export function openQueryStream(request: {
  database: string;
  query: string;
  parameters: Record<string, unknown>;
}): Promise<Response> {
  return openStream('POST', databasePath(request.database, 'streams/queries'), {
    Query: request.query,
    QueryParameters: request.parameters,
  });
}

/**
 * Streams the rows `open` answers into `sink` as `format`, checking the stream whole; answers the row count.
 * `cap`: the most rows taken (null: none; the page passes EXPORT_ROW_CAP for a download, none for a file).
 * A failed, cut or capped stream aborts the sink and throws ExportError saying why and what to do.
 */
export async function exportRows(
  open: () => Promise<Response>,
  format: ExportFormat,
  sink: ExportSink,
  cap: number | null,
): Promise<number> {
  const encoder = format === 'csv' ? csvEncoder() : (rows: unknown[]) => toNdjson(rows);
  let batch: unknown[] = [];
  let count = 0;
  let last: unknown;
  let pending: unknown;
  const flush = async () => {
    if (batch.length > 0) await sink.write(encoder(batch));
    batch = [];
  };
  try {
    // Inside the try: a stream refused before its first line aborts the file the person picked too.
    for await (const line of lines(await open())) {
      // The previous line was a row: only the last line of the stream is its end (or error) line.
      if (pending !== undefined) {
        batch.push(pending);
        count++;
        if (cap !== null && count > cap) {
          throw new ExportError(
            `The export stops at ${cap.toLocaleString('en')} rows in the browser, which holds a download until it is saved: pick "Write straight to a file" (Chromium, Edge), or narrow the query, or stream it with the CLI or the SDK.`,
          );
        }
        if (batch.length >= ROWS_PER_PART) await flush();
      }
      pending = JSON.parse(line) as unknown;
    }
    last = pending;
    const failed = FailedSchema.safeParse(last);
    if (failed.success) {
      const { code, detail } = failed.data['@error'];
      throw new ExportError(`${code}: ${detail}`);
    }
    const end = EndSchema.safeParse(last);
    if (!end.success) throw new ExportError('The stream was cut short before its end line: export again.');
    if (end.data['@end'].Count !== count) {
      throw new ExportError(`The stream announced ${end.data['@end'].Count} rows and sent ${count}.`);
    }
    await flush();
    await sink.close();
    return count;
  } catch (error) {
    await sink.abort();
    throw error;
  }
}

/** The answer's lines as they arrive, without holding more than one chunk and a partial line. */
async function* lines(response: Response): AsyncGenerator<string> {
  if (response.body === null) return;
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let rest = '';
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    rest += value;
    let newline = rest.indexOf('\n');
    while (newline >= 0) {
      const line = rest.slice(0, newline);
      rest = rest.slice(newline + 1);
      if (line.trim() !== '') yield line;
      newline = rest.indexOf('\n');
    }
  }
  if (rest.trim() !== '') yield rest;
}

export function toNdjson(rows: unknown[]): string {
  return rows.map((row) => `${JSON.stringify(row)}\n`).join('');
}

/**
 * CSV (RFC 4180): a column per top-level field of the rows of the first part (up to ROWS_PER_PART rows),
 * in the order they first appear, `@metadata` left out; text as it is, other values as JSON; every cell
 * quoted. A field first seen after the first part fails the export (a streamed file cannot go back to add
 * a column): export NDJSON, or `select` the fields.
 */
function csvEncoder(): (rows: unknown[]) => string {
  let columns: string[] | null = null;
  const cell = (value: unknown) => {
    const text = value === undefined ? '' : typeof value === 'string' ? value : JSON.stringify(value);
    return `"${text.replaceAll('"', '""')}"`;
  };
  return (rows) => {
    const objects = rows.map((row) =>
      typeof row === 'object' && row !== null ? (row as Record<string, unknown>) : { value: row },
    );
    const lines: string[] = [];
    if (columns === null) {
      const seen = new Set<string>();
      columns = [];
      for (const row of objects) {
        for (const key of Object.keys(row)) {
          if (key !== '@metadata' && !seen.has(key)) {
            seen.add(key);
            columns.push(key);
          }
        }
      }
      lines.push(columns.map(cell).join(','));
    } else {
      const known = new Set(columns);
      for (const row of objects) {
        const unknown = Object.keys(row).find((key) => key !== '@metadata' && !known.has(key));
        if (unknown !== undefined) {
          throw new ExportError(
            `The field "${unknown}" first appears after the first ${ROWS_PER_PART.toLocaleString('en')} rows, which name the CSV's columns: export NDJSON, or select the fields in the query.`,
          );
        }
      }
    }
    const header = columns;
    for (const row of objects) lines.push(header.map((column) => cell(row[column])).join(','));
    return `${lines.join('\r\n')}\r\n`;
  };
}
