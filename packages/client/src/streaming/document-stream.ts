// A streamed query or document range as an async iterator. The NDJSON body is read as the consumer pulls
// (`for await` on undici's body: the socket is paused while nobody reads, so the server slows down
// instead of the client buffering), ends at the `@end` line, and fails loudly when the stream was cut
// short or ended with `@error`. Leaving the loop early aborts the request, which releases the server.
import { errorForCode, type RookeryClientError } from '../errors.js';
import type { OpenedStream } from '../http/request-executor.js';
import { isJsonObject } from '../json-object.js';
import type { Metadata } from '../session/tracked-documents.js';
import { ndjsonLines } from './ndjson-lines.js';

export interface StreamResult<T> {
  /** The document's id, or null for projections that carry no metadata. */
  id: string | null;
  changeVector: string | null;
  metadata: Metadata | null;
  /** The document without its `@metadata` (streamed results are not tracked by the session). */
  document: T;
}

/** What the `@end` line says. */
export interface StreamEnd {
  Count: number;
  IndexName?: string | null;
  TotalResults?: number;
}

function interrupted(detail: string, cause?: unknown): RookeryClientError {
  return errorForCode({ code: 'StreamInterrupted', status: null, detail, cause });
}

export class DocumentStream<T> implements AsyncIterable<StreamResult<T>> {
  /** Set once the `@end` line was read. */
  end: StreamEnd | null = null;
  private started = false;

  constructor(
    private readonly what: string,
    private readonly open: (signal: AbortSignal) => Promise<OpenedStream>,
  ) {}

  async *[Symbol.asyncIterator](): AsyncGenerator<StreamResult<T>> {
    if (this.started)
      throw errorForCode({ code: 'InvalidArgument', status: null, detail: 'A stream is read once' });
    this.started = true;
    const controller = new AbortController();
    const opened = await this.open(controller.signal);
    try {
      const lines = ndjsonLines(opened.body);
      for (;;) {
        let next: IteratorResult<string>;
        try {
          next = await lines.next();
        } catch (error) {
          throw interrupted(`The stream of ${this.what} was cut: ${(error as Error).message}`, error);
        }
        if (next.done) break;
        const value = parseLine(next.value, this.what);
        if ('@end' in value) {
          this.end = (isJsonObject(value['@end']) ? value['@end'] : { Count: 0 }) as unknown as StreamEnd;
          return;
        }
        if ('@error' in value) throw streamError(value['@error'], this.what);
        yield toResult<T>(value);
      }
      throw interrupted(`The stream of ${this.what} ended without its @end line: the results are incomplete`);
    } finally {
      // Not finished (the consumer left the loop, or it failed): drop the connection so the server stops.
      if (this.end === null) {
        controller.abort();
        opened.body.destroy();
      }
    }
  }
}

function parseLine(line: string, what: string): Record<string, unknown> {
  let value: unknown;
  try {
    value = JSON.parse(line);
  } catch (error) {
    throw interrupted(`The stream of ${what} sent a line that is not JSON: ${line.slice(0, 120)}`, error);
  }
  if (!isJsonObject(value)) throw interrupted(`The stream of ${what} sent a line that is not an object`);
  return value;
}

function streamError(error: unknown, what: string): RookeryClientError {
  const body = isJsonObject(error) ? error : {};
  const code = typeof body.code === 'string' ? body.code : 'StreamInterrupted';
  const detail = typeof body.detail === 'string' ? body.detail : `The stream of ${what} failed`;
  return errorForCode({ code, status: null, detail, details: body });
}

function toResult<T>(value: Record<string, unknown>): StreamResult<T> {
  const metadata = isJsonObject(value['@metadata']) ? value['@metadata'] : null;
  if (metadata === null) return { id: null, changeVector: null, metadata: null, document: value as T };
  const { '@metadata': _metadata, ...document } = value;
  return {
    id: typeof metadata['@id'] === 'string' ? metadata['@id'] : null,
    changeVector: typeof metadata['@change-vector'] === 'string' ? metadata['@change-vector'] : null,
    metadata,
    document: document as T,
  };
}
