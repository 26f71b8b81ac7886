import type { IndexDefinition } from '@rookery/protocol';
import type BetterSqlite3 from 'better-sqlite3';
import type { PreparedBatch } from './batch-preparer.js';
import { BulkBuild, TERMS_STAGING_TABLE } from './bulk-build.js';
import { ChunkedInsert } from './chunked-insert.js';
import type { EntryRows } from './entry-rows.js';
import { compareTerms, NULL_TERM, type TermValue } from './field-values.js';
import { FtsPostings } from './fts-postings.js';
import { FieldRegistry, searchFieldsOf } from './index-file.js';
import { MapReduceWriter, type ReduceError } from './map-reduce-writer.js';
import type { SandboxLimits } from './sandbox/index.js';
import { SuggestStore } from './suggest-store.js';
import type { SortedTerms } from './term-buffer.js';

// Thrown by a map/reduce index's write and reduceChunk; the indexer that catches it imports it with the writer.
export { ReduceBudgetExceeded } from './map-reduce-writer.js';

const MAX_STORED_ERRORS = 500;

export interface BatchOutcome {
  documents: number;
  /** Deleted documents whose entries the batch removed (tombstones read). */
  removed: number;
  entriesWritten: number;
  errors: number;
  upToEtag: number;
}

/**
 * Applies prepared batches (see batch-preparer.ts) to one index file, each
 * in one transaction: old entries of every changed document are removed in
 * one sorted pass, new entries and their terms are inserted in key order,
 * term counters are adjusted once per batch, affected groups are re-reduced,
 * and the index's etag moves on. Apart from a map/reduce index's reduce, only
 * SQLite work happens here: mapping and building rows was done before,
 * possibly on another thread. A map/reduce index's map results and reduce are
 * MapReduceWriter's (map-reduce-writer.ts); this class owns the transaction.
 */
export class IndexWriter {
  readonly definition: IndexDefinition;
  private readonly fields: FieldRegistry;
  private readonly s;
  /** Term counter changes of the batch, per field id and value (the null term is the one NULL_TERM key). */
  private readonly deltas = new Map<number, Map<TermValue, number>>();
  private readonly insertTerms: ChunkedInsert;
  /** Term rows of a bulk build, into its staging table (made on first use: the table exists only then). */
  private stageTerms: ChunkedInsert | null = null;
  private readonly addCounts: ChunkedInsert;
  private entryDelta = 0;
  private readonly searchColumns: number;
  /** A map/reduce index's map results and reduce (null for a map index); its results come back through writeEntries. */
  private readonly mapReduce: MapReduceWriter | null;
  /** The suggestion structure of the fields with `Suggestions: true`, kept with the terms (suggest-store.ts). */
  private readonly suggest: SuggestStore | null;
  /** The full-text posting lists read whole by searches (fts-postings.ts), kept with the FTS table. */
  private readonly postings: FtsPostings | null;
  /** The first build's state: what it leaves for its end (bulk-build.ts). */
  private readonly bulk: BulkBuild;

