import type { IndexDefinition } from '@rookery/protocol';
import type BetterSqlite3 from 'better-sqlite3';
import type { EntryRows } from './entry-rows.js';
import { FtsTokenizer } from './fts-tokens.js';
import { ftsColumnOf, searchFieldsOf } from './index-file.js';
import { codePointLength } from './suggest.js';
import { deletionVariants, STORED_EDITS } from './suggest-variants.js';

/**
 * The structure "did you mean" reads (IndexReader.suggest), kept by the
 * writer in the same transaction as the terms, for the fields whose
 * definition says `Suggestions: true`:
 *
 * - `suggest_vocab(field, term, docs)`: the field's vocabulary and how many
 *   entries hold each term (the ranking's tie-breaker). For a term field it
 *   follows term_counts' string values; for a full-text field it counts the
 *   FTS5 tokens, which nothing else in the file can give cheaply (fts5vocab
 *   walks a term's whole doclist to count it: that was most of the 6 ms a
 *   suggestion cost on 1M documents).
 * - `suggest_variants(field, variant, length, term)`: each term under each of
 *   its deletion variants (suggest-variants.ts), with its length in code
 *   points: the candidates of a query are the terms sharing one of its
 *   variants whose length is within the allowed distance of its own, found
 *   with ≤ 29 B-tree range seeks whatever the vocabulary's size. The length
 *   matters where many terms share their first characters (package ids:
 *   `microsoft.…`), so share the variants of those.
 * - `suggest_tokens(entry, tokens)`: a full-text entry's distinct tokens of
 *   those fields (`<field id>\t<token>` lines), because the FTS table is
 *   contentless: a removed entry's tokens could not be known otherwise.
 *
 * Tokens are FTS5's own: the batch's texts go through a scratch FTS5 table
 * in the writer's temp schema with the same tokenizer and are read back with
 * fts5vocab, so the vocabulary is exactly what a search matches.
 */
const SCHEMA = `
CREATE TABLE IF NOT EXISTS suggest_vocab (
  field INTEGER NOT NULL, term TEXT NOT NULL, docs INTEGER NOT NULL, PRIMARY KEY (field, term)
) STRICT, WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS suggest_variants (
  field INTEGER NOT NULL, variant TEXT NOT NULL, length INTEGER NOT NULL, term TEXT NOT NULL,
  PRIMARY KEY (field, variant, length, term)
) STRICT, WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS suggest_tokens (entry INTEGER PRIMARY KEY, tokens TEXT NOT NULL) STRICT;
`;

/** meta key holding the structure's version: absent in files made before it (the reader then scans, as before). */
export const SUGGEST_META_KEY = 'suggest_structure';
export const SUGGEST_VERSION = 2;

export function suggestionFieldsOf(definition: IndexDefinition): { search: string[]; terms: string[] } {
  const search: string[] = [];
  const terms: string[] = [];
  for (const [name, options] of Object.entries(definition.Fields ?? {})) {
    if (!options.Suggestions) continue;
    if (options.Indexing === 'Search') search.push(name);
    else terms.push(name);
  }
  return { search: search.sort(), terms: terms.sort() };
}

interface FieldIds {
  ensure(name: string): number;
}

/** Writer side: pending changes of a batch, applied by flush() inside the batch's transaction. */
export class SuggestStore {
  /** Per field id, per term: the change of its entry count in this batch. */
  private readonly deltas = new Map<number, Map<string, number>>();
  /** Field id → whether it is a suggestion term field (ids are given lazily, so resolved on first sight). */
  private readonly termFieldById = new Map<number, boolean>();
  /** The suggestion search fields: their column in the fts table (and its index), name. */
  private readonly searchColumns: { ftsIndex: number; ftsColumn: string; name: string }[];
  /** Tokens of new entries' suggestion search fields (null without any). */
  private readonly tokenizer: FtsTokenizer | null;
  private readonly termFields: ReadonlySet<string>;
  private readonly s;

  /** Null when the definition asks for no suggestions. Builds the structure of a file made before it (once). */
  static open(
    db: BetterSqlite3.Database,
    definition: IndexDefinition,
    fields: FieldIds,
  ): SuggestStore | null {
    const wanted = suggestionFieldsOf(definition);
    if (wanted.search.length + wanted.terms.length === 0) return null;
    return new SuggestStore(db, definition, fields, wanted);
  }

