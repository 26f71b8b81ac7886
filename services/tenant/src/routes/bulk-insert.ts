import { Readable } from 'node:stream';
import type { Database } from '@rookery/engine';
import {
  appendPreparedChunk,
  BulkInsertLineSchema,
  type BulkInsertProgress,
  documented,
  emptyPreparedChunk,
  type PreparedChunk,
  RookeryError,
} from '@rookery/protocol';
import type { FastifyInstance, FastifyReply } from 'fastify';
import { z } from 'zod';
import { type BulkParseSession, BulkParseThread, type ParseEvent } from '../bulk/parse-thread.js';
import { toRookeryError } from '../http/problem.js';
import { type StorageMeter, storageQuotaExceeded, storageQuotaOf } from '../http/storage-quota.js';
import { DatabaseParams, databaseOf, type RouteContext } from './context.js';
import { JsonArrayToLines } from './ravendb/bulk-array.js';
import type { RavenOperations } from './ravendb/operations.js';

/**
 * Bytes the parse thread may hold unparsed before the request thread stops
 * reading the body: memory per bulk insert stays bounded however fast the
 * client sends. Several chunks' worth, so that the parse thread has input
 * while the request thread is busy storing (4 MiB, less than a chunk of
 * 5,000 1 KB documents, cost ~10%).
 */
const MAX_BACKLOG_BYTES = 16 * 1024 * 1024;

/**
 * Documents gathered from the parse thread before they are stored in one transaction. docs.db's
 * `id_lower` index takes ids in no particular order, so a transaction rewrites in the WAL every index
 * page it touched, however few of its entries changed: 200,000 package versions stored 2,700 to a
 * transaction wrote 633 MB, 10,000 to a transaction 458 MB, and a commit waits for all of it to reach
 * the disk (docs/benchmarks.md, "Bulk load against COPY"). More than this waits longer before the first
 * Progress line and holds more in memory, for little less written.
 */
export const TRANSACTION_DOCUMENTS = 10_000;

/**
 * `POST /databases/{db}/bulk_insert`: a stream of NDJSON lines
 * `{"Id": "...", "Document": {...}}`, stored thousands per transaction.
 *
 * The lines are parsed, checked and serialised on a parse thread
 * (bulk/parse-worker.ts) while this thread stores the chunks it hands back:
 * with both cores busy a bulk insert runs ~1.5× faster than parsing and
 * storing one after the other. Chunks are gathered until TRANSACTION_DOCUMENTS
 * are ready (or the parse thread is far behind, or the body ended), then
 * stored in one transaction.
 *
 * The response is NDJSON too: a `Progress` line after every committed transaction and
 * a final `Completed` or `Failed` line. Everything before a failing line is
 * stored, nothing after it. A failure before the first commit is answered as a
 * plain problem+json with its 4xx status.
 *
 * With a storage quota forwarded by the gateway, each chunk is stored only if
 * the tenant's bytes, measured before it, plus the chunk's fit in the quota: the
 * first chunk that does not fit ends the bulk insert with 507
 * `StorageQuotaExceeded`, and `Processed` says how many documents were stored.
 *
 * RavenDB's clients (`store.bulkInsert()`) send `application/json` instead: one JSON array of commands, for
 * operation `?id=` (routes/ravendb/operations.ts). It is read as the same lines (ravendb/bulk-array.ts) and
 * answered as RavenDB does: nothing until the end, then `204`, or the problem, whose message the operation's
 * state also carries (the client asks it for the reason of a failed bulk insert).
 */
