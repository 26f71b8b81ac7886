import type { Database, QueryOptions } from '@rookery/engine';
import {
  DocumentStreamQuerySchema,
  QueryStringSchema,
  RookeryError,
  type StreamEndLine,
  StreamQueryFormatSchema,
  StreamQueryRequestSchema,
  validated,
} from '@rookery/protocol';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { toRookeryError } from '../http/problem.js';
import { DatabaseParams, databaseOf, type RequestParts, type RouteContext } from '../routes/context.js';
import { queryOptionsFromQueryString, queryOptionsOf } from '../routes/queries.js';
import { ravenStreamFraming, type StreamFraming } from '../routes/ravendb/streams.js';
import type { LiveGauges } from './live-gauges.js';
import { NdjsonWriter, ReaderGone } from './ndjson-writer.js';

/** Documents in the first page, before anything is known about their size. */
const FIRST_PAGE = 256;
const MAX_PAGE = 1_000;
/** A page aims at this many characters of JSON: small documents come 1,000 at a time, 1 MB ones one by one. */
const PAGE_TARGET_CHARS = 1024 * 1024;
/** How long an interrupted stream's reader gets to take its `@error` line when the tenant stops. */
const STOP_GRACE_MS = 1_000;

/**
 * Reads the next page: at most `max` results as JSON text, and no more once PAGE_TARGET_CHARS were read
 * (documents are read one by one, so a page of 30 MB documents holds one, not 256), or null once there is
 * nothing more. Runs synchronously between two writes, so no statement is left open while the stream waits
 * for its reader.
 */
type PageReader = (max: number) => string[] | null;

/** Rookery's own framing: one result per line, then `@end` (or `@error`). */
function ndjsonFraming(end: (count: number) => StreamEndLine): StreamFraming {
  return { head: null, item: null, end, failure: 'error-line' };
}

/**
 * NDJSON streams (docs/live-data.md): `GET /databases/{db}/streams/docs` (id order, or a collection in
 * etag order) and `POST|GET /databases/{db}/streams/queries`. Streams are not snapshots: a document written
 * while a stream runs may or may not be in it (see Database.documentsInIdOrder and documentsAfter).
 * With `?format=jsonl`, RavenDB's framing instead (routes/ravendb/streams.ts).
 */
const DocumentStreamQuery = validated(DocumentStreamQuerySchema, 'query string');
const StreamQueryBody = validated(StreamQueryRequestSchema, 'query body');
const StreamQueryFormat = validated(StreamQueryFormatSchema, 'query string');

export function streamRoutes(fastify: FastifyInstance, context: RouteContext, gauges: LiveGauges): void {
  const app = fastify.withTypeProvider<RequestParts>();
  const open = new Set<NdjsonWriter>();
  const streaming = { context, gauges, open };

  // A stream to a slow reader would keep the server from closing: each is ended with an `@error` line
  // (the tenant is stopping), and cut if its reader does not take that within a second.
  app.addHook('preClose', (done) => {
    const stopping = new RookeryError('DatabaseUnavailable', 'The tenant is stopping; run the stream again');
    for (const writer of open) {
      writer.interrupt(stopping);
      writer.closeConnectionAfterwards();
      setTimeout(() => writer.destroy(), STOP_GRACE_MS).unref();
    }
    done();
  });

  const docsSchema = {
    summary: 'Stream documents as NDJSON: an id prefix in id order, or a collection in etag order',
    params: DatabaseParams,
    querystring: DocumentStreamQuery,
  };
  app.get('/databases/:db/streams/docs', { schema: docsSchema }, async (request, reply) => {
    const db = databaseOf(context, request);
    const query = request.query;
    if (
      query.collection !== undefined &&
      (query.startsWith !== undefined || query.startAfter !== undefined)
    ) {
      throw new RookeryError(
        'InvalidRequest',
        'Stream a collection (collection=, in etag order) or ids (startsWith=/startAfter=, in id order), not both',
      );
    }
    const read =
      query.collection === undefined
        ? idOrderPages(db, query.startsWith ?? '', query.startAfter ?? null)
        : collectionPages(db, query.collection);
    const framing =
      query.format === 'jsonl'
        ? ravenStreamFraming(null)
        : ndjsonFraming((count) => ({ '@end': { Count: count } }));
    await stream(streaming, db, reply, read, query.pageSize, framing);
  });

  const summary = "Stream a query's results as NDJSON, without a page size";
  const postSchema = {
    summary,
    params: DatabaseParams,
    querystring: StreamQueryFormat,
    body: StreamQueryBody,
  };
  app.post('/databases/:db/streams/queries', { schema: postSchema }, async (request, reply) =>
    streamQuery(streaming, request, reply, queryOptionsOf(request.body), request.query.format === 'jsonl'),
  );
  // Checked here, then read by queryOptionsFromQueryString, which GET …/queries shares.
  const getSchema = {
    summary,
    params: DatabaseParams,
    querystring: validated(QueryStringSchema, 'query string'),
  };
  app.get('/databases/:db/streams/queries', { schema: getSchema }, async (request, reply) =>
    streamQuery(streaming, request, reply, queryOptionsFromQueryString(request.query), false),
  );
}