  private constructor(
    private readonly db: BetterSqlite3.Database,
    definition: IndexDefinition,
    private readonly fields: FieldIds,
    wanted: { search: string[]; terms: string[] },
  ) {
    const searchFields = searchFieldsOf(definition);
    this.searchColumns = wanted.search.map((name) => ({
      ftsIndex: searchFields.indexOf(name),
      ftsColumn: ftsColumnOf(searchFields, name)!,
      name,
    }));
    this.termFields = new Set(wanted.terms);
    this.tokenizer =
      this.searchColumns.length > 0
        ? new FtsTokenizer(
            db,
            'suggest_scratch',
            this.searchColumns.map((c) => c.ftsIndex),
          )
        : null;
    const built = db.prepare('SELECT value FROM meta WHERE key = ?').get(SUGGEST_META_KEY) as
      | { value: number }
      | undefined;
    if (built?.value !== SUGGEST_VERSION) this.build();
    this.s = {
      fieldName: db.prepare<[number], { name: string }>('SELECT name FROM fields WHERE id = ?'),
      docsOf: db.prepare<[number, string], { docs: number }>(
        'SELECT docs FROM suggest_vocab WHERE field = ? AND term = ?',
      ),
      setDocs: db.prepare<[number, string, number]>(
        'INSERT INTO suggest_vocab (field, term, docs) VALUES (?, ?, ?) ON CONFLICT (field, term) DO UPDATE SET docs = excluded.docs',
      ),
      dropTerm: db.prepare<[number, string]>('DELETE FROM suggest_vocab WHERE field = ? AND term = ?'),
      addVariant: db.prepare<[number, string, number, string]>(
        'INSERT OR IGNORE INTO suggest_variants (field, variant, length, term) VALUES (?, ?, ?, ?)',
      ),
      dropVariant: db.prepare<[number, string, number, string]>(
        'DELETE FROM suggest_variants WHERE field = ? AND variant = ? AND length = ? AND term = ?',
      ),
      tokensOf: db.prepare<[number], { tokens: string }>('SELECT tokens FROM suggest_tokens WHERE entry = ?'),
      dropTokens: db.prepare<[number]>('DELETE FROM suggest_tokens WHERE entry = ?'),
      addTokens: db.prepare<[number, string]>('INSERT INTO suggest_tokens (entry, tokens) VALUES (?, ?)'),
    };
  }

  /** A term field's counter changed (called for every term_counts change of the batch). */
  termDelta(field: number, value: unknown, delta: number): void {
    if (typeof value !== 'string' || !this.isTermField(field)) return;
    this.add(field, value, delta);
  }

  /** New entries numbered from `first`: their full-text tokens (FtsTokenizer) join the vocabulary. */
  addEntries(first: number, rows: EntryRows, columns: number): void {
    if (!this.tokenizer || rows.sources.length === 0) return;
    const fieldIds = this.searchColumns.map((c) => this.fields.ensure(c.name));
    for (const [entry, lines] of this.tokenizer.tokensOf(first, rows, columns)) {
      const tokens = new Set<string>();
      for (const line of lines) {
        const tab = line.indexOf('\t');
        tokens.add(`${fieldIds[Number(line.slice(0, tab))]}${line.slice(tab)}`);
      }
      this.s.addTokens.run(entry, [...tokens].join('\n'));
      this.applyLines(tokens, 1);
    }
  }

  /** Entries being removed: their full-text tokens leave the vocabulary. */
  removeEntries(entries: readonly number[]): void {
    if (this.searchColumns.length === 0) return;
    for (const entry of entries) {
      const row = this.s.tokensOf.get(entry);
      if (!row) continue;
      this.applyLines(row.tokens.split('\n'), -1);
      this.s.dropTokens.run(entry);
    }
  }

  /** Applies the batch's changes: counts, and the variants of terms that appeared or went. */
  flush(): void {
    for (const [field, terms] of this.deltas) {
      for (const [term, delta] of terms) {
        if (delta === 0) continue;
        const before = this.s.docsOf.get(field, term)?.docs ?? 0;
        const after = before + delta;
        if (after <= 0) {
          if (before > 0) {
            this.s.dropTerm.run(field, term);
            const length = codePointLength(term);
            for (const variant of deletionVariants(term, STORED_EDITS))
              this.s.dropVariant.run(field, variant, length, term);
          }
          continue;
        }
        this.s.setDocs.run(field, term, after);
        if (before > 0) continue;
        const length = codePointLength(term);
        for (const variant of deletionVariants(term, STORED_EDITS))
          this.s.addVariant.run(field, variant, length, term);
      }
    }
    this.deltas.clear();
  }

