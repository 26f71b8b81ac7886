// Search leaves read from the full-text postings (indexing/fts-postings.ts) instead of FTS5: a term's
// few block rows copied into a bitmap, its size the sum of the blocks' counts. Used for what the
// postings hold exactly — whole ASCII tokens (FTS5's unicode61 on ASCII is runs of letters and digits,
// lower-cased), combined with and/or — and when the file has them (files made before get them when
// the indexer opens them); prefixes and other text stay with FTS5.
import type BetterSqlite3 from 'better-sqlite3';
import { FTS_POSTINGS_META_KEY, FTS_POSTINGS_VERSION } from '../indexing/fts-postings.js';
import { BITMAP_BYTES, BLOCK_BITS, decodeBlockInto } from '../indexing/posting-blocks.js';
import { EntrySet } from './entry-set.js';

/** A search the postings can answer: whole tokens of one fts column. */
export interface PostingSearch {
  col: number;
  tokens: string[];
  operator: 'and' | 'or';
}

/**
 * The tokens of a search's text as the postings hold them, or null when FTS5 must answer: a prefix
 * (`jq*`) or text beyond ASCII (FTS5 folds diacritics and other scripts its own way). The words are
 * split as searchMatch (sql-predicate.ts) splits them before FTS5 sees them.
 */
export function postingTokens(terms: string): string[] | null {
  const tokens: string[] = [];
  for (const match of terms.matchAll(/([\p{L}\p{N}]+)(\*)?/gu)) {
    const word = match[1]!;
    if (match[2] || !/^[A-Za-z0-9]+$/.test(word)) return null;
    tokens.push(word.toLowerCase());
  }
  return tokens.length > 0 ? tokens : null;
}

export class PostingLists {
  /** Whether the file holds the postings, for the state last seen (null: not checked yet). */
  private present: boolean | null = null;
  private readonly builtVersion: BetterSqlite3.Statement;
  private blocks: BetterSqlite3.Statement | null = null;
  private counts: BetterSqlite3.Statement | null = null;

  constructor(private readonly db: BetterSqlite3.Database) {
    this.builtVersion = db.prepare('SELECT value FROM meta WHERE key = ?').pluck();
  }

  /** The file changed: whether it holds the postings is checked again. */
  reset(): void {
    this.present = null;
  }

  available(): boolean {
    if (this.present === null) {
      this.present = this.builtVersion.get(FTS_POSTINGS_META_KEY) === FTS_POSTINGS_VERSION;
      // Prepared only once the tables exist (a file made before them has none).
      if (this.present && !this.blocks) {
        this.blocks = this.db
          .prepare('SELECT block, count, data FROM fts_postings WHERE col = ? AND term = ? ORDER BY block')
          .raw();
        this.counts = this.db
          .prepare('SELECT coalesce(sum(count), 0) FROM fts_postings WHERE col = ? AND term = ?')
          .pluck();
      }
    }
    return this.present;
  }

  /** The entries the search matches, up to maxEntry (one state of the index). */
  set(search: PostingSearch, maxEntry: number): EntrySet {
    const sets = search.tokens.map((token) => this.termSet(search.col, token, maxEntry));
    const [first, ...rest] = sets;
    return rest.reduce((acc, set) => (search.operator === 'and' ? acc.and(set) : acc.or(set)), first!);
  }

  /** The match's size: exact for one token, the smallest list for `and`, the sum for `or` (a bound). */
  estimate(search: PostingSearch): number {
    const sizes = search.tokens.map((token) => Number(this.counts!.get(search.col, token)));
    return search.operator === 'and' ? Math.min(...sizes) : sizes.reduce((a, b) => a + b, 0);
  }

  private termSet(col: number, term: string, maxEntry: number): EntrySet {
    const rows = this.blocks!.all(col, term) as [number, number, Uint8Array][];
    return EntrySet.fromBytes(maxEntry, (bytes) => {
      for (const [block, count, data] of rows) {
        const at = (block << BLOCK_BITS) >>> 3;
        if (at >= bytes.length) break;
        const room = Math.min(BITMAP_BYTES, bytes.length - at);
        // A block past the set's last whole byte is decoded aside and cut (entries beyond maxEntry).
        const target =
          room === BITMAP_BYTES ? bytes.subarray(at, at + BITMAP_BYTES) : new Uint8Array(BITMAP_BYTES);
        decodeBlockInto(target, count, data);
        if (room < BITMAP_BYTES) bytes.set(target.subarray(0, room), at);
      }
    });
  }
}
