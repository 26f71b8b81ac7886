/**
 * The map/reduce half of an index's writer (index-writer.ts): a map/reduce index's `map_results`
 * rows, its groups' reduce (tenant code: in a sandbox for JavaScript) and the reduce's time budget.
 * It writes no entry itself: a group's result becomes an entry through the IndexWriter's own entry
 * path (`EntrySink`), so terms, FTS, suggestions and counters stay in one place. It runs inside the
 * IndexWriter's transaction and never commits or rolls back.
 */

import type { IndexDefinition } from '@rookery/protocol';
import type BetterSqlite3 from 'better-sqlite3';
import type { MapResultRow } from './batch-preparer.js';
import type { BulkBuild } from './bulk-build.js';
import { GroupScan, reduceNextGroups } from './bulk-reduce.js';
import { type EntryRows, EntryRowsBuilder } from './entry-rows.js';
import { createMapper, type IndexEntry, type Mapper } from './mapper.js';
import { resolveSandboxLimits, SandboxError, type SandboxLimits } from './sandbox/index.js';

/** Groups reduced in one call (and their results written at once) when a batch touches many. */
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

/** An error of the batch, stored in the index's errors by the IndexWriter. */
export interface ReduceError {
  document: string | null;
  error: string;
}

/** The IndexWriter's entry path, which a group's old result leaves by and its new one comes in by. */
export interface EntrySink {
  /** Removes the entries whose source is one of `sources` (a group's result has source `r:<key>`). */
  removeEntriesOf(sources: readonly string[]): void;
  /** Inserts prepared entries with their terms; returns how many. */
  writeEntries(rows: EntryRows): number;
}

/** One index's map results and reduce, owned and called by its IndexWriter (inside its transactions). */
export class MapReduceWriter {
  private readonly s;
  /** The index's reduce, started on first use (a batch that only maps never needs it). */
  private reducer: Mapper | null = null;
  private readonly reduceRows: EntryRowsBuilder;
  /** Reduce time a batch of several documents may take (JavaScript reduces only), in ms. */
  private readonly reduceBudgetMs: number | null;
  /** The time a chunk of a first build's reduce phase takes new groups for (every reduce), in ms. */
  private readonly reduceChunkMs: number;
  /** A first build's reduce phase reads its groups through this (bulk-reduce.ts). */
  private readonly groupScan: GroupScan;

  constructor(
    db: BetterSqlite3.Database,
    private readonly definition: IndexDefinition,
    private readonly limits: Partial<SandboxLimits> | undefined,
    private readonly entries: EntrySink,
  ) {
    this.reduceRows = new EntryRowsBuilder(definition);
    const { batchTimeMs } = resolveSandboxLimits(limits);
    this.reduceBudgetMs = typeof definition.Reduce === 'string' ? batchTimeMs : null;
    this.reduceChunkMs = batchTimeMs;
    this.groupScan = new GroupScan(db);
    this.s = {
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
    };
  }

  /** A first build's map phase (bulk-build.ts): the batch's documents' map results replace theirs; nothing is reduced yet. */
  replaceMapResults(sources: readonly string[], mapResults: readonly MapResultRow[]): void {
    for (const source of sources) this.s.deleteMapResults.run(source);
    for (const row of mapResults) this.s.insertMapResult.run(row.source, row.key, row.value);
  }

  /**
   * Replaces the batch's documents' map results and re-reduces every group
   * they touch; returns the entries written. A group's stored rows are read
   * before the batch's rows for it are inserted, and the batch's own rows join
   * it from memory: they are parsed once and never read back. In a first
   * build most groups are new to the index, and a new group has no old result
   * to remove either. A batch of several `documents` whose JavaScript reduce
   * runs over its budget throws ReduceBudgetExceeded.
   */
  applyReduce(
    sources: readonly string[],
    mapResults: readonly MapResultRow[],
    documents: number,
    errors: ReduceError[],
  ): number {
    const deadline =
      this.reduceBudgetMs !== null && documents > 1 ? Date.now() + this.reduceBudgetMs : Infinity;
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
      this.entries.removeEntriesOf(existing);
      written += this.writeResults(live, results);
    }
    return written;
  }

  /**
   * One chunk of a first build's reduce phase (bulk-reduce.ts): reduces the next groups, at most
   * `maxGroups`, taking more while the chunk's time budget lasts, and writes their results. `done`:
   * no group was left, so the build may end. A JavaScript reduce that overruns the budget in a
   * chunk of several groups throws ReduceBudgetExceeded.
   */
  reduceNextChunk(
    bulk: BulkBuild,
    maxGroups: number,
    errors: ReduceError[],
  ): { done: boolean; entriesWritten: number } {
    let entriesWritten = 0;
    const until = Date.now() + this.reduceChunkMs;
    this.reducer ??= createMapper(this.definition, this.limits);
    const done = reduceNextGroups(this.groupScan, bulk, { maxGroups, until }, (keys, rows) => {
      const groups = keys.map((key) => rows.get(key)!.map((r) => JSON.parse(r.value) as IndexEntry));
      // As a batch of one document, a chunk of one group is never cut.
      const deadline = this.reduceBudgetMs !== null && maxGroups > 1 ? until : Infinity;
      const results = this.reduceEach(keys, groups, rows, errors, deadline);
      entriesWritten += this.writeResults(keys, results);
    });
    return { done, entriesWritten };
  }

  /** After the IndexWriter's transaction rolled back: what was held for it goes. */
  discard(error: unknown): void {
    this.reduceRows.reset();
    // A reduce that hit a sandbox limit leaves its isolate unusable: the next batch starts a fresh one.
    if (!(error instanceof ReduceBudgetExceeded)) this.close();
  }

  close(): void {
    this.reducer?.dispose();
    this.reducer = null;
  }

  /** Each group's result (a failed group has none) as the entry `r:<key>`; returns how many were written. */
  private writeResults(keys: readonly string[], results: readonly (IndexEntry | undefined)[]): number {
    keys.forEach((key, j) => {
      const result = results[j];
      if (result) this.reduceRows.add(`r:${key}`, null, result, JSON.stringify(result));
    });
    return this.entries.writeEntries(this.reduceRows.take());
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
    errors: ReduceError[],
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
