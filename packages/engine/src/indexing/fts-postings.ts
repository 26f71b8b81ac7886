import type { IndexDefinition } from '@rookery/protocol';
import type BetterSqlite3 from 'better-sqlite3';
import type { EntryRows } from './entry-rows.js';
import { FtsTokenizer } from './fts-tokens.js';
import { searchFieldsOf } from './index-file.js';
import { BITMAP_BYTES, BLOCK_BITS, BLOCK_ENTRIES, decodeBlockInto, encodeBlock } from './posting-blocks.js';

/**
 * The full-text index's posting lists in a form made for reading whole, kept by the writer in each
 * batch's transaction beside the FTS5 table (which stays for ranking and prefix queries):
 *
 * - `fts_postings(col, term, block, count, data)`: the entries holding `term` in fts column `col`,
 *   per block of 65,536 entry numbers (posting-blocks.ts: a sorted array of 2 bytes an entry, or
 *   an 8 KB bitmap past 4,096). A search's first query reads a term's few rows in key order and
 *   copies them into its bitmap: through FTS5 the same set came one rowid at a time through the
 *   virtual table and group_concat (what made cold searches slower than PostgreSQL's; figures in
 *   docs/benchmarks.md, "Cold searches"). The counts give exact sizes without reading a list.
 * - `fts_tokens(entry, tokens)`: an entry's distinct `<col>\t<token>` lines, because the FTS table is
 *   contentless: a removed entry's tokens could not be known otherwise.
 *
 * Tokens are FTS5's own (FtsTokenizer). Changes of a batch are applied once per (col, term, block)
 * at flush, in the order they were made (an entry removed and a new one given its number in the
 * same batch).
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS fts_postings (
  col INTEGER NOT NULL, term TEXT NOT NULL, block INTEGER NOT NULL, count INTEGER NOT NULL, data BLOB NOT NULL,
  PRIMARY KEY (col, term, block)
) STRICT, WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS fts_tokens (entry INTEGER PRIMARY KEY, tokens TEXT NOT NULL) STRICT;
`;

/** meta key holding the structure's version: absent in files made before it (readers then use FTS5 alone). */
export const FTS_POSTINGS_META_KEY = 'fts_postings';
export const FTS_POSTINGS_VERSION = 1;

/** Writer side of fts_postings. */
export class FtsPostings {
  /** Per `<col>\t<term>`: the batch's changes in order, entry + 1 added, −(entry + 1) removed. */
  private readonly pending = new Map<string, number[]>();
  private readonly tokenizer: FtsTokenizer;
  /** One block being changed (reused: a batch touches thousands). */
  private readonly bitmap = new Uint8Array(BITMAP_BYTES);
  private readonly s;

  /** Null for an index without full-text fields. Builds the structure of a file made before it (once). */
  static open(db: BetterSqlite3.Database, definition: IndexDefinition): FtsPostings | null {
    const searchFields = searchFieldsOf(definition);
    if (searchFields.length === 0) return null;
    return new FtsPostings(db, searchFields.length);
  }

  private constructor(
    private readonly db: BetterSqlite3.Database,
    columns: number,
  ) {
    this.tokenizer = new FtsTokenizer(
      db,
      'postings_scratch',
      Array.from({ length: columns }, (_, c) => c),
    );
    const built = db.prepare('SELECT value FROM meta WHERE key = ?').get(FTS_POSTINGS_META_KEY) as
      | { value: number }
      | undefined;
    if (built?.value !== FTS_POSTINGS_VERSION) this.build();
    this.s = {
      tokensOf: db.prepare<[number], { tokens: string }>('SELECT tokens FROM fts_tokens WHERE entry = ?'),
      dropTokens: db.prepare<[number]>('DELETE FROM fts_tokens WHERE entry = ?'),
      addTokens: db.prepare<[number, string]>('INSERT INTO fts_tokens (entry, tokens) VALUES (?, ?)'),
      block: db.prepare<[number, string, number], { count: number; data: Buffer }>(
        'SELECT count, data FROM fts_postings WHERE col = ? AND term = ? AND block = ?',
      ),
      putBlock: db.prepare<[number, string, number, number, Buffer]>(
        `INSERT INTO fts_postings (col, term, block, count, data) VALUES (?, ?, ?, ?, ?)
         ON CONFLICT (col, term, block) DO UPDATE SET count = excluded.count, data = excluded.data`,
      ),
      dropBlock: db.prepare<[number, string, number]>(
        'DELETE FROM fts_postings WHERE col = ? AND term = ? AND block = ?',
      ),
    };
  }

  /** New entries numbered from `first` (`columns` = the rows' full-text columns, all of the fts table's). */
  addEntries(first: number, rows: EntryRows, columns: number): void {
    if (rows.sources.length === 0) return;
    for (const [entry, lines] of this.tokenizer.tokensOf(first, rows, columns)) {
      this.s.addTokens.run(entry, [...lines].join('\n'));
      for (const line of lines) this.change(line, entry + 1);
    }
  }

  /** Entries being removed: they leave their terms' lists. */
  removeEntries(entries: readonly number[]): void {
    for (const entry of entries) {
      const row = this.s.tokensOf.get(entry);
      if (!row) continue;
      for (const line of row.tokens.split('\n')) this.change(line, -(entry + 1));
      this.s.dropTokens.run(entry);
    }
  }

