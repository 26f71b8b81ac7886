// `store.bulkInsert(items)`: many documents into the database fast, as one NDJSON stream to bulk_insert
// (thousands of documents per transaction on the server). Items are read from the source as the request
// body is sent, so a generator of millions of documents never sits in memory at once.
import { errorForCode } from './errors.js';
import type { RequestExecutor } from './http/request-executor.js';
import { BulkInsertProgressSchema, parseResponse } from './http/responses.js';
import { ndjsonLines } from './streaming/ndjson-lines.js';

export interface BulkInsertItem {
  id: string;
  /** The document, with `@metadata.@collection` to put it in a collection. */
  document: object;
}

export interface BulkInsertResult {
  processed: number;
  docsPerSecond: number;
}

/** Lines are sent in chunks of about this size: one write per chunk rather than per document. */
const CHUNK_BYTES = 64 * 1024;

async function* ndjsonBody(
  items: Iterable<BulkInsertItem> | AsyncIterable<BulkInsertItem>,
): AsyncGenerator<string> {
  let chunk = '';
  for await (const item of items) {
    chunk += `${JSON.stringify({ Id: item.id, Document: item.document })}\n`;
    if (chunk.length >= CHUNK_BYTES) {
      yield chunk;
      chunk = '';
    }
  }
  if (chunk !== '') yield chunk;
}

export async function bulkInsert(
  executor: RequestExecutor,
  databasePath: string,
  items: Iterable<BulkInsertItem> | AsyncIterable<BulkInsertItem>,
): Promise<BulkInsertResult> {
  const response = await executor.openStream({
    method: 'POST',
    path: `${databasePath}/bulk_insert`,
    body: ndjsonBody(items),
    contentType: 'application/x-ndjson',
    idempotent: false,
  });
  for await (const line of ndjsonLines(response.body)) {
    const progress = parseResponse(BulkInsertProgressSchema, JSON.parse(line), 'bulk insert progress line');
    if (progress.Type === 'Completed') {
      return { processed: progress.Processed, docsPerSecond: progress.DocsPerSecond };
    }
    if (progress.Type === 'Failed') {
      const problem = progress.Error;
      throw errorForCode({
        code: typeof problem.code === 'string' ? problem.code : 'InternalError',
        status: typeof problem.status === 'number' ? problem.status : null,
        detail: `${typeof problem.detail === 'string' ? problem.detail : 'bulk insert failed'} (${progress.Processed} documents were stored before it)`,
        details: problem,
      });
    }
  }
  throw errorForCode({
    code: 'StreamInterrupted',
    status: null,
    detail: 'The bulk insert answer ended before its Completed line: some documents may not be stored',
  });
}
