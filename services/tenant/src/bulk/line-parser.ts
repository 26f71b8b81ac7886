// Bulk insert's NDJSON lines → prepared documents, in chunks of a transaction
// each. Runs on bulk insert's parse thread (parse-worker.ts): parsing, checking
// and serialising a 1 KB document costs more CPU than storing it, so the request
// thread only stores while this runs beside it.
import {
  appendPrepared,
  BulkInsertLineSchema,
  emptyPreparedChunk,
  type PreparedChunk,
  type PreparedDocument,
  prepareDocument,
  RookeryError,
} from '@rookery/protocol';
import secureJson from 'secure-json-parse';
import { cannotHoldPoisonedKeys } from '../http/json-body.js';
import { LineSplitter } from '../http/ndjson.js';

/**
 * Documents per chunk handed to the request thread. Chunks parsed while the previous one was being stored
 * are stored together (routes/bulk-insert.ts), so a transaction holds one chunk or several: ~2,700
 * documents on average in bench:writes. Measured on 200,000 1 KB documents (docs/benchmarks.md): 2,000
 * stores ~20% faster than 5,000 (the request thread gets back to feeding the parse thread sooner) and
 * 500 is slower again (commits no longer amortised).
 */
export const CHUNK_DOCUMENTS = 2_000;
const CHUNK_BYTES = 8 * 1024 * 1024;

/** JSON.parse, refusing `__proto__` and `constructor` keys (the scan skipped where they cannot be). */
function parseUntrustedJson(text: string): unknown {
  if (cannotHoldPoisonedKeys(text)) return JSON.parse(text);
  return secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' });
}

export class BulkLineParser {
  private readonly splitter: LineSplitter;
  private chunk = emptyPreparedChunk();
  private chunkBytes = 0;

  /** `emit` gets each full chunk, in order; a bad line throws a RookeryError naming it, after the chunks before it. */
  constructor(
    maxDocumentBytes: number,
    private readonly emit: (chunk: PreparedChunk) => void,
  ) {
    this.splitter = new LineSplitter(maxDocumentBytes);
  }

  push(data: Buffer): void {
    this.splitter.push(data, this.accept);
  }

  /** The last line (with or without its newline) and the last, partial chunk. */
  end(): void {
    this.splitter.end(this.accept);
    this.flush();
  }

  /** The lines accepted since the last chunk: after a failure, those before the bad line, to store with its report. */
  takePending(): PreparedChunk {
    const chunk = this.chunk;
    this.chunk = emptyPreparedChunk();
    this.chunkBytes = 0;
    return chunk;
  }

  private flush(): void {
    if (this.chunk.ids.length > 0) this.emit(this.takePending());
  }

  private readonly accept = (text: string, line: number): void => {
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
    let prepared: PreparedDocument;
    try {
      prepared = prepareDocument(parsed.data.Id, parsed.data.Document);
    } catch (error) {
      // A bad @metadata is reported by its line number rather than failing its whole chunk.
      if (error instanceof RookeryError) {
        throw new RookeryError(error.code, `Line ${line}: ${error.message}`, { ...error.details, line });
      }
      throw error;
    }
    appendPrepared(this.chunk, parsed.data.Id, prepared);
    this.chunkBytes += text.length;
    if (this.chunk.ids.length >= CHUNK_DOCUMENTS || this.chunkBytes >= CHUNK_BYTES) this.flush();
  };
}
