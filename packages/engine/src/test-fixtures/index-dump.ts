// What an index answers queries from, as plain data to compare: a restored or adopted index must
// equal one built from zero (mirror/index-snapshots.test.ts, mirror/index-build.test.ts), and a
// bulk build one built incrementally (indexing/bulk-build.test.ts: dumpIndexFile, everything).
import path from 'node:path';
import BetterSqlite3 from 'better-sqlite3';
import { INDEXES_DIRECTORY, indexFileName } from '../indexing/index-file.js';

/** Everything an index answers queries from, independent of entry numbering: per source, its terms and stored value. */
export function dumpIndex(databaseDirectory: string, name: string): unknown {
  const sqlite = new BetterSqlite3(path.join(databaseDirectory, INDEXES_DIRECTORY, indexFileName(name)), {
    readonly: true,
    fileMustExist: true,
  });
  try {
    const rows = sqlite
      .prepare(
        `SELECT e.source, e.doc_id, e.stored, f.name AS field, t.value
         FROM entries e LEFT JOIN terms t ON t.entry = e.id LEFT JOIN fields f ON f.id = t.field`,
      )
      .all() as {
      source: string;
      doc_id: string | null;
      stored: string | null;
      field: string;
      value: unknown;
    }[];
    const entries = rows.map((r) => JSON.stringify([r.source, r.doc_id, r.stored, r.field, r.value])).sort();
    const counts = (
      sqlite
        .prepare(
          'SELECT f.name, c.value, c.count FROM term_counts c JOIN fields f ON f.id = c.field WHERE c.count > 0',
        )
        .all() as unknown[]
    )
      .map((r) => JSON.stringify(r))
      .sort();
    const meta = sqlite
      .prepare("SELECT value FROM meta WHERE key IN ('entries', 'last_etag') ORDER BY key")
      .all();
    return { entries, counts, meta };
  } finally {
    sqlite.close();
  }
}

/**
 * Everything an index file holds, keyed by what does not depend on the order entries were numbered
 * in (sources, field names): entries, terms, counters, full-text vocabulary and tokens, posting
 * counts, the suggestion structure, map results, errors, and the schema's objects.
 */
export function dumpIndexFile(file: string) {
  const db = new BetterSqlite3(file, { readonly: true, fileMustExist: true });
  try {
    const all = (sql: string) => db.prepare(sql).all() as Record<string, unknown>[];
    const has = (table: string) =>
      db.prepare('SELECT 1 FROM sqlite_schema WHERE name = ?').get(table) !== undefined;
    const sorted = (rows: unknown[]) => rows.map((r) => JSON.stringify(r)).sort();
    const fieldName = new Map(all('SELECT id, name FROM fields').map((r) => [String(r.id), String(r.name)]));
    // suggest_tokens lines start with a field id: named, since ids are given in the order fields first appear.
    const namedTokens = (tokens: string) =>
      tokens
        .split('\n')
        .map((line) => `${fieldName.get(line.slice(0, line.indexOf('\t')))}${line.slice(line.indexOf('\t'))}`)
        .sort();
    return {
      schema: all("SELECT type, name FROM sqlite_schema WHERE name NOT LIKE 'sqlite_%' ORDER BY name"),
      meta: all(
        "SELECT key, value FROM meta WHERE key NOT IN ('definition', 'created_at', 'last_etag') ORDER BY key",
      ),
      entries: sorted(all('SELECT source, doc_id, stored FROM entries')),
      terms: sorted(
        all(
          `SELECT f.name, quote(t.value) AS value, e.source
           FROM terms t JOIN fields f ON f.id = t.field JOIN entries e ON e.id = t.entry`,
        ),
      ),
      counts: sorted(
        all(
          'SELECT f.name, quote(c.value) AS value, c.count FROM term_counts c JOIN fields f ON f.id = c.field',
        ),
      ),
      fts: has('fts_vocab') ? sorted(all('SELECT term, col, doc, cnt FROM fts_vocab')) : [],
      ftsTokens: has('fts_tokens')
        ? sorted(all('SELECT e.source, t.tokens FROM fts_tokens t JOIN entries e ON e.id = t.entry'))
        : [],
      postings: has('fts_postings')
        ? sorted(all('SELECT col, term, sum(count) AS count FROM fts_postings GROUP BY col, term'))
        : [],
      suggestVocab: has('suggest_vocab')
        ? sorted(all('SELECT f.name, v.term, v.docs FROM suggest_vocab v JOIN fields f ON f.id = v.field'))
        : [],
      suggestVariants: has('suggest_variants')
        ? sorted(
            all(
              'SELECT f.name, v.variant, v.length, v.term FROM suggest_variants v JOIN fields f ON f.id = v.field',
            ),
          )
        : [],
      suggestTokens: has('suggest_tokens')
        ? sorted(
            all('SELECT e.source, t.tokens FROM suggest_tokens t JOIN entries e ON e.id = t.entry').map(
              (r) => ({
                source: r.source,
                tokens: namedTokens(String(r.tokens)),
              }),
            ),
          )
        : [],
      spatial: sorted(
        all(
          'SELECT e.source, f.name, s.lat, s.lng FROM spatial s JOIN entries e ON e.id = s.entry JOIN fields f ON f.id = s.field',
        ),
      ),
      mapResults: sorted(all('SELECT source, reduce_key, value FROM map_results')),
      errors: all('SELECT document, error FROM errors ORDER BY id'),
    };
  } finally {
    db.close();
  }
}