  constructor(
    private readonly db: BetterSqlite3.Database,
    definition: IndexDefinition,
    limits?: Partial<SandboxLimits>,
  ) {
    this.definition = definition;
    this.fields = new FieldRegistry(db, true);
    // Built here, on open, for a file made before the structure existed.
    this.suggest = SuggestStore.open(db, definition, this.fields);
    this.postings = FtsPostings.open(db, definition);
    this.bulk = new BulkBuild(db, definition.Reduce !== undefined);
    const searchFields = searchFieldsOf(definition);
    this.searchColumns = searchFields.length;
    this.mapReduce =
      definition.Reduce === undefined
        ? null
        : new MapReduceWriter(db, definition, limits, {
            removeEntriesOf: (sources) => this.removeEntriesOf(sources),
            writeEntries: (rows) => this.writeEntries(rows),
          });
    this.insertTerms = new ChunkedInsert(
      db,
      'INSERT OR IGNORE INTO terms (field, value, entry) VALUES $rows',
    );
    this.addCounts = new ChunkedInsert(
      db,
      `INSERT INTO term_counts (field, value, count) VALUES $rows
       ON CONFLICT (field, value) DO UPDATE SET count = count + excluded.count`,
    );
    this.s = {
      getMeta: db.prepare<[string], { value: number | string }>('SELECT value FROM meta WHERE key = ?'),
      setMeta: db.prepare<[number | string, string]>('UPDATE meta SET value = ? WHERE key = ?'),
      nextEntryId: db.prepare<[], { id: number }>('SELECT coalesce(max(id), 0) + 1 AS id FROM entries'),
      entriesOf: db.prepare<[string], { id: number }>('SELECT id FROM entries WHERE source = ?'),
      termsOf: db.prepare<[number], { field: number; value: TermValue }>(
        'SELECT field, value FROM terms WHERE entry = ?',
      ),
      deleteTerm: db.prepare<[number, TermValue, number]>(
        'DELETE FROM terms WHERE field = ? AND value = ? AND entry = ?',
      ),
      deleteEntry: db.prepare<[number]>('DELETE FROM entries WHERE id = ?'),
      deleteSpatial: db.prepare<[number]>('DELETE FROM spatial WHERE entry = ?'),
      deleteFts: searchFields.length > 0 ? db.prepare<[number]>('DELETE FROM fts WHERE rowid = ?') : null,
      insertEntry: db.prepare<[number, string, string | null, string | null]>(
        'INSERT INTO entries (id, source, doc_id, stored) VALUES (?, ?, ?, ?)',
      ),
      insertSpatial: db.prepare<[number, number, number, number]>(
        'INSERT INTO spatial (entry, field, lat, lng) VALUES (?, ?, ?, ?)',
      ),
      insertFts:
        searchFields.length > 0
          ? db.prepare(
              `INSERT INTO fts (rowid, ${searchFields.map((_, i) => `c${i}`).join(', ')})
               VALUES (?${', ?'.repeat(searchFields.length)})`,
            )
          : null,
      dropEmptyCount: db.prepare<[number, TermValue]>(
        'DELETE FROM term_counts WHERE field = ? AND value = ? AND count <= 0',
      ),
      insertError: db.prepare<[number, string | null, string]>(
        'INSERT INTO errors (at, document, error) VALUES (?, ?, ?)',
      ),
      trimErrors: db.prepare(
        `DELETE FROM errors WHERE id <= (SELECT max(id) - ${MAX_STORED_ERRORS} FROM errors)`,
      ),
    };
  }

  /** The etag the index has caught up with: what its queries and stats see (stale below the documents' last). */
  get lastEtag(): number {
    return Number(this.s.getMeta.get('last_etag')?.value ?? 0);
  }

  /**
   * Where the next batch of documents starts: `lastEtag`, except in a first build's reduce phase,
   * which holds `lastEtag` back (the index is stale until every group is reduced) while its map
   * phase has read further.
   */
  get readsFrom(): number {
    return this.bulk.mappedTo ?? this.lastEtag;
  }

  /** True while a map/reduce index's first build reduces its groups: `reduceChunk`, not `write`, moves it on. */
  get reducing(): boolean {
    return this.bulk.phase === 'reduce';
  }

  /**
   * Stores one prepared batch; returns what it did. `final`: the batch reaches the documents' last
   * etag (as the caller read it before the batch), so a bulk build ends in its transaction; a first
   * batch that is not final starts one (bulk-build.ts).
   */
  write(batch: PreparedBatch, options: { final?: boolean } = {}): BatchOutcome {
    if (this.reducing)
      throw new Error(
        'internal: a first build reduces its groups (reduceChunk) before it takes more documents',
      );
    let entriesWritten = 0;
    const errors = [...batch.errors];
    const run = this.db.transaction(() => {
      if (!options.final) this.bulk.beginIfEmpty(this.lastEtag);
      if (batch.mapResults && this.bulk.phase === 'map') {
        this.mapReduceWriter().replaceMapResults(batch.sources, batch.mapResults);
      } else if (batch.mapResults) {
        entriesWritten = this.mapReduceWriter().applyReduce(
          batch.sources,
          batch.mapResults,
          batch.documents,
          errors,
        );
      } else {
        this.removeEntriesOf(batch.sources);
        if (batch.entries) entriesWritten = this.writeEntries(batch.entries);
      }
      for (const e of errors) this.s.insertError.run(Date.now(), e.document, e.error);
      if (errors.length > 0) this.s.trimErrors.run();
      this.flushCounts();
      if (options.final && this.bulk.phase === 'map') this.bulk.endMapPhase(batch.upToEtag);
      else if (options.final) this.bulk.finish();
      // The reduce phase's end moves it (reduceChunk).
      if (!this.reducing) this.s.setMeta.run(batch.upToEtag, 'last_etag');
    });
    try {
      run();
    } catch (error) {
      this.rollBack(error);
      throw error;
    }
    return {
      documents: batch.documents,
      removed: batch.removed,
      entriesWritten,
      errors: errors.length,
      upToEtag: batch.upToEtag,
    };
  }