export function bulkInsertRoutes(
  app: FastifyInstance,
  context: RouteContext,
  operations: RavenOperations,
): void {
  const parseThread = new BulkParseThread();
  app.addHook('onClose', () => parseThread.close());

  // A scope of its own, so that JSON bodies reach this route unparsed (as a stream) and no other.
  app.register(async (scope) => {
    const asStream = (_request: unknown, payload: Readable, done: (error: null, body: Readable) => void) =>
      done(null, payload);
    scope.addContentTypeParser('application/x-ndjson', asStream);
    scope.removeContentTypeParser('application/json');
    scope.addContentTypeParser('application/json', asStream);

    const schema = {
      summary: 'Stream documents in, thousands per transaction, with progress lines streamed back',
      params: DatabaseParams,
      // The body is a stream, read line by line as it arrives (never whole): each line is checked on the
      // parse thread. A line as NDJSON; with application/json, RavenDB's array of such commands.
      body: documented(BulkInsertLineSchema, { mediaTypes: ['application/x-ndjson', 'application/json'] }),
      // RavenDB's operation id (ravenOperationOf), from GET …/operations/next-operation-id.
      querystring: documented(z.object({ id: z.coerce.number().int().min(1).optional() })),
    };
    scope.post('/databases/:db/bulk_insert', { schema }, async (request, reply) => {
      const db = databaseOf(context, request);
      if (!(request.body instanceof Readable)) {
        throw new RookeryError(
          'UnsupportedMediaType',
          'bulk_insert takes NDJSON: send "Content-Type: application/x-ndjson"',
        );
      }
      const raven = ravenOperationOf(request.headers['content-type'], request.query);
      const quota = storageQuotaOf(request.headers);
      reply.hijack();
      const session = parseThread.open(context.config.maxDocumentBytes);
      const allowance = quota === null ? null : { quota, storage: context.storage };
      const answer: BulkAnswer =
        raven === null
          ? NDJSON_ANSWER
          : {
              framer: new JsonArrayToLines(),
              progressLines: false,
              settled: (error, processed) =>
                operations.record(
                  db.name,
                  raven,
                  error === null
                    ? { Status: 'Completed', Result: { Total: processed } }
                    : { Status: 'Faulted', Result: { Error: error.message, Message: error.message } },
                ),
            };
      try {
        await new BulkInsert(db, reply, session, context.config.maxBodyBytes, allowance, answer).run(
          request.body,
        );
      } finally {
        session.close();
      }
    });
  });
}

/**
 * For a RavenDB bulk insert (a JSON body), its operation id (`?id=`, 0 when absent: the client always sends
 * one); null for Rookery's NDJSON.
 */
function ravenOperationOf(contentType: string | undefined, query: unknown): number | null {
  if (!contentType?.toLowerCase().startsWith('application/json')) return null;
  const id = Number((query as { id?: string }).id);
  return Number.isSafeInteger(id) && id > 0 ? id : 0;
}

/** How a bulk insert reads its body and answers: Rookery's NDJSON both ways, or RavenDB's (above). */
interface BulkAnswer {
  /** Turns the body into NDJSON lines; null: it is NDJSON already. */
  framer: JsonArrayToLines | null;
  /** Progress lines as chunks are stored, and the final line; without them, `204` or a problem at the end. */
  progressLines: boolean;
  /** Told the outcome before the answer leaves, so that whoever reads the answer finds it recorded. */
  settled: ((error: RookeryError | null, processed: number) => void) | null;
}

const NDJSON_ANSWER: BulkAnswer = { framer: null, progressLines: true, settled: null };

/**
 * A failure inside the bulk insert, with what is still to be stored before it is reported: for a bad line,
 * the lines before it that no chunk carried yet; for a chunk that could not be stored, nothing more.
 */
class BulkFailure extends Error {
  constructor(
    readonly error: RookeryError,
    readonly storeFirst: readonly PreparedChunk[],
  ) {
    super(error.message);
  }
}

class BulkInsert {
  private readonly started = performance.now();
  private processed = 0;
  private batches = 0;
  private headersSent = false;
  /** Chunks handed back by the parse thread and not stored yet, in order; `readyDocuments` in all. */
  private ready: PreparedChunk[] = [];
  private readyDocuments = 0;
  /** Whether a commit is reported with a Progress line: not those made only to store what precedes a failure. */
  private reporting = true;

