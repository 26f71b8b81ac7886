import type BetterSqlite3 from 'better-sqlite3';
import type { TermValue } from '../indexing/field-values.js';
import type { MatchSets } from './match-sets.js';
import type { FieldLookup } from './sql-predicate.js';

/**
 * What the parts of an index reader share (cost-model.ts, page-order.ts, facets.ts): its field lookups,
 * its statements, its kept bitmaps and orders, and the counters the indexer keeps.
 */
export interface ReaderScope extends FieldLookup {
  readonly sql: ReaderSql;
  readonly sets: MatchSets;
  /** When matches are computed as bitmaps (IndexReaderOptions.matchSets). */
  readonly setPolicy: 'auto' | 'always' | 'never';
  entriesCount(): number;
  /** The count of one exact term, kept by the indexer. */
  termCount(field: number, value: TermValue): number;
}

/** Prepared statements kept per reader: a query's SQL is built from its shape, so shapes repeat. */
const STATEMENT_CACHE = 256;

/** An index file's prepared statements (an LRU of STATEMENT_CACHE) and the ways the reader runs them. */
export class ReaderSql {
  private readonly statements = new Map<string, BetterSqlite3.Statement>();

  constructor(private readonly db: BetterSqlite3.Database) {}

  statement(sql: string): BetterSqlite3.Statement {
    let statement = this.statements.get(sql);
    if (statement) {
      // Keep the map in recency order for the LRU bound below.
      this.statements.delete(sql);
    } else {
      statement = this.db.prepare(sql);
      if (this.statements.size >= STATEMENT_CACHE) {
        const oldest = this.statements.keys().next().value;
        if (oldest !== undefined) this.statements.delete(oldest);
      }
    }
    this.statements.set(sql, statement);
    return statement;
  }

  get<T>(sql: string, params: unknown[]): T | undefined {
    return this.statement(sql).get(...params) as T | undefined;
  }

  all<T>(sql: string, params: unknown[]): T[] {
    return this.statement(sql).all(...params) as T[];
  }

  /** The `entry` column of every row, one row object alive at a time (a streamed query reads every match). */
  entryNumbers(sql: string, params: unknown[]): number[] {
    const entries: number[] = [];
    for (const row of this.statement(sql).iterate(...params) as IterableIterator<{ entry: number }>)
      entries.push(row.entry);
    return entries;
  }

  /** `sql`'s row count, counting at most `cap` rows: an estimate that costs no more than `cap` rows read. */
  countCapped(sql: string, params: unknown[], cap: number): number {
    return this.get<{ n: number }>(`SELECT count(*) AS n FROM (${sql} LIMIT ${cap})`, params)?.n ?? 0;
  }

  clear(): void {
    this.statements.clear();
  }
}