  /**
   * In a first build's reduce phase (bulk-reduce.ts): reduces the next groups, at most `maxGroups`,
   * taking more while the chunk's time budget lasts, and writes their results, in one transaction.
   * The chunk that finds no group left ends the build and moves `lastEtag` to where its map phase
   * read. A JavaScript reduce that overruns the budget in a chunk of several groups rolls it back
   * (ReduceBudgetExceeded): the caller asks again for fewer. A group whose reduce fails is an error
   * in the index's errors (its stats), not in the outcome: the chunk moved on, and an outcome with
   * errors and no documents says a batch failed (runUntilIdle and the worker's build stop on it).
   */
  reduceChunk(maxGroups: number): BatchOutcome {
    if (!this.reducing || !this.mapReduce) throw new Error('internal: no reduce phase to move on');
    const mapReduce = this.mapReduce;
    let entriesWritten = 0;
    const errors: ReduceError[] = [];
    const upToEtag = this.readsFrom;
    const run = this.db.transaction(() => {
      const chunk = mapReduce.reduceNextChunk(this.bulk, maxGroups, errors);
      entriesWritten = chunk.entriesWritten;
      for (const e of errors) this.s.insertError.run(Date.now(), e.document, e.error);
      if (errors.length > 0) this.s.trimErrors.run();
      this.flushCounts();
      if (!chunk.done) return;
      this.bulk.finish();
      this.s.setMeta.run(upToEtag, 'last_etag');
    });
    try {
      run();
    } catch (error) {
      this.rollBack(error);
      throw error;
    }
    return { documents: 0, removed: 0, entriesWritten, errors: 0, upToEtag };
  }

  /** After a rolled-back transaction: what the writer held for it goes, and it reads the file's state again. */
  private rollBack(error: unknown): void {
    // Field ids given inside the rolled-back transaction do not exist any more.
    this.deltas.clear();
    this.entryDelta = 0;
    this.insertTerms.discard();
    this.stageTerms?.discard();
    this.addCounts.discard();
    this.mapReduce?.discard(error);
    this.suggest?.discard();
    this.postings?.discard();
    this.fields.forget();
    this.fields.reload();
    this.bulk.reload();
  }

  /** Records an error that stopped a whole batch (e.g. the sandbox could not start). */
  recordError(document: string | null, error: string): void {
    this.s.insertError.run(Date.now(), document, error);
    this.s.trimErrors.run();
  }

  close(): void {
    this.mapReduce?.close();
  }

  /** The map/reduce half, for a batch that carries map results (only a map/reduce index's batches do). */
  private mapReduceWriter(): MapReduceWriter {
    if (!this.mapReduce) throw new Error('internal: map results in a batch of an index without a reduce');
    return this.mapReduce;
  }

  // ---- entries ---------------------------------------------------------------

  private removeEntriesOf(sources: readonly string[]): void {
    const entries: number[] = [];
    for (const source of sources) for (const row of this.s.entriesOf.all(source)) entries.push(row.id);
    this.removeEntries(entries);
  }

  /** Removes entries and their terms: all (field, value, entry) keys gathered, sorted, deleted in one pass. */
  private removeEntries(entries: number[]): void {
    if (entries.length === 0) return;
    // Finding an entry's terms and lowering their counters need what a bulk build leaves for its end.
    this.bulk.finish();
    entries.sort((a, b) => a - b);
    const doomed: { field: number; value: TermValue; entry: number }[] = [];
    for (const entry of entries) {
      for (const t of this.s.termsOf.all(entry)) doomed.push({ field: t.field, value: t.value, entry });
      this.s.deleteSpatial.run(entry);
      this.s.deleteFts?.run(entry);
      this.s.deleteEntry.run(entry);
    }
    this.entryDelta -= entries.length;
    this.suggest?.removeEntries(entries);
    this.postings?.removeEntries(entries);
    doomed.sort((a, b) => a.field - b.field || compareTerms(a.value, b.value) || a.entry - b.entry);
    for (const t of doomed) {
      this.s.deleteTerm.run(t.field, t.value, t.entry);
      this.countDelta(t.field, t.value, -1);
    }
  }

