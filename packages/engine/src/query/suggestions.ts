import { type IndexDefinition, RookeryError } from '@rookery/protocol';
import type BetterSqlite3 from 'better-sqlite3';
import {
  candidatePrefixes,
  codePointLength,
  defaultMaxDistance,
  rankSuggestions,
  type SuggestionCandidate,
} from '../indexing/suggest.js';
import { SUGGEST_META_KEY, SUGGEST_VERSION, suggestionFieldsOf } from '../indexing/suggest-store.js';
import { deletionVariants } from '../indexing/suggest-variants.js';
import type { FieldLookup } from './sql-predicate.js';

/**
 * The longest term suggestions are looked for (UTF-16 code units). Ranking works on a table as wide as
 * the term, and every step before it reads the whole term: a term of a megabyte held the tenant's event
 * loop for about 0.4 s, for an answer that could only be empty. Longer terms are refused with a 400.
 */
export const MAX_SUGGEST_TERM_LENGTH = 1_024;

/**
 * "Did you mean" on one index file (IndexReader.suggest): the candidates are
 * the terms sharing a deletion variant with the searched term, read from the
 * suggestion structure (suggest-store.ts) in one statement, for fields whose
 * definition says `Suggestions: true`; other fields, and files whose
 * structure the indexer has not built yet, scan the term ranges of the
 * candidate prefixes as before. Either way the answer is the same rule:
 * terms starting with one of candidatePrefixes(term), ranked by
 * rankSuggestions (the structure finds all of them within the distance, and
 * usually a few more, which the ranking drops).
 */
export class SuggestionReader {
  private readonly structured: ReadonlySet<string>;
  private readonly statements = new Map<string, BetterSqlite3.Statement>();

  constructor(
    private readonly db: BetterSqlite3.Database,
    definition: IndexDefinition,
    private readonly lookup: FieldLookup,
  ) {
    const { search, terms } = suggestionFieldsOf(definition);
    this.structured = new Set([...search, ...terms]);
  }

  suggest(fieldName: string, term: string, max: number): string[] {
    if (term.length > MAX_SUGGEST_TERM_LENGTH)
      throw new RookeryError(
        'InvalidQuery',
        `the term to suggest for is ${term.length.toLocaleString('en')} characters; at most ` +
          `${MAX_SUGGEST_TERM_LENGTH.toLocaleString('en')} are allowed: send the word that found nothing, not a text`,
      );
    const wanted = term.toLowerCase();
    const prefixes = candidatePrefixes(wanted);
    if (prefixes.length === 0) return [];
    const candidates = this.fromStructure(fieldName, wanted) ?? this.byScan(fieldName, prefixes);
    const kept = candidates.filter((c) => prefixes.some((prefix) => c.term.startsWith(prefix)));
    return rankSuggestions(wanted, kept, { max }).map((s) => s.term);
  }

  /** The structure's candidates, or null when the field has none or the file does not have it yet. */
  private fromStructure(fieldName: string, wanted: string): SuggestionCandidate[] | null {
    if (!this.structured.has(fieldName)) return null;
    const built = this.statement('SELECT value FROM meta WHERE key = ?').get(SUGGEST_META_KEY) as
      | { value: number }
      | undefined;
    if (built?.value !== SUGGEST_VERSION) return null;
    const field = this.lookup.fieldId(fieldName);
    if (field === undefined) return [];
    const distance = defaultMaxDistance(wanted);
    const variants = deletionVariants(wanted, distance);
    const length = codePointLength(wanted);
    // One statement per number of variants (at most 29 of them): bound parameters beat json_each here.
    return this.statement(
      `SELECT DISTINCT v.term AS term, s.docs AS docs
       FROM suggest_variants v JOIN suggest_vocab s ON s.field = v.field AND s.term = v.term
       WHERE v.field = ? AND v.variant IN (?${',?'.repeat(variants.length - 1)}) AND v.length BETWEEN ? AND ?`,
    ).all(field, ...variants, length - distance, length + distance) as SuggestionCandidate[];
  }

  /** Every term of the field starting with one of the prefixes (the rule before the structure). */
  private byScan(fieldName: string, prefixes: readonly string[]): SuggestionCandidate[] {
    const column = this.lookup.searchColumn(fieldName);
    const field = column ? null : this.lookup.fieldId(fieldName);
    if (!column && field === undefined) return [];
    const unique = new Map<string, SuggestionCandidate>();
    for (const prefix of prefixes) {
      const upper = `${prefix}\u{10FFFF}`;
      const rows = column
        ? this.statement(
            'SELECT term, doc AS docs FROM fts_vocab WHERE col = ? AND term >= ? AND term < ?',
          ).all(column, prefix, upper)
        : this.statement(
            'SELECT value AS term, count AS docs FROM term_counts WHERE field = ? AND value >= ? AND value < ?',
          ).all(field, prefix, upper);
      for (const row of rows as SuggestionCandidate[]) unique.set(row.term, row);
    }
    return [...unique.values()];
  }

  private statement(sql: string): BetterSqlite3.Statement {
    let statement = this.statements.get(sql);
    if (!statement) {
      statement = this.db.prepare(sql);
      this.statements.set(sql, statement);
    }
    return statement;
  }
}
