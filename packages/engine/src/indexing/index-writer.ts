import type { IndexDefinition } from '@rookery/protocol';
import type BetterSqlite3 from 'better-sqlite3';
import type { MapResultRow, PreparedBatch } from './batch-preparer.js';
import { BulkBuild, TERMS_STAGING_TABLE } from './bulk-build.js';
import { GroupScan, reduceNextGroups } from './bulk-reduce.js';
import { ChunkedInsert } from './chunked-insert.js';
import { type EntryRows, EntryRowsBuilder } from './entry-rows.js';
import { compareTerms, NULL_TERM, type TermValue } from './field-values.js';
import { FtsPostings } from './fts-postings.js';
import { FieldRegistry, searchFieldsOf } from './index-file.js';
import { createMapper, type IndexEntry, type Mapper } from './mapper.js';
import { resolveSandboxLimits, SandboxError, type SandboxLimits } from './sandbox/index.js';
import { SuggestStore } from './suggest-store.js';
import type { SortedTerms } from './term-buffer.js';

const MAX_STORED_ERRORS = 500;
const REDUCE_CHUNK = 1_000;

/**
 * A JavaScript reduce spent the batch's time budget before the batch was
 * done: the batch is rolled back, and the indexer asks for a smaller one
 * (a batch of one document is never cut). Not an index error: nothing failed.
 */
