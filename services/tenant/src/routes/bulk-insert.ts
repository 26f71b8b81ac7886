import { Readable } from 'node:stream';
import type { Database } from '@rookery/engine';
import {
  type BulkInsertLine,
  BulkInsertLineSchema,
  type BulkInsertProgress,
  MetadataInputSchema,
  RookeryError,
} from '@rookery/protocol';
import type { FastifyInstance, FastifyReply } from 'fastify';
import secureJson from 'secure-json-parse';
import { LineSplitter } from '../http/ndjson.js';
import { toRookeryError } from '../http/problem.js';
import { databaseOf, type RouteContext } from './context.js';

/** Documents per transaction: big enough to amortise the commit, small enough to keep a commit short. */
const CHUNK_DOCUMENTS = 5_000;
const CHUNK_BYTES = 8 * 1024 * 1024;

/**
 * `POST /databases/{db}/bulk_insert`: a stream of NDJSON lines
 * `{"Id": "...", "Document": {...}}`, stored thousands per transaction.
 *
 * The response is NDJSON too: a `Progress` line after every committed chunk and
 * a final `Completed` or `Failed` line. Everything before a failing line is
 * stored, nothing after it. A failure before the first commit is answered as a
 * plain problem+json with its 4xx status.
 */
export function bulkInsertRoutes(app: FastifyInstance, context: RouteContext): void {
  app.addContentTypeParser('application/x-ndjson', (_request, payload, done) => done(null, payload));

  app.post('/databases/:db/bulk_insert', async (request, reply) => {
    const db = databaseOf(context, request);
    if (!(request.body instanceof Readable)) {
      throw new RookeryError(
        'UnsupportedMediaType',
        'bulk_insert takes NDJSON: send "Content-Type: application/x-ndjson"',
      );
    }
    reply.hijack();
    await new BulkInsert(db, reply, context.config.maxDocumentBytes, context.config.maxBodyBytes).run(
      request.body,
    );
  });
}

/**
 * JSON.parse, refusing `__proto__` and `constructor` keys. secure-json-parse's
 * scan costs ~6% of a bulk insert, so lines that cannot contain those keys
 * (not even \u-escaped) skip it.
 */
function parseUntrustedJson(text: string): unknown {
  if (!text.includes('__proto__') && !text.includes('constructor') && !text.includes('\\u'))
    return JSON.parse(text);
  return secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
}

class BulkInsert {
  private readonly started = performance.now();
  private chunk: BulkInsertLine[] = [];
  private chunkBytes = 0;
  /** Chunks that reached their size while a network read was being split, waiting for their commit. */
  private full: BulkInsertLine[][] = [];
  private processed = 0;
  private batches = 0;
  private headersSent = false;

  constructor(
    private readonly db: Database,
    private readonly reply: FastifyReply,
    private readonly maxDocumentBytes: number,
    private readonly maxBodyBytes: number,
  ) {}

  async run(body: Readable): Promise<void> {
    const splitter = new LineSplitter(this.maxDocumentBytes);
    const onLine = (text: string, line: number) => this.accept(text, line);
    try {
      // destroyOnReturn: false, so that a bad line does not tear down the connection before we answer.
      for await (const data of body.iterator({ destroyOnReturn: false })) {
        splitter.push(data as Buffer, onLine);
        await this.commitFullChunks();
      }
      splitter.end(onLine);
      this.sealChunk();
      await this.commitFullChunks();
      this.finish({
        Type: 'Completed',
        ...this.counts(),
        DocsPerSecond: Math.round(this.processed / (this.elapsed() / 1000)),
      });
    } catch (error) {
      if (!(error instanceof RookeryError) && body.destroyed) return; // the client went away: nobody to answer
      await this.fail(toRookeryError(error, this.maxBodyBytes));
      body.resume(); // discard the unread rest so the connection stays usable
    }
  }

  private accept(text: string, line: number): void {
    let value: unknown;
    try {
      value = parseUntrustedJson(text);
    } catch (error) {
      throw new RookeryError('InvalidJson', `Line ${line} is not valid JSON (${(error as Error).message})`, {
        line,
      });
    }
    const parsed = BulkInsertLineSchema.safeParse(value);
    if (!parsed.success) {
      const issue = parsed.error.issues[0]!;
      throw new RookeryError(
        'InvalidRequest',
        `Line ${line} is not a bulk insert line: ${issue.path.join('.') || '(root)'}: ${issue.message}. Each line is {"Id": "...", "Document": {...}}`,
        { line },
      );
    }
    // Metadata is checked here so that a bad line is reported by its number rather than failing its whole chunk.
    const metadata = parsed.data.Document['@metadata'];
    if (metadata !== undefined && !MetadataInputSchema.safeParse(metadata).success) {
      throw new RookeryError(
        'InvalidMetadata',
        `Line ${line}: the @metadata of ${parsed.data.Id} is not valid`,
        { line },
      );
    }
    this.chunk.push(parsed.data);
    this.chunkBytes += text.length;
    if (this.chunk.length >= CHUNK_DOCUMENTS || this.chunkBytes >= CHUNK_BYTES) this.sealChunk();
  }

  private sealChunk(): void {
    if (this.chunk.length === 0) return;
    this.full.push(this.chunk);
    this.chunk = [];
    this.chunkBytes = 0;
  }

  private async commitFullChunks(reportProgress = true): Promise<void> {
    for (let chunk = this.full.shift(); chunk !== undefined; chunk = this.full.shift()) {
      this.processed += await this.db.insertMany(chunk);
      this.batches++;
      if (reportProgress) this.write({ Type: 'Progress', ...this.counts() });
    }
  }

  /** Stores the lines before the failing one, then reports the failure. */
  private async fail(error: RookeryError): Promise<void> {
    let reported = error;
    try {
      this.sealChunk();
      // No progress line here: if nothing was sent yet, the failure still gets its own 4xx status.
      await this.commitFullChunks(false);
    } catch (commitError) {
      reported = toRookeryError(commitError, this.maxBodyBytes);
    }
    const details = { ...reported.toProblem(), Processed: this.processed };
    if (!this.headersSent) {
      this.reply.raw.writeHead(reported.status, { 'content-type': 'application/problem+json' });
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
    if (!this.headersSent) {
      this.reply.raw.writeHead(200, { 'content-type': 'application/x-ndjson' });
      this.headersSent = true;
    }
    this.reply.raw.write(`${JSON.stringify(line)}\n`);
  }

  private finish(line: BulkInsertProgress): void {
    this.write(line);
    this.reply.raw.end();
  }
}