  constructor(
    private readonly db: Database,
    private readonly reply: FastifyReply,
    private readonly session: BulkParseSession,
    private readonly maxBodyBytes: number,
    /** The tenant's storage quota and how to measure what it stores; null: no quota to hold to. */
    private readonly allowance: { quota: number; storage: StorageMeter } | null,
    private readonly answer: BulkAnswer,
  ) {}

  async run(body: Readable): Promise<void> {
    try {
      // destroyOnReturn: false, so that a bad line does not tear down the connection before we answer.
      for await (const data of body.iterator({ destroyOnReturn: false })) {
        const framer = this.answer.framer;
        this.session.push(framer ? framer.push(data as Buffer) : (data as Buffer));
        // Gather what is parsed (handle stores a transaction's worth); while the parse thread is far
        // behind, stop reading, and store what is ready rather than wait idle.
        for (;;) {
          const event = this.session.take();
          if (event) await this.handle(event);
          else if (this.session.backlog <= MAX_BACKLOG_BYTES) break;
          else if (this.readyDocuments > 0) await this.storeReady();
          else await this.session.changed();
        }
        if (framer?.closed) break; // the client keeps the body open (see JsonArrayToLines.closed)
      }
      this.answer.framer?.end();
      this.session.end();
      while ((await this.handle(await this.session.next())) !== 'ended');
      await this.storeReady();
      this.finish({
        Type: 'Completed',
        ...this.counts(),
        DocsPerSecond: Math.round(this.processed / (this.elapsed() / 1000)),
      });
    } catch (error) {
      if (error instanceof BulkFailure) {
        await this.fail(error.error, error.storeFirst);
      } else {
        if (!(error instanceof RookeryError) && body.destroyed) return; // the client went away: nobody to answer
        // The request itself failed: the chunks parsed so far are stored.
        await this.fail(toRookeryError(error, this.maxBodyBytes), this.session.takeChunks());
      }
      body.resume(); // discard the unread rest so the connection stays usable
    }
  }

  /**
   * Gathers a chunk (storing the gathered ones once they are a transaction's worth), or throws the parse
   * thread's failure (fail() stores the gathered chunks, then the failure's own).
   */
  private async handle(event: ParseEvent): Promise<'chunk' | 'ended'> {
    switch (event.type) {
      case 'chunk':
        this.ready.push(event.chunk);
        this.readyDocuments += event.chunk.ids.length;
        if (this.readyDocuments >= TRANSACTION_DOCUMENTS) await this.storeReady();
        return 'chunk';
      case 'ended':
        return 'ended';
      case 'failed':
        throw new BulkFailure(new RookeryError(event.error.code, event.error.message, event.error.details), [
          event.chunk,
        ]);
    }
  }

  /** Stores the gathered chunks, in one transaction when they fit. */
  private async storeReady(): Promise<void> {
    const chunks = this.takeReady();
    if (chunks.length > 0) await this.storeAll(chunks);
  }

  private takeReady(): PreparedChunk[] {
    const chunks = this.ready;
    this.ready = [];
    this.readyDocuments = 0;
    return chunks;
  }

  /**
   * Gathered chunks go into one transaction together; under a quota, only if they fit together, or else
   * one by one up to the first that does not fit.
   */
  private async storeAll(chunks: PreparedChunk[]): Promise<void> {
    if (chunks.length > 1) {
      const merged = emptyPreparedChunk();
      for (const chunk of chunks) appendPreparedChunk(merged, chunk);
      if ((await this.fits(merged)) === true) return this.commit(merged);
    }
    for (const chunk of chunks) await this.store(chunk);
  }

