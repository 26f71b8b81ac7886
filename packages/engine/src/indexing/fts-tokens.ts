import type BetterSqlite3 from 'better-sqlite3';
import type { EntryRows } from './entry-rows.js';

/** Text with a character beyond ASCII, which FTS5 tokenizes for us (tokensOf). */
const BEYOND_ASCII = /[^\p{ASCII}]/u;
/** What separates unicode61's tokens in lower-cased ASCII: anything but letters and digits. */
const ASCII_SEPARATORS = /[^a-z0-9]+/;
/** The same tokenizer as the index's fts table (index-file.ts). */
export const FTS_TOKENIZER = `tokenize='unicode61 remove_diacritics 2'`;

/** unicode61's tokens of lower-cased ASCII text, or null when FTS5 must tokenize it (text beyond ASCII). */
export function asciiTokens(text: string): string[] | null {
  if (BEYOND_ASCII.test(text)) return null;
  return text
    .toLowerCase()
    .split(ASCII_SEPARATORS)
    .filter((token) => token !== '');
}

/**
 * The distinct full-text tokens of new entries, exactly as the index's FTS5 table makes them, for
 * structures kept beside it (suggestions, postings). ASCII text is split here (unicode61 on ASCII:
 * runs of letters and digits, lower-cased; a property test holds it to FTS5's answer); text with
 * anything else goes through a scratch FTS5 table in the writer's temp schema with the same
 * tokenizer, read back with fts5vocab. The NuGet-like documents are all ASCII.
 */
export class FtsTokenizer {
  private readonly insert: BetterSqlite3.Statement;
  private readonly read: BetterSqlite3.Statement<[], { term: string; doc: number; col: string }>;
  private readonly clear: BetterSqlite3.Statement;

  /**
   * `name`: the scratch table's name in the temp schema (one per user); `ftsIndexes`: which of the
   * rows' full-text columns to tokenize (their index in `EntryRows.texts`).
   */
  constructor(
    db: BetterSqlite3.Database,
    name: string,
    private readonly ftsIndexes: readonly number[],
  ) {
    const columns = ftsIndexes.map((_, k) => `s${k}`).join(', ');
    db.exec(
      `CREATE VIRTUAL TABLE IF NOT EXISTS temp.${name} USING fts5(${columns}, content='', ${FTS_TOKENIZER});
       CREATE VIRTUAL TABLE IF NOT EXISTS temp.${name}_vocab USING fts5vocab(temp, ${name}, instance);`,
    );
    this.insert = db.prepare(
      `INSERT INTO temp.${name} (rowid, ${columns}) VALUES (?${', ?'.repeat(ftsIndexes.length)})`,
    );
    this.read = db.prepare(`SELECT term, doc, col FROM temp.${name}_vocab`);
    this.clear = db.prepare(`INSERT INTO temp.${name} (${name}) VALUES ('delete-all')`);
  }

  /**
   * Per new entry (numbered from `first`) with any text: its distinct tokens as `<k>\t<token>`
   * lines, k the position of the column in `ftsIndexes`.
   */
  tokensOf(first: number, rows: EntryRows, columns: number): Map<number, Set<string>> {
    const texts = new Array<string | null>(this.ftsIndexes.length);
    const byEntry = new Map<number, Set<string>>();
    let scratched = false;
    for (let i = 0; i < rows.sources.length; i++) {
      let some = false;
      let ascii = true;
      for (let k = 0; k < this.ftsIndexes.length; k++) {
        const text = rows.texts[i * columns + this.ftsIndexes[k]!] ?? null;
        texts[k] = text;
        if (text === null) continue;
        some = true;
        if (ascii && BEYOND_ASCII.test(text)) ascii = false;
      }
      if (!some) continue;
      if (!ascii) {
        this.insert.run(first + i, ...texts);
        scratched = true;
        continue;
      }
      const tokens = new Set<string>();
      for (let k = 0; k < texts.length; k++) {
        const text = texts[k];
        if (text === null || text === undefined) continue;
        for (const token of text.toLowerCase().split(ASCII_SEPARATORS))
          if (token !== '') tokens.add(`${k}\t${token}`);
      }
      if (tokens.size > 0) byEntry.set(first + i, tokens);
    }
    if (scratched) {
      for (const row of this.read.iterate()) {
        let tokens = byEntry.get(row.doc);
        if (!tokens) {
          tokens = new Set();
          byEntry.set(row.doc, tokens);
        }
        tokens.add(`${row.col.slice(1)}\t${row.term}`);
      }
      this.clear.run();
    }
    return byEntry;
  }
}
