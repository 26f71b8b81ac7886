import { RookeryError } from '@rookery/protocol';
import type { Database } from '../database.js';
import type { PreparedQuery } from './query-runner.js';

/** Projects a page of documents (`select …`); `seen` carries `select distinct` across pages. */
export type PageProjection = (documents: Record<string, unknown>[], seen: Set<string>) => unknown[];

/**
 * A query's results read page by page, for `/streams/queries`: the caller takes a page, writes it, waits
 * for its reader, then takes the next. Each page is read synchronously, so no statement stays open across
 * those waits (better-sqlite3 cannot keep an iterator open while the connection serves others).
 *
 * Memory is bounded by the page, not by the result: through an index, the matching entries are read once,
 * in order, as entry numbers only (8 bytes per match: 200k matches hold 1.6 MB), and their documents are
 * loaded per page. Reading the entry numbers once, rather than re-running the query per page with an
 * offset, keeps the order of one state of the index (no match repeated or skipped when the index moves
 * between pages) and costs one sort instead of one per page. A collection without an index is read in
 * etag order, in keyset pages. Documents are written as stored JSON text unless a projection needs them
 * parsed.
 */
export class QueryStream {
  readonly indexName: string | null;
  /** Matches of the query (before offset and limit), as a paged query reports them. */
  readonly totalResults: number;
  private readonly entries: number[] | null = null;
  private position = 0;
  private afterEtag = 0;
  private toSkip = 0;
  private remaining: number;
  private finished = false;
  private readonly seen = new Set<string>();

  constructor(
    private readonly db: Database,
    private readonly prepared: PreparedQuery,
    window: { skip: number; take: number },
    private readonly project: PageProjection | null,
  ) {
    const { ast, compiler, reader } = prepared;
    if (ast.select?.kind === 'selectFacets' || ast.select?.kind === 'selectSuggest') {
      throw new RookeryError(
        'InvalidQuery',
        'Facets and suggestions are not streamed: ask POST /databases/{db}/queries for them',
      );
    }
    if ((ast.include ?? []).length > 0) {
      throw new RookeryError(
        'InvalidQuery',
        'A streamed query cannot include documents, timings or explanations: drop the include clause, or ' +
          'page the query with POST /databases/{db}/queries',
      );
    }
    this.indexName = reader?.definition.Name ?? null;
    this.remaining = window.take;
    if (reader) {
      const matched = reader.matchingEntries({
        where: compiler.where(),
        orderBy: compiler.orderBy(),
        skip: window.skip,
        take: window.take,
      });
      this.entries = matched.entries;
      this.totalResults = matched.total;
    } else {
      this.toSkip = window.skip;
      this.totalResults = db.collectionCount(prepared.collection);
    }
  }

  /**
   * The next results as JSON text (one value each), reading at most `max` entries or documents, and no more
   * once `maxChars` characters of them were read (always at least one); fewer (even none) when documents
   * went away or `select distinct` dropped repeats. Null once the stream is done.
   */
  next(max: number, maxChars = Number.POSITIVE_INFINITY): string[] | null {
    if (this.finished) return null;
    const texts = this.entries
      ? this.nextFromIndex(this.entries, max, maxChars)
      : this.nextFromCollection(max, maxChars);
    if (!this.project) return texts;
    const documents = texts.map((text) => JSON.parse(text) as Record<string, unknown>);
    return this.project(documents, this.seen).map((row) => JSON.stringify(row));
  }

  private nextFromIndex(entries: number[], max: number, maxChars: number): string[] {
    const reader = this.prepared.reader!;
    // The entry numbers are those of the file the stream started on: another file (the index replaced,
    // reset or deleted since) numbers its entries differently.
    if (!reader.connection.open || !reader.isCurrent()) {
      throw new RookeryError(
        'DatabaseUnavailable',
        `Index ${reader.definition.Name} was replaced or deleted while the stream was read; run the query again`,
      );
    }
    const page = entries.slice(this.position, this.position + max);
    const texts: string[] = [];
    let chars = 0;
    // Entry by entry: a page of large documents ends once it holds maxChars, and the rest wait for the next.
    for (const id of page) {
      this.position++;
      const [entry] = reader.loadEntries([id]);
      if (!entry) continue;
      let text: string | null = null;
      if (entry.stored !== null) text = entry.stored;
      // The index may be a moment behind a delete: a document that is gone is skipped, never invented.
      else if (entry.docId !== null) text = this.db.get(entry.docId)?.json ?? null;
      if (text !== null) {
        texts.push(text);
        chars += text.length;
        if (chars >= maxChars) break;
      }
    }
    if (this.position >= entries.length) this.finished = true;
    return texts;
  }

  private nextFromCollection(max: number, maxChars: number): string[] {
    const limit = Math.min(max, this.toSkip + this.remaining);
    // Skipped documents count towards maxChars too: they were read.
    const { documents } = this.db.documentsAfter(this.prepared.collection, this.afterEtag, limit, maxChars);
    const chars = documents.reduce((sum, document) => sum + document.json.length, 0);
    if ((documents.length < limit && chars < maxChars) || limit === 0) this.finished = true;
    const last = documents.at(-1);
    if (last) this.afterEtag = last.etag;
    const skipped = Math.min(this.toSkip, documents.length);
    this.toSkip -= skipped;
    const kept = documents.slice(skipped, skipped + this.remaining);
    this.remaining -= kept.length;
    if (this.remaining === 0) this.finished = true;
    return kept.map((document) => document.json);
  }
}
