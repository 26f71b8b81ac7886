import type BetterSqlite3 from 'better-sqlite3';

/**
 * The first build of an index over existing documents (a new index, a reset, a changed definition,
 * a worker's build) is a bulk build: the structures that only serve lookups of entries already
 * indexed are made once, from the loaded rows, when the build reaches the documents' end, instead
 * of being kept row by row through millions of inserts (as PostgreSQL's CREATE INDEX does after a
 * COPY). While it lasts, the file's `meta` holds BULK_BUILD_META_KEY with the SQL that makes them
 * again; it is set in the first batch's transaction and removed in the transaction that makes them,
 * so a build killed midway leaves a file that says it is still a bulk build, and the next writer
 * goes on with it (SQLite commits are atomic: nothing in between is ever seen).
 *
 * Deferred:
 * - `terms_by_entry` (terms by entry): the second B-tree of every term row. Made by one
 *   CREATE INDEX, which sorts all rows once, at the end.
 * - `term_counts`: one upsert per distinct term of each batch in random key order; at the end one
 *   `GROUP BY` over `terms`, which is already in (field, value) order, appends them in key order.
 *
 * A bulk build writes only new entries. Removing an entry that is already in the file (a
 * document changed while the build runs, or a reduce group that grows across batches) needs
 * both structures, so the writer finishes the bulk build first (`finish`), and the index goes
 * on incrementally.
 *
 * While a bulk build lasts the index is stale (it has not reached the documents' end): its
 * partial answers have no total counts of single terms, and entry seeks scan (no terms_by_entry).
 */
export const BULK_BUILD_META_KEY = 'bulk_build';

/** The secondary B-trees a bulk build makes at its end (each is in the file's schema until then). */
const DEFERRED_INDEXES = ['terms_by_entry'];

export class BulkBuild {
  private readonly s;
  /** True while the file is in its bulk build. */
  private live: boolean;

  constructor(private readonly db: BetterSqlite3.Database) {
    this.s = {
      state: db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?'),
      setState: db.prepare<[string, string]>('INSERT INTO meta (key, value) VALUES (?, ?)'),
      dropState: db.prepare<[string]>('DELETE FROM meta WHERE key = ?'),
      indexSql: db.prepare<[string], { sql: string }>(
        "SELECT sql FROM sqlite_schema WHERE type = 'index' AND name = ?",
      ),
      anyTerm: db.prepare<[], { one: number }>('SELECT 1 AS one FROM terms LIMIT 1'),
      anyEntry: db.prepare<[], { one: number }>('SELECT 1 AS one FROM entries LIMIT 1'),
    };
    this.live = this.s.state.get(BULK_BUILD_META_KEY) !== undefined;
  }

  get active(): boolean {
    return this.live;
  }

  /**
   * Starts a bulk build if the file holds no entry yet (inside the first batch's transaction);
   * true if one is going on after the call.
   */
  beginIfEmpty(lastEtag: number): boolean {
    if (this.live) return true;
    if (lastEtag !== 0 || this.s.anyEntry.get() || this.s.anyTerm.get()) return false;
    const sql: string[] = [];
    for (const name of DEFERRED_INDEXES) {
      const row = this.s.indexSql.get(name);
      if (!row) continue;
      sql.push(row.sql);
      this.db.exec(`DROP INDEX ${name}`);
    }
    this.s.setState.run(BULK_BUILD_META_KEY, JSON.stringify({ indexes: sql }));
    this.live = true;
    return true;
  }

  /**
   * Makes what the build deferred and ends it (inside the caller's transaction): the terms'
   * entry index, and the term counters from the terms.
   */
  finish(): void {
    if (!this.live) return;
    const row = this.s.state.get(BULK_BUILD_META_KEY);
    const { indexes } = JSON.parse(String(row?.value ?? '{"indexes":[]}')) as { indexes: string[] };
    for (const sql of indexes) this.db.exec(sql);
    // The null term is a blob that sorts after every number and string: GROUP BY keeps it apart as well.
    this.db.exec(
      `INSERT INTO term_counts (field, value, count)
       SELECT field, value, count(*) FROM terms GROUP BY field, value`,
    );
    this.s.dropState.run(BULK_BUILD_META_KEY);
    this.live = false;
  }

  /** After a rolled-back transaction: the file says again whether a bulk build goes on. */
  reload(): void {
    this.live = this.s.state.get(BULK_BUILD_META_KEY) !== undefined;
  }
}