export class ReduceBudgetExceeded extends Error {
  constructor(readonly budgetMs: number) {
    super(`the reduce of the batch took more than its ${budgetMs} ms budget`);
    this.name = 'ReduceBudgetExceeded';
  }
}

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
 * possibly on another thread.
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
  /** A map/reduce index's reduce (tenant code: in a sandbox for JavaScript), started on first use. */
  private reducer: Mapper | null = null;
  private readonly reduceRows: EntryRowsBuilder;
  private readonly searchColumns: number;
  /** Reduce time a batch of several documents may take (JavaScript reduces only), in ms. */
  private readonly reduceBudgetMs: number | null;
  /** The time a chunk of a first build's reduce phase takes new groups for (every reduce), in ms. */
  private readonly reduceChunkMs: number;
  /** A first build's reduce phase reads its groups through this (bulk-reduce.ts). */
  private readonly groupScan: GroupScan | null;
  /** The suggestion structure of the fields with `Suggestions: true`, kept with the terms (suggest-store.ts). */
  private readonly suggest: SuggestStore | null;
  /** The full-text posting lists read whole by searches (fts-postings.ts), kept with the FTS table. */
  private readonly postings: FtsPostings | null;
  /** The first build's state: what it leaves for its end (bulk-build.ts). */
  private readonly bulk: BulkBuild;

  constructor(
    private readonly db: BetterSqlite3.Database,
    definition: IndexDefinition,
    private readonly limits?: Partial<SandboxLimits>,
  ) {
    this.definition = definition;
    this.fields = new FieldRegistry(db, true);
    // Built here, on open, for a file made before the structure existed.
    this.suggest = SuggestStore.open(db, definition, this.fields);
    this.postings = FtsPostings.open(db, definition);
    this.bulk = new BulkBuild(db, definition.Reduce !== undefined);
    this.reduceRows = new EntryRowsBuilder(definition);
    const searchFields = searchFieldsOf(definition);
    this.searchColumns = searchFields.length;
    const { batchTimeMs } = resolveSandboxLimits(limits);
    this.reduceBudgetMs = typeof definition.Reduce === 'string' ? batchTimeMs : null;
    this.reduceChunkMs = batchTimeMs;
    this.groupScan = definition.Reduce === undefined ? null : new GroupScan(db);
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
      mapResultKeysOf: db.prepare<[string], { reduce_key: string }>(
        'SELECT reduce_key FROM map_results WHERE source = ?',
      ),
      deleteMapResults: db.prepare<[string]>('DELETE FROM map_results WHERE source = ?'),
      insertMapResult: db.prepare<[string, string, string]>(
        'INSERT INTO map_results (source, reduce_key, value) VALUES (?, ?, ?)',
      ),
      mapResultsOfKey: db.prepare<[string], { value: string }>(
        'SELECT value FROM map_results WHERE reduce_key = ?',
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
        this.replaceMapResults(batch.sources, batch.mapResults);
      } else if (batch.mapResults) {
        const deadline =
          this.reduceBudgetMs !== null && batch.documents > 1 ? Date.now() + this.reduceBudgetMs : Infinity;
        entriesWritten = this.applyReduce(batch.sources, batch.mapResults, errors, deadline);
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
    if (!this.reducing || !this.groupScan) throw new Error('internal: no reduce phase to move on');
    let entriesWritten = 0;
    const errors: { document: string | null; error: string }[] = [];
    const upToEtag = this.readsFrom;
    const run = this.db.transaction(() => {
      const until = Date.now() + this.reduceChunkMs;
      this.reducer ??= createMapper(this.definition, this.limits);
      const done = reduceNextGroups(this.groupScan!, this.bulk, { maxGroups, until }, (keys, rows) => {
        const groups = keys.map((key) => rows.get(key)!.map((r) => JSON.parse(r.value) as IndexEntry));
        // As a batch of one document, a chunk of one group is never cut.
        const deadline = this.reduceBudgetMs !== null && maxGroups > 1 ? until : Infinity;
        const results = this.reduceEach(keys, groups, rows, errors, deadline);
        keys.forEach((key, j) => {
          const result = results[j];
          if (result) this.reduceRows.add(`r:${key}`, null, result, JSON.stringify(result));
        });
        entriesWritten += this.writeEntries(this.reduceRows.take());
      });
      for (const e of errors) this.s.insertError.run(Date.now(), e.document, e.error);
      if (errors.length > 0) this.s.trimErrors.run();
      this.flushCounts();
      if (!done) return;
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
    this.reduceRows.reset();
    this.suggest?.discard();
    this.postings?.discard();
    // A reduce that hit a sandbox limit leaves its isolate unusable: the next batch starts a fresh one.
    if (!(error instanceof ReduceBudgetExceeded)) {
      this.reducer?.dispose();
      this.reducer = null;
    }
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
    this.reducer?.dispose();
    this.reducer = null;
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

  // ---- map/reduce ------------------------------------------------------------

  /** A first build's map phase (bulk-build.ts): the batch's documents' map results replace theirs; nothing is reduced yet. */
  private replaceMapResults(sources: readonly string[], mapResults: readonly MapResultRow[]): void {
    for (const source of sources) this.s.deleteMapResults.run(source);
    for (const row of mapResults) this.s.insertMapResult.run(row.source, row.key, row.value);
  }

  /**
   * Replaces the batch's documents' map results and re-reduces every group
   * they touch. A group's stored rows are read before the batch's rows for it
   * are inserted, and the batch's own rows join it from memory: they are
   * parsed once and never read back. In a first build most groups are new to
   * the index, and a new group has no old result to remove either.
   */
  private applyReduce(
    sources: readonly string[],
    mapResults: readonly MapResultRow[],
    errors: { document: string | null; error: string }[],
    deadline: number,
  ): number {
    // Groups that lose rows of the batch's documents: they had rows, so an old result may exist.
    const shrunk = new Set<string>();
    for (const source of sources) {
      const old = this.s.mapResultKeysOf.all(source);
      if (old.length === 0) continue; // a document new to the index
      for (const row of old) shrunk.add(row.reduce_key);
      this.s.deleteMapResults.run(source);
    }
    const fresh = new Map<string, MapResultRow[]>();
    for (const row of mapResults) {
      const rows = fresh.get(row.key);
      if (rows) rows.push(row);
      else fresh.set(row.key, [row]);
    }
    this.reducer ??= createMapper(this.definition, this.limits);
    const keys = [...new Set([...shrunk, ...fresh.keys()])].sort();
    let written = 0;
    for (let i = 0; i < keys.length; i += REDUCE_CHUNK) {
      const chunk = keys.slice(i, i + REDUCE_CHUNK);
      const existing: string[] = [];
      const live: string[] = [];
      const groups: IndexEntry[][] = [];
      for (const key of chunk) {
        // Stored rows first, then the batch's in batch order: the order the whole group reads back in.
        const group = this.s.mapResultsOfKey.all(key).map((r) => JSON.parse(r.value) as IndexEntry);
        // A group the index had before this batch: its old result goes.
        if (group.length > 0 || shrunk.has(key)) existing.push(`r:${key}`);
        for (const row of fresh.get(key) ?? []) {
          this.s.insertMapResult.run(row.source, row.key, row.value);
          group.push(JSON.parse(row.value) as IndexEntry);
        }
        if (group.length === 0) continue;
        live.push(key);
        groups.push(group);
      }
      const results = this.reduceEach(live, groups, fresh, errors, deadline);
      this.removeEntriesOf(existing);
      live.forEach((key, j) => {
        const result = results[j];
        if (result) this.reduceRows.add(`r:${key}`, null, result, JSON.stringify(result));
      });
      written += this.writeEntries(this.reduceRows.take());
    }
    return written;
  }

  /**
   * Reduces groups in one call; if that fails, one group at a time, so a
   * group whose aggregate throws (or runs over a limit) is an error naming it
   * and the batch's documents in it, and has no result until one of them
   * changes, while the other groups are reduced. A sandbox that died is replaced.
   */
  private reduceEach(
    keys: readonly string[],
    groups: readonly IndexEntry[][],
    fresh: ReadonlyMap<string, MapResultRow[]>,
    errors: { document: string | null; error: string }[],
    deadline: number,
  ): (IndexEntry | undefined)[] {
    const inTime = () => {
      if (Date.now() >= deadline) throw new ReduceBudgetExceeded(this.reduceBudgetMs ?? 0);
    };
    inTime();
    try {
      return this.reducer!.reduce(groups);
    } catch (error) {
      this.renewReducerIfDead(error);
    }
    return groups.map((group, j) => {
      inTime();
      try {
        return this.reducer!.reduce([group])[0];
      } catch (error) {
        this.renewReducerIfDead(error);
        const key = keys[j]!;
        const documents = [...new Set((fresh.get(key) ?? []).map((r) => r.document))];
        const named = documents.slice(0, 5).join(', ') + (documents.length > 5 ? ', …' : '');
        errors.push({
          document: documents[0] ?? null,
          error:
            `reduce of group ${key} failed, so the group has no result until its documents change` +
            `${named ? ` (documents of this batch in it: ${named})` : ''}: ${(error as Error).message}`,
        });
        return undefined;
      }
    });
  }

  private renewReducerIfDead(error: unknown): void {
    if (error instanceof SandboxError && error.code === 'IndexMemoryLimitExceeded') {
      this.reducer?.dispose();
      this.reducer = createMapper(this.definition, this.limits);
    }
  }
}