interface Streaming {
  context: RouteContext;
  gauges: LiveGauges;
  open: Set<NdjsonWriter>;
}

async function streamQuery(
  streaming: Streaming,
  request: FastifyRequest,
  reply: FastifyReply,
  options: QueryOptions,
  raven: boolean,
): Promise<void> {
  const { db: name } = request.params as { db: string };
  const { db, runner } = await streaming.context.indexing.forDatabase(name);
  // Parsing, planning and any wait for a non-stale index happen here, before the headers: a bad query is
  // a plain 400, not a stream that fails on its first line.
  const prepared = await runner.prepare(options);
  const results = runner.stream(prepared);
  const framing = raven
    ? ravenStreamFraming({
        IndexName: results.indexName,
        IsStale: prepared.isStale,
        TotalResults: results.totalResults,
        IndexTimestamp: new Date().toISOString(),
      })
    : ndjsonFraming((count) => ({
        '@end': { Count: count, IndexName: results.indexName, TotalResults: results.totalResults },
      }));
  await stream(streaming, db, reply, (max) => results.next(max, PAGE_TARGET_CHARS), undefined, framing);
}

/**
 * Writes pages to the reader until the source is done (or `limit` results went out), each page only once
 * the reader took the previous one, then the `@end` line (as `framing` frames them). The stream ends early
 * with an `@error` line (or a cut connection) if reading fails or the database closes; it stops at once,
 * without a word, if the reader leaves.
 */
async function stream(
  streaming: Streaming,
  db: Database,
  reply: FastifyReply,
  read: PageReader,
  limit: number | undefined,
  framing: StreamFraming,
): Promise<void> {
  reply.hijack();
  const writer = new NdjsonWriter(reply.raw);
  streaming.open.add(writer);
  streaming.gauges.streams++;
  const stopOnClose = db.onClose(() =>
    writer.interrupt(
      new RookeryError('DatabaseUnavailable', `Database ${db.name} was deleted or closed during the stream`),
    ),
  );
  let count = 0;
  let pageSize = FIRST_PAGE;
  try {
    if (framing.head !== null) await writer.write([framing.head]);
    for (;;) {
      const max = Math.min(pageSize, (limit ?? Number.POSITIVE_INFINITY) - count);
      const lines = max > 0 ? read(max) : null;
      if (lines === null) break;
      count += lines.length;
      pageSize = nextPageSize(lines, pageSize);
      const before = writer.bytesWritten;
      await writer.write(framing.item === null ? lines : lines.map(framing.item));
      streaming.gauges.streamBytes += writer.bytesWritten - before;
    }
    writer.end(framing.end(count));
  } catch (error) {
    if (error instanceof ReaderGone) {
      reply.log.debug({ count }, 'stream reader left before the end');
      return;
    }
    // Interrupted (the database closed): that is the reason, not whatever the read on a closed file threw.
    const failure = writer.interruption ?? toRookeryError(error, streaming.context.config.maxBodyBytes);
    if (failure.status >= 500 && failure.code !== 'DatabaseUnavailable')
      reply.log.error({ err: error, count }, 'stream failed');
    if (framing.failure === 'cut' && writer.headersSent) writer.destroy();
    else writer.fail(failure);
  } finally {
    stopOnClose();
    streaming.open.delete(writer);
    streaming.gauges.streams--;
  }
}

/** Sizes the next page from the last one's documents, so that a page is about PAGE_TARGET_CHARS. */
function nextPageSize(lines: readonly string[], current: number): number {
  if (lines.length === 0) return current;
  let chars = 0;
  for (const line of lines) chars += line.length;
  const average = Math.max(1, chars / lines.length);
  return Math.max(1, Math.min(MAX_PAGE, Math.floor(PAGE_TARGET_CHARS / average)));
}

/** Documents whose id starts with `prefix`, in id order, after `startAfter`. */
function idOrderPages(db: Database, prefix: string, startAfter: string | null): PageReader {
  let after = startAfter;
  let done = false;
  return (max) => {
    if (done) return null;
    const page = db.documentsInIdOrder(prefix, after, max, PAGE_TARGET_CHARS);
    done = page.done;
    const last = page.documents.at(-1);
    if (last) after = last.id;
    return page.documents.map((document) => document.json);
  };
}

/** A collection's documents in etag order. */
function collectionPages(db: Database, collection: string): PageReader {
  let afterEtag = 0;
  let done = false;
  return (max) => {
    if (done) return null;
    const { documents } = db.documentsAfter(collection, afterEtag, max, PAGE_TARGET_CHARS);
    const chars = documents.reduce((sum, document) => sum + document.json.length, 0);
    done = documents.length < max && chars < PAGE_TARGET_CHARS;
    const last = documents.at(-1);
    if (last) afterEtag = last.etag;
    return documents.map((document) => document.json);
  };
}