  /** After a rolled-back batch: nothing pending, and field ids given inside it are forgotten. */
  discard(): void {
    this.deltas.clear();
    this.termFieldById.clear();
  }

  private applyLines(lines: Iterable<string>, delta: number): void {
    for (const line of lines) {
      const tab = line.indexOf('\t');
      this.add(Number(line.slice(0, tab)), line.slice(tab + 1), delta);
    }
  }

  private add(field: number, term: string, delta: number): void {
    let terms = this.deltas.get(field);
    if (!terms) {
      terms = new Map();
      this.deltas.set(field, terms);
    }
    terms.set(term, (terms.get(term) ?? 0) + delta);
  }

  private isTermField(field: number): boolean {
    let known = this.termFieldById.get(field);
    if (known === undefined) {
      const name = this.s.fieldName.get(field)?.name;
      known = name !== undefined && this.termFields.has(name);
      this.termFieldById.set(field, known);
    }
    return known;
  }

  /**
   * Builds the structure from what the file holds, in one transaction: a file
   * made before it (it is then built when the indexer opens the index; until
   * it commits, readers scan as before) or a new one (empty, instantly).
   */
  private build(): void {
    const db = this.db;
    db.transaction(() => {
      // Whatever an earlier version left is dropped: the structure is rebuilt whole from the file.
      db.exec(
        'DROP TABLE IF EXISTS suggest_vocab; DROP TABLE IF EXISTS suggest_variants; DROP TABLE IF EXISTS suggest_tokens;',
      );
      db.exec(SCHEMA);
      const addDocs = db.prepare<[number, string, number]>(
        'INSERT INTO suggest_vocab (field, term, docs) VALUES (?, ?, ?)',
      );
      const addVariant = db.prepare<[number, string, number, string]>(
        'INSERT OR IGNORE INTO suggest_variants (field, variant, length, term) VALUES (?, ?, ?, ?)',
      );
      const add = (field: number, term: string, docs: number) => {
        addDocs.run(field, term, docs);
        const length = codePointLength(term);
        for (const variant of deletionVariants(term, STORED_EDITS))
          addVariant.run(field, variant, length, term);
      };
      for (const name of this.termFields) {
        const field = this.fields.ensure(name);
        const rows = db
          .prepare<[number], { term: string; count: number }>(
            "SELECT value AS term, count FROM term_counts WHERE field = ? AND typeof(value) = 'text' AND count > 0",
          )
          .all(field);
        for (const row of rows) add(field, row.term, row.count);
      }
      if (this.searchColumns.length > 0) {
        const hasFts = db.prepare("SELECT 1 FROM sqlite_schema WHERE name = 'fts'").get() !== undefined;
        if (hasFts) {
          db.exec(
            'CREATE VIRTUAL TABLE IF NOT EXISTS temp.suggest_fts_col USING fts5vocab(main, fts, col);' +
              'CREATE VIRTUAL TABLE IF NOT EXISTS temp.suggest_fts_instance USING fts5vocab(main, fts, instance);',
          );
          const fieldOfColumn = new Map<string, number>();
          for (const c of this.searchColumns) fieldOfColumn.set(c.ftsColumn, this.fields.ensure(c.name));
          const cases = [...fieldOfColumn].map(([col, id]) => `WHEN '${col}' THEN ${id}`).join(' ');
          const columns = [...fieldOfColumn.keys()].map((c) => `'${c}'`).join(', ');
          for (const row of db
            .prepare<[], { term: string; col: string; doc: number }>(
              `SELECT term, col, doc FROM temp.suggest_fts_col WHERE col IN (${columns}) AND doc > 0`,
            )
            .all())
            add(fieldOfColumn.get(row.col)!, row.term, row.doc);
          db.exec(
            `INSERT INTO suggest_tokens (entry, tokens)
             SELECT doc, group_concat(token, char(10)) FROM (
               SELECT DISTINCT doc, (CASE col ${cases} END) || char(9) || term AS token
               FROM temp.suggest_fts_instance WHERE col IN (${columns})
             ) GROUP BY doc`,
          );
          db.exec('DROP TABLE temp.suggest_fts_col; DROP TABLE temp.suggest_fts_instance;');
        }
      }
      db.prepare(
        'INSERT INTO meta (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value',
      ).run(SUGGEST_META_KEY, SUGGEST_VERSION);
    })();
  }
}
