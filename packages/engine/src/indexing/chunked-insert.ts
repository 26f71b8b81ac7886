import type BetterSqlite3 from 'better-sqlite3';
import type { TermValue } from './field-values.js';

/** Rows per multi-row statement: one call into SQLite instead of 64. */
const ROWS_PER_STATEMENT = 64;

/**
 * An INSERT of (integer, term, integer) rows, sent to SQLite 64 rows per
 * statement; rows left over at `flush` go one by one. Each call into
 * SQLite has a fixed cost (binding, stepping, resetting) that a batch's
 * hundreds of thousands of term and counter rows would otherwise pay
 * row by row.
 * `sql` is everything but the VALUES list's rows, with `$rows` where
 * they go, e.g. `INSERT INTO t (a, b, c) VALUES $rows`.
 */
export class ChunkedInsert {
  private readonly many: BetterSqlite3.Statement;
  private readonly one: BetterSqlite3.Statement;
  private readonly pending: TermValue[] = [];

  constructor(db: BetterSqlite3.Database, sql: string) {
    this.many = db.prepare(sql.replace('$rows', Array(ROWS_PER_STATEMENT).fill('(?, ?, ?)').join(', ')));
    this.one = db.prepare(sql.replace('$rows', '(?, ?, ?)'));
  }

  add(a: number, b: TermValue, c: number): void {
    const pending = this.pending;
    pending.push(a, b, c);
    if (pending.length === ROWS_PER_STATEMENT * 3) {
      this.many.run(pending);
      pending.length = 0;
    }
  }

  /** Writes the rows still pending. */
  flush(): void {
    const pending = this.pending;
    for (let i = 0; i < pending.length; i += 3) this.one.run(pending[i], pending[i + 1], pending[i + 2]);
    pending.length = 0;
  }

  /** Forgets pending rows (their transaction was rolled back). */
  discard(): void {
    this.pending.length = 0;
  }
}