  /** Inserts prepared entries after the last entry id; returns how many. */
  private writeEntries(rows: EntryRows): number {
    const count = rows.sources.length;
    if (count === 0) return 0;
    const first = this.s.nextEntryId.get()!.id;
    const columns = this.searchColumns;
    const texts = new Array<string | null>(columns);
    for (let i = 0; i < count; i++) {
      this.s.insertEntry.run(first + i, rows.sources[i]!, rows.docIds[i]!, rows.stored[i]!);
      if (!this.s.insertFts) continue;
      let any = false;
      for (let c = 0; c < columns; c++) {
        texts[c] = rows.texts[i * columns + c] ?? null;
        if (texts[c] !== null) any = true;
      }
      if (any) this.s.insertFts.run(first + i, ...texts);
    }
    this.suggest?.addEntries(first, rows, columns);
    this.postings?.addEntries(first, rows, columns);
    for (const p of rows.points)
      this.s.insertSpatial.run(first + p.entry, this.fields.ensure(p.field), p.lat, p.lng);
    // Fields in id order, so the rows of the whole batch reach the terms B-tree in key order.
    const fields = rows.terms.map((terms) => ({ id: this.fields.ensure(terms.field), terms }));
    fields.sort((a, b) => a.id - b.id);
    for (const { id, terms } of fields) this.insertFieldTerms(id, terms, first);
    this.entryDelta += count;
    return count;
  }

  /**
   * Inserts one field's sorted terms and counts them on the way: in key
   * order the rows of one term are a run, so its counter changes by the
   * run's length (one update per distinct term, not per row).
   */
  private insertFieldTerms(field: number, terms: SortedTerms, first: number): void {
    const insert = this.bulk.stagesTerms ? this.stagedTerms() : this.insertTerms;
    const insertSorted = (values: ArrayLike<number | string>, entries: Uint32Array) => {
      let runStart = 0;
      for (let i = 0; i < values.length; i++) {
        const value = values[i]!;
        insert.add(field, value, first + entries[i]!);
        if (i + 1 === values.length || values[i + 1] !== value) {
          this.countDelta(field, value, i + 1 - runStart);
          runStart = i + 1;
        }
      }
    };
    insertSorted(terms.numbers, terms.numberEntries);
    insertSorted(terms.strings, terms.stringEntries);
    for (const entry of terms.nullEntries) insert.add(field, NULL_TERM, first + entry);
    if (terms.nullEntries.length > 0) this.countDelta(field, NULL_TERM, terms.nullEntries.length);
    insert.flush();
  }

  /** The bulk build's term rows' insert, made on first use (its staging table exists only during the build). */
  private stagedTerms(): ChunkedInsert {
    this.stageTerms ??= new ChunkedInsert(
      this.db,
      `INSERT INTO ${TERMS_STAGING_TABLE} (field, value, entry) VALUES $rows`,
    );
    return this.stageTerms;
  }

  /** Adds to a term's pending counter change (an inserted term adds, a removed one subtracts). */
  private countDelta(field: number, value: TermValue, delta: number): void {
    // The null term is the only blob; rows read back from SQLite carry their own copy of it.
    const key = Buffer.isBuffer(value) ? NULL_TERM : value;
    this.suggest?.termDelta(field, key, delta);
    // A bulk build counts every term once at its end, from the terms themselves.
    if (this.bulk.active) return;
    let values = this.deltas.get(field);
    if (!values) {
      values = new Map();
      this.deltas.set(field, values);
    }
    values.set(key, (values.get(key) ?? 0) + delta);
  }

  /**
   * Counters once per batch: one upsert per distinct term touched, however
   * many entries touched it. Counters that went down are then dropped if
   * they reached zero.
   */
  private flushCounts(): void {
    const lowered: { field: number; value: TermValue }[] = [];
    for (const [field, values] of this.deltas) {
      for (const [value, delta] of values) {
        if (delta === 0) continue;
        this.addCounts.add(field, value, delta);
        if (delta < 0) lowered.push({ field, value });
      }
    }
    this.addCounts.flush();
    for (const { field, value } of lowered) this.s.dropEmptyCount.run(field, value);
    this.suggest?.flush();
    this.postings?.flush();
    this.deltas.clear();
    if (this.entryDelta !== 0) {
      this.s.setMeta.run(Number(this.s.getMeta.get('entries')?.value ?? 0) + this.entryDelta, 'entries');
      this.entryDelta = 0;
    }
  }
}