  /** Applies the batch's changes: each touched block read, changed and written back once. */
  flush(): void {
    const bitmap = this.bitmap;
    for (const [line, changes] of this.pending) {
      const tab = line.indexOf('\t');
      const col = Number(line.slice(0, tab));
      const term = line.slice(tab + 1);
      // Changes grouped by block, each group keeping its order.
      const byBlock = new Map<number, number[]>();
      for (const change of changes) {
        const block = (Math.abs(change) - 1) >>> BLOCK_BITS;
        let list = byBlock.get(block);
        if (!list) {
          list = [];
          byBlock.set(block, list);
        }
        list.push(change);
      }
      for (const [block, list] of byBlock) {
        bitmap.fill(0);
        const stored = this.s.block.get(col, term, block);
        let count = stored?.count ?? 0;
        if (stored) decodeBlockInto(bitmap, stored.count, stored.data);
        for (const change of list) {
          const low = (Math.abs(change) - 1) & (BLOCK_ENTRIES - 1);
          const mask = 1 << (low & 7);
          const had = (bitmap[low >>> 3]! & mask) !== 0;
          if (change > 0 && !had) {
            bitmap[low >>> 3] = bitmap[low >>> 3]! | mask;
            count++;
          } else if (change < 0 && had) {
            bitmap[low >>> 3] = bitmap[low >>> 3]! & ~mask;
            count--;
          }
        }
        if (count === 0) {
          if (stored) this.s.dropBlock.run(col, term, block);
        } else {
          this.s.putBlock.run(col, term, block, count, encodeBlock(bitmap, count));
        }
      }
    }
    this.pending.clear();
  }

  /** After a rolled-back batch: nothing pending. */
  discard(): void {
    this.pending.clear();
  }

  private change(line: string, signedEntry: number): void {
    let list = this.pending.get(line);
    if (!list) {
      list = [];
      this.pending.set(line, list);
    }
    list.push(signedEntry);
  }

  /**
   * Builds the structure from the FTS table, in one transaction: a file made before it (built when
   * the indexer opens the index; until it commits, readers use FTS5 alone) or a new one (empty).
   */
  private build(): void {
    const db = this.db;
    db.transaction(() => {
      db.exec('DROP TABLE IF EXISTS fts_postings; DROP TABLE IF EXISTS fts_tokens;');
      db.exec(SCHEMA);
      if (db.prepare('SELECT 1 FROM entries LIMIT 1').get() !== undefined) this.buildFromFts();
      db.prepare(
        'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
      ).run(FTS_POSTINGS_META_KEY, FTS_POSTINGS_VERSION);
    })();
  }

  /** The lists and tokens of every entry the FTS table holds (inside build's transaction). */
  private buildFromFts(): void {
    const db = this.db;
    db.exec(
      'CREATE VIRTUAL TABLE IF NOT EXISTS temp.postings_fts_instance USING fts5vocab(main, fts, instance)',
    );
    // Rows come by term, then entry (one per position): a term's lists are complete when the term changes.
    const put = db.prepare<[number, string, number, number, Buffer]>(
      'INSERT INTO fts_postings (col, term, block, count, data) VALUES (?, ?, ?, ?, ?)',
    );
    const bitmap = this.bitmap;
    // Written once the read is done: better-sqlite3 runs nothing else while a statement iterates. The
    // blocks take about what they take on disk (2 bytes a posting; 1M NuGet-like documents: ~40 MB).
    const blocks: [number, string, number, number, Buffer][] = [];
    let term: string | null = null;
    const lists = new Map<number, number[]>();
    const writeTerm = () => {
      for (const [col, entries] of lists) {
        for (let i = 0; i < entries.length; ) {
          const block = entries[i]! >>> BLOCK_BITS;
          bitmap.fill(0);
          let count = 0;
          for (; i < entries.length && entries[i]! >>> BLOCK_BITS === block; i++) {
            const low = entries[i]! & (BLOCK_ENTRIES - 1);
            bitmap[low >>> 3] = bitmap[low >>> 3]! | (1 << (low & 7));
            count++;
          }
          blocks.push([col, term!, block, count, encodeBlock(bitmap, count)]);
        }
      }
      lists.clear();
    };
    for (const row of db
      .prepare<[], { term: string; doc: number; col: string }>(
        'SELECT term, doc, col FROM temp.postings_fts_instance',
      )
      .iterate()) {
      if (row.term !== term) {
        if (term !== null) writeTerm();
        term = row.term;
      }
      const col = Number(row.col.slice(1));
      let list = lists.get(col);
      if (!list) {
        list = [];
        lists.set(col, list);
      }
      if (list[list.length - 1] !== row.doc) list.push(row.doc);
    }
    if (term !== null) writeTerm();
    for (const block of blocks) put.run(...block);
    db.exec(
      `INSERT INTO fts_tokens (entry, tokens)
       SELECT doc, group_concat(token, char(10)) FROM (
         SELECT DISTINCT doc, substr(col, 2) || char(9) || term AS token FROM temp.postings_fts_instance
       ) GROUP BY doc`,
    );
    db.exec('DROP TABLE temp.postings_fts_instance');
  }
}
