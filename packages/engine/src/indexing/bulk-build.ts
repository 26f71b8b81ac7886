import type BetterSqlite3 from 'better-sqlite3';
import { z } from 'zod';

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
 * - `terms` itself: the term rows are appended to an unindexed table, `terms_staging` (a rowid
 *   table: each batch's rows land at its end), and inserted into `terms` once, sorted, at the end
 *   (`INSERT … SELECT … ORDER BY`): the B-tree then grows by appending pages in key order instead
 *   of taking every batch's rows all over it. The staging table is in the file, so a killed build
 *   keeps what it committed; it is dropped at the end, before `terms_by_entry` is made (which
 *   reuses its freed pages).
 * - `terms_by_entry` (terms by entry): the second B-tree of every term row. Made by one
 *   CREATE INDEX, which sorts all rows once, at the end.
 * - `term_counts`: one upsert per distinct term of each batch in random key order; at the end one
 *   `GROUP BY` over `terms`, which is already in (field, value) order, appends them in key order.
 *
 * The meta value says what this build defers (`{ indexes, staged }`): a build begun by a version
 * that deferred less (no `staged`) goes on as it began.
 *
 * Not deferred, measured (docs/benchmarks.md, "First builds as bulk builds"): the full-text posting
 * lists. Made at the end from FTS5 (as for a file made before they existed) they cost more than
 * each batch's block rewrites: every position of every word crosses into JavaScript.
 *
 * A bulk build writes only new entries. Removing an entry that is already in the file (a
 * document changed while the build runs) needs what it deferred, so the writer finishes the bulk
 * build first (`finish`), and the index goes on incrementally.
 *
 * A map/reduce index's first build (`reduceLater`) has two phases, so that no group result is ever
 * removed (a group grows across batches; its old result could not be removed without
 * `terms_by_entry`), and each group is reduced once instead of once per batch that touches it:
 * - the map phase: batches write only `map_results` (a changed document's rows are replaced by
 *   source); their `map_results_by_key` is dropped and made by CREATE INDEX when the batch that
 *   reaches the documents' end is written, which records that etag (`mappedTo`) in the meta value
 *   instead of `last_etag`;
 * - the reduce phase (bulk-reduce.ts): every group reduced once, in key order, in chunks of
 *   groups, one transaction each, the last key reduced in the meta value (`reducedTo`) so a killed
 *   build resumes after it. The chunk that finds no group left finishes the bulk build and moves
 *   `last_etag` to `mappedTo`: until then the index is stale and answers nothing, as in the map
 *   phase. Documents written meanwhile are indexed after it, incrementally.
 *
 * While a bulk build lasts the index answers nothing (query/index-reader.ts, inFirstBuild): it is
 * stale, and its terms are not where queries read them.
 */
export const BULK_BUILD_META_KEY = 'bulk_build';

/** The unindexed table a bulk build appends its term rows to (moved into `terms` in key order at its end). */
export const TERMS_STAGING_TABLE = 'terms_staging';

/** The secondary B-trees a bulk build makes at its end (each is in the file's schema until then). */
const DEFERRED_INDEXES = ['terms_by_entry'];

/** The map results' B-tree by group key, made when a map/reduce bulk build's map phase ends (the reduce reads groups by it). */
const DEFERRED_MAP_INDEXES = ['map_results_by_key'];

/** Where a bulk build is: writing map results only, reducing groups, or writing entries as they come. */
export type BulkPhase = 'map' | 'reduce' | 'entries';

/** What a bulk build deferred, as its meta value holds it (absent flags: a build begun before they existed). */
const BulkStateSchema = z.object({
  /** CREATE INDEX statements to run at the end. */
  indexes: z.array(z.string()),
  /** Term rows go to TERMS_STAGING_TABLE. */
  staged: z.boolean().optional(),
  /** A map/reduce build: map results only until the documents' end, then every group reduced once. */
  reduceLater: z.boolean().optional(),
  /** CREATE INDEX statements of `map_results` to run when the map phase ends. */
  mapIndexes: z.array(z.string()).optional(),
  /** Set when the map phase ended: the etag it reached, `last_etag` once the reduce phase has ended. */
  mappedTo: z.number().int().nonnegative().optional(),
  /** The last group key the reduce phase reduced (absent: none yet). */
  reducedTo: z.string().optional(),
});
type BulkState = z.infer<typeof BulkStateSchema>;

export class BulkBuild {
  private readonly s;
  /** The file's bulk build state while there is one. */
  private state: BulkState | null;

  /** `reduces`: the index is a map/reduce index (its first build maps, then reduces; see above). */
  constructor(
    private readonly db: BetterSqlite3.Database,
    private readonly reduces: boolean,
  ) {
    this.s = {
      state: db.prepare<[string], { value: string }>('SELECT value FROM meta WHERE key = ?'),
      setState: db.prepare<[string, string]>('INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)'),
      dropState: db.prepare<[string]>('DELETE FROM meta WHERE key = ?'),
      indexSql: db.prepare<[string], { sql: string }>(
        "SELECT sql FROM sqlite_schema WHERE type = 'index' AND name = ?",
      ),
      anyTerm: db.prepare<[], { one: number }>('SELECT 1 AS one FROM terms LIMIT 1'),
      anyEntry: db.prepare<[], { one: number }>('SELECT 1 AS one FROM entries LIMIT 1'),
    };
    this.state = this.read();
  }

  get active(): boolean {
    return this.state !== null;
  }

  /** True while term rows go to TERMS_STAGING_TABLE instead of `terms`. */
  get stagesTerms(): boolean {
    return this.state?.staged === true;
  }

  /** The phase of the bulk build going on, or null. */
  get phase(): BulkPhase | null {
    const state = this.state;
    if (!state) return null;
    if (state.reduceLater !== true) return 'entries';
    return state.mappedTo === undefined ? 'map' : 'reduce';
  }

  /** In the reduce phase: the etag the map phase reached (where reading documents goes on). */
  get mappedTo(): number | undefined {
    return this.state?.mappedTo;
  }

  /** In the reduce phase: the last group key reduced, undefined before the first chunk. */
  get reducedTo(): string | undefined {
    return this.state?.reducedTo;
  }

  /**
   * Starts a bulk build if the file holds no entry yet (inside the first batch's transaction);
   * true if one is going on after the call.
   */
  beginIfEmpty(lastEtag: number): boolean {
    if (this.state) return true;
    if (lastEtag !== 0 || this.s.anyEntry.get() || this.s.anyTerm.get()) return false;
    this.db.exec(
      `CREATE TABLE ${TERMS_STAGING_TABLE} (field INTEGER NOT NULL, value ANY NOT NULL, entry INTEGER NOT NULL) STRICT`,
    );
    const state: BulkState = { indexes: this.dropIndexes(DEFERRED_INDEXES), staged: true };
    if (this.reduces) {
      state.reduceLater = true;
      state.mapIndexes = this.dropIndexes(DEFERRED_MAP_INDEXES);
    }
    this.save(state);
    return true;
  }

  /**
   * Ends the map phase (inside the transaction of the batch that reached the documents' end): makes
   * the map results' key index the reduce phase reads by, and records the etag reached.
   */
  endMapPhase(upToEtag: number): void {
    const state = this.state;
    if (this.phase !== 'map' || !state) throw new Error(`internal: no map phase to end (${this.phase})`);
    for (const sql of state.mapIndexes ?? []) this.db.exec(sql);
    this.save({ ...state, mapIndexes: [], mappedTo: upToEtag });
  }

  /** Records the last group key reduced (inside the chunk's transaction). */
  reducedUpTo(key: string): void {
    if (this.phase !== 'reduce' || !this.state) throw new Error(`internal: not reducing (${this.phase})`);
    this.save({ ...this.state, reducedTo: key });
  }

  /**
   * Makes what the build deferred and ends it (inside the caller's transaction): the terms from
   * their staging table, the terms' entry index, and the term counters from the terms.
   */
  finish(): void {
    const state = this.state;
    if (!state) return;
    // Map results not reduced yet would never be: only the reduce phase's last chunk may end this build.
    if (state.reduceLater === true && this.phase !== 'reduce')
      throw new Error('internal: a map/reduce bulk build ends after its reduce phase');
    if (state.staged) {
      // In key order: the B-tree is appended to, page after page. Rows are distinct (a bulk build
      // writes new entries only, each term once per entry).
      this.db.exec(
        `INSERT INTO terms (field, value, entry)
         SELECT field, value, entry FROM ${TERMS_STAGING_TABLE} ORDER BY field, value, entry;
         DROP TABLE ${TERMS_STAGING_TABLE};`,
      );
    }
    for (const sql of state.indexes) this.db.exec(sql);
    // The null term is a blob that sorts after every number and string: GROUP BY keeps it apart as well.
    this.db.exec(
      `INSERT INTO term_counts (field, value, count)
       SELECT field, value, count(*) FROM terms GROUP BY field, value`,
    );
    this.s.dropState.run(BULK_BUILD_META_KEY);
    this.state = null;
  }

  /** After a rolled-back transaction: the file says again whether a bulk build goes on. */
  reload(): void {
    this.state = this.read();
  }

  /** Drops those of the named indexes the file has; returns the SQL that makes them again. */
  private dropIndexes(names: readonly string[]): string[] {
    const made: string[] = [];
    for (const name of names) {
      const row = this.s.indexSql.get(name);
      if (!row) continue;
      made.push(row.sql);
      this.db.exec(`DROP INDEX ${name}`);
    }
    return made;
  }

  private save(state: BulkState): void {
    this.s.setState.run(BULK_BUILD_META_KEY, JSON.stringify(state));
    this.state = state;
  }

  private read(): BulkState | null {
    const row = this.s.state.get(BULK_BUILD_META_KEY);
    return row ? BulkStateSchema.parse(JSON.parse(String(row.value))) : null;
  }
}