  /** True, or the refusal for a chunk that would take the tenant past its storage quota. */
  private async fits(chunk: PreparedChunk): Promise<true | RookeryError> {
    if (!this.allowance) return true;
    const { quota, storage } = this.allowance;
    const stored = await storage.measure();
    const adding = estimatedBytes(chunk);
    if (stored + adding <= quota) return true;
    return storageQuotaExceeded(
      quota,
      `The tenant stores ${stored} bytes, and the next ${chunk.ids.length} documents (~${adding} bytes) would take it past its storage quota. ` +
        `This bulk insert stored ${this.processed} documents, the ones before "${chunk.ids[0]}", and nothing from there on`,
    );
  }

  /**
   * Stores one chunk; a chunk that cannot be stored, or would take the tenant past its storage quota, ends
   * the bulk insert, and nothing after it is stored.
   */
  private async store(chunk: PreparedChunk): Promise<void> {
    const fits = await this.fits(chunk);
    if (fits !== true) throw new BulkFailure(fits, []);
    await this.commit(chunk);
  }

  /** Stores a chunk already held to the quota; a Progress line tells the client once it is durable. */
  private async commit(chunk: PreparedChunk): Promise<void> {
    try {
      this.processed += await this.db.insertPrepared(chunk);
    } catch (error) {
      throw new BulkFailure(toRookeryError(error, this.maxBodyBytes), []);
    }
    this.batches++;
    if (this.reporting) this.write({ Type: 'Progress', ...this.counts() });
  }

  /**
   * Stores the gathered chunks (reported, as they would have been had the failure come later), then
   * `storeFirst` (no progress line: a failure before any commit keeps its own 4xx status), then reports.
   */
  private async fail(error: RookeryError, storeFirst: readonly PreparedChunk[]): Promise<void> {
    let reported = error;
    try {
      await this.storeReady();
      this.reporting = false;
      const chunks = storeFirst.filter((chunk) => chunk.ids.length > 0);
      if (chunks.length > 0) await this.storeAll(chunks);
    } catch (failure) {
      reported = (failure as BulkFailure).error;
    }
    const details = { ...reported.toProblem(), Processed: this.processed };
    this.answer.settled?.(reported, this.processed);
    if (!this.headersSent) {
      this.reply.raw.writeHead(reported.status, {
        'content-type': 'application/problem+json',
        // A RavenDB client's body may never end (JsonArrayToLines.closed): the answer closes the connection.
        ...(this.answer.framer ? { connection: 'close' } : {}),
      });
      this.reply.raw.end(JSON.stringify(details));
      return;
    }
    this.finish({ Type: 'Failed', ...this.counts(), Error: details });
  }

  private counts() {
    return { Processed: this.processed, Batches: this.batches, ElapsedMs: Math.round(this.elapsed()) };
  }

  private elapsed(): number {
    return performance.now() - this.started;
  }

  private write(line: BulkInsertProgress): void {
    if (!this.answer.progressLines) return;
    if (!this.headersSent) {
      this.reply.raw.writeHead(200, { 'content-type': 'application/x-ndjson' });
      this.headersSent = true;
    }
    this.reply.raw.write(`${JSON.stringify(line)}\n`);
  }

  private finish(line: BulkInsertProgress): void {
    if (!this.answer.progressLines) {
      // Only a completion gets here: without progress lines the headers never left, so a failure is a problem.
      this.answer.settled?.(null, this.processed);
      // The connection closes with the answer: the client's body was never ended, so it cannot carry another.
      this.reply.raw.writeHead(204, { connection: 'close' }).end();
      return;
    }
    this.write(line);
    this.reply.raw.end();
  }
}

/**
 * What a chunk adds to the tenant's files, roughly: its JSON text. Bodies over the compression threshold take
 * less; pages, row headers and the WAL (which holds a transaction once more until its checkpoint) take more.
 */
function estimatedBytes(chunk: PreparedChunk): number {
  let bytes = 0;
  for (let i = 0; i < chunk.ids.length; i++) {
    bytes += chunk.ids[i]!.length + chunk.bodies[i]!.length + (chunk.metadata[i]?.length ?? 0);
  }
  return bytes;
}
