import type { IndexDefinition } from '@rookery/protocol';
import type BetterSqlite3 from 'better-sqlite3';
import type { SourceBatch, SourceDocument } from './document-source.js';
import { asSpatialPoint, type TermValue, termOf } from './field-values.js';
import { exactFieldsOf, FieldRegistry, searchFieldsOf } from './index-file.js';
import type { IndexEntry, MapOutcome, Mapper } from './mapper.js';
import { TermBuffer } from './term-buffer.js';

const MAX_STORED_ERRORS = 500;
/** Terms are inserted this many rows per statement: one call into SQLite instead of 64. */
const TERM_ROWS_PER_INSERT = 64;
const REDUCE_CHUNK = 1_000;

export interface BatchOutcome {
  documents: number;
  /** Deleted documents whose entries the batch removed (tombstones read). */
  removed: number;
  entriesWritten: number;
  errors: number;
  upToEtag: number;
}

interface TermDelta {
  field: number;
  value: TermValue;
  delta: number;
}

/**
 * Applies batches of changed documents to one index file, each in one
 * transaction: old entries of every changed document are removed in one
 * sorted pass, new entries are inserted, term counters are adjusted once per
 * batch, affected groups are re-reduced, and the index's etag moves on.
 */
export class IndexWriter {
  readonly definition: IndexDefinition;
  private readonly fields: FieldRegistry;
  private readonly searchFields: string[];
  private readonly exactFields: Set<string>;
  private readonly s;
  private deltas = new Map<string, TermDelta>();
  /** The batch's new terms, written in key order before anything reads or deletes terms. */
  private readonly pendingTerms = new TermBuffer();
  private readonly insertTerms: BetterSqlite3.Statement;
  private entryDelta = 0;

  constructor(
    private readonly db: BetterSqlite3.Database,
    definition: IndexDefinition,
    private readonly mapperFactory: () => Mapper,
    private mapper: Mapper = mapperFactory(),
  ) {
    this.definition = definition;
    this.fields = new FieldRegistry(db, true);
    this.searchFields = searchFieldsOf(definition);
    this.exactFields = exactFieldsOf(definition);
    const hasFts = this.searchFields.length > 0;
    this.insertTerms = db.prepare(
      `INSERT OR IGNORE INTO terms (field, value, entry) VALUES ${Array(TERM_ROWS_PER_INSERT).fill('(?, ?, ?)').join(', ')}`,
    );
    this.s = {
      getMeta: db.prepare<[string], { value: number | string }>('SELECT value FROM meta WHERE key = ?'),
      setMeta: db.prepare<[number | string, string]>('UPDATE meta SET value = ? WHERE key = ?'),
      entriesOf: db.prepare<[string], { id: number }>('SELECT id FROM entries WHERE source = ?'),
      termsOf: db.prepare<[number], { field: number; value: TermValue }>(
        'SELECT field, value FROM terms WHERE entry = ?',
      ),
      deleteTerm: db.prepare<[number, TermValue, number]>(
        'DELETE FROM terms WHERE field = ? AND value = ? AND entry = ?',
      ),
      deleteEntry: db.prepare<[number]>('DELETE FROM entries WHERE id = ?'),
      deleteSpatial: db.prepare<[number]>('DELETE FROM spatial WHERE entry = ?'),
      deleteFts: hasFts ? db.prepare<[number]>('DELETE FROM fts WHERE rowid = ?') : null,
      insertEntry: db.prepare<[string, string | null, string | null]>(
        'INSERT INTO entries (source, doc_id, stored) VALUES (?, ?, ?)',
      ),
      insertTerm: db.prepare<[number, TermValue, number]>(
        'INSERT OR IGNORE INTO terms (field, value, entry) VALUES (?, ?, ?)',
      ),
      insertSpatial: db.prepare<[number, number, number, number]>(
        'INSERT INTO spatial (entry, field, lat, lng) VALUES (?, ?, ?, ?)',
      ),
      insertFts: hasFts
        ? db.prepare(
            `INSERT INTO fts (rowid, ${this.searchFields.map((_, i) => `c${i}`).join(', ')})
             VALUES (?${', ?'.repeat(this.searchFields.length)})`,
          )
        : null,
      addCount: db.prepare<[number, TermValue, number]>(
        `INSERT INTO term_counts (field, value, count) VALUES (?, ?, ?)
         ON CONFLICT (field, value) DO UPDATE SET count = count + excluded.count`,
      ),
      dropEmptyCount: db.prepare<[number, TermValue]>(
        'DELETE FROM term_counts WHERE field = ? AND value = ? AND count <= 0',
      ),
      mapResultKeysOf: db.prepare<[string], { reduce_key: string }>(
        'SELECT reduce_key FROM map_results WHERE source = ?',
      ),
      deleteMapResults: db.prepare<[string]>('DELETE FROM map_results WHERE source = ?'),
      insertMapResult: db.prepare<[string, string, string]>(
        'INSERT INTO map_results (source, reduce_key, value) VALUES (?, ?, ?)',
      ),
      mapResultsOfKey: db.prepare<[string], { value: string }>(
        'SELECT value FROM map_results WHERE reduce_key = ?',
      ),
      insertError: db.prepare<[number, string | null, string]>(
        'INSERT INTO errors (at, document, error) VALUES (?, ?, ?)',
      ),
      trimErrors: db.prepare(
        `DELETE FROM errors WHERE id <= (SELECT max(id) - ${MAX_STORED_ERRORS} FROM errors)`,
      ),
    };
  }

  get lastEtag(): number {
    return Number(this.s.getMeta.get('last_etag')?.value ?? 0);
  }

  get collections(): readonly string[] | null {
    return this.mapper.collections;
  }

  /** Applies one batch read from the database; returns what it did. */
  apply(batch: SourceBatch): BatchOutcome {
    // Mapping runs before the transaction: a slow map never holds the index's write lock.
    const mapped = this.mapDocuments(batch.documents);
    let entriesWritten = 0;
    const run = this.db.transaction(() => {
      const sources = [
        ...new Set([...batch.documents.map((d) => d.key), ...batch.tombstones.map((t) => t.key)]),
      ];
      sources.sort();
      if (this.mapper.hasReduce) entriesWritten = this.applyReduce(sources, batch.documents, mapped.outcomes);
      else {
        this.removeEntriesOf(sources);
        batch.documents.forEach((doc, i) => {
          const outcome = mapped.outcomes[i];
          if (outcome?.ok) {
            for (const entry of outcome.entries) {
              this.writeEntry(doc.key, doc.id, entry, null);
              entriesWritten++;
            }
          }
        });
      }
      for (const e of mapped.errors) this.s.insertError.run(Date.now(), e.document, e.error);
      if (mapped.errors.length > 0) this.s.trimErrors.run();
      this.flushCounts();
      this.s.setMeta.run(batch.upToEtag, 'last_etag');
    });
    try {
      run();
    } catch (error) {
      // Field ids given inside the rolled-back transaction do not exist any more.
      this.deltas.clear();
      this.pendingTerms.clear();
      this.entryDelta = 0;
      this.fields.forget();
      this.fields.reload();
      throw error;
    }
    return {
      documents: batch.documents.length,
      removed: batch.tombstones.length,
      entriesWritten,
      errors: mapped.errors.length,
      upToEtag: batch.upToEtag,
    };
  }

  /** Records an error that stopped a whole batch (e.g. the sandbox could not start). */
  recordError(document: string | null, error: string): void {
    this.s.insertError.run(Date.now(), document, error);
    this.s.trimErrors.run();
  }

  close(): void {
    this.mapper.dispose();
  }

  // ---- mapping ---------------------------------------------------------------

  private mapDocuments(documents: readonly SourceDocument[]): {
    outcomes: MapOutcome[];
    errors: { document: string; error: string }[];
  } {
    const outcomes: MapOutcome[] = new Array(documents.length);
    const byCollection = new Map<string, number[]>();
    documents.forEach((d, i) => {
      const list = byCollection.get(d.collection);
      if (list) list.push(i);
      else byCollection.set(d.collection, [i]);
    });
    for (const [collection, positions] of byCollection) {
      const docs = positions.map((i) => documents[i]!.doc);
      let results: MapOutcome[];
      try {
        results = this.mapper.map(collection, docs);
      } catch {
        // A limit was hit somewhere in the batch: find the culprit document by mapping one at a time.
        results = docs.map((doc) => this.mapOne(collection, doc));
      }
      positions.forEach((docIndex, j) => {
        outcomes[docIndex] = results[j] ?? { ok: false, error: 'the map returned no result' };
      });
    }
    const errors: { document: string; error: string }[] = [];
    documents.forEach((d, i) => {
      const outcome = outcomes[i];
      if (outcome && !outcome.ok) errors.push({ document: d.id, error: outcome.error });
    });
    return { outcomes, errors };
  }

  private mapOne(collection: string, doc: Record<string, unknown>): MapOutcome {
    try {
      return this.mapper.map(collection, [doc])[0] ?? { ok: false, error: 'the map returned no result' };
    } catch (error) {
      // A memory limit disposes the sandbox: start a fresh one for the next documents.
      this.mapper.dispose();
      this.mapper = this.mapperFactory();
      return { ok: false, error: (error as Error).message };
    }
  }

  // ---- map indexes -----------------------------------------------------------

  private removeEntriesOf(sources: readonly string[]): void {
    const entries: number[] = [];
    for (const source of sources) for (const row of this.s.entriesOf.all(source)) entries.push(row.id);
    this.removeEntries(entries);
  }

  /** Writes the buffered terms in key order, TERM_ROWS_PER_INSERT rows per statement. */
  private flushTerms(): void {
    const chunk: (number | TermValue)[] = [];
    this.pendingTerms.drain((field, value, entry) => {
      chunk.push(field, value, entry);
      if (chunk.length === TERM_ROWS_PER_INSERT * 3) {
        this.insertTerms.run(...chunk);
        chunk.length = 0;
      }
    });
    for (let i = 0; i < chunk.length; i += 3)
      this.s.insertTerm.run(chunk[i] as number, chunk[i + 1]!, chunk[i + 2] as number);
  }

  /** Removes entries and their terms: all (field, value, entry) keys gathered, sorted, deleted in one pass. */
  private removeEntries(entries: number[]): void {
    if (entries.length === 0) return;
    this.flushTerms();
    entries.sort((a, b) => a - b);
    const doomed: { field: number; value: TermValue; entry: number }[] = [];
    for (const entry of entries) {
      for (const t of this.s.termsOf.all(entry)) doomed.push({ field: t.field, value: t.value, entry });
      this.s.deleteSpatial.run(entry);
      this.s.deleteFts?.run(entry);
      this.s.deleteEntry.run(entry);
    }
    this.entryDelta -= entries.length;
    doomed.sort((a, b) => a.field - b.field || compareTerms(a.value, b.value) || a.entry - b.entry);
    for (const t of doomed) {
      this.s.deleteTerm.run(t.field, t.value, t.entry);
      this.countDelta(t.field, t.value, -1);
    }
  }

  private writeEntry(source: string, docId: string | null, entry: IndexEntry, stored: string | null): void {
    const entryId = Number(this.s.insertEntry.run(source, docId, stored).lastInsertRowid);
    this.entryDelta++;
    const texts: (string | null)[] | null =
      this.searchFields.length > 0 ? this.searchFields.map(() => null) : null;
    for (const [name, raw] of Object.entries(entry)) {
      const searchColumn = texts ? this.searchFields.indexOf(name) : -1;
      if (texts && searchColumn >= 0) {
        texts[searchColumn] = textOf(raw);
        continue;
      }
      const field = this.fields.ensure(name);
      const exact = this.exactFields.has(name);
      const values = Array.isArray(raw) ? raw.flat(8) : [raw];
      const seen = new Set<TermValue>();
      for (const value of values.length === 0 ? [null] : values) {
        const point = asSpatialPoint(value);
        if (point) {
          this.s.insertSpatial.run(entryId, field, point.lat, point.lng);
          continue;
        }
        const term = termOf(value, exact);
        if (term === undefined) continue;
        const dedupeKey = Buffer.isBuffer(term) ? '\u0000null' : term;
        if (seen.has(dedupeKey)) continue;
        seen.add(dedupeKey);
        this.pendingTerms.add(field, term, entryId);
        this.countDelta(field, term, 1);
      }
    }
    if (texts && this.s.insertFts && texts.some((t) => t !== null)) this.s.insertFts.run(entryId, ...texts);
  }

  private countDelta(field: number, value: TermValue, delta: number): void {
    const key = `${field}:${typeof value === 'number' ? `n${value}` : Buffer.isBuffer(value) ? 'b' : `s${value}`}`;
    const known = this.deltas.get(key);
    if (known) known.delta += delta;
    else this.deltas.set(key, { field, value, delta });
  }

  /** Counters once per batch: one upsert per distinct term touched, however many entries touched it. */
  private flushCounts(): void {
    this.flushTerms();
    for (const d of this.deltas.values()) {
      if (d.delta === 0) continue;
      this.s.addCount.run(d.field, d.value, d.delta);
      if (d.delta < 0) this.s.dropEmptyCount.run(d.field, d.value);
    }
    this.deltas.clear();
    if (this.entryDelta !== 0) {
      this.s.setMeta.run(Number(this.s.getMeta.get('entries')?.value ?? 0) + this.entryDelta, 'entries');
      this.entryDelta = 0;
    }
  }

  // ---- map/reduce ------------------------------------------------------------

  private applyReduce(
    sources: readonly string[],
    documents: readonly SourceDocument[],
    outcomes: readonly MapOutcome[],
  ): number {
    const affected = new Set<string>();
    for (const source of sources) {
      for (const row of this.s.mapResultKeysOf.all(source)) affected.add(row.reduce_key);
      this.s.deleteMapResults.run(source);
    }
    documents.forEach((doc, i) => {
      const outcome = outcomes[i];
      if (!outcome?.ok || outcome.entries.length === 0) return;
      const keys = this.mapper.reduceKeys(outcome.entries);
      outcome.entries.forEach((entry, j) => {
        const key = keys[j];
        if (key === undefined) return;
        this.s.insertMapResult.run(doc.key, key, JSON.stringify(entry));
        affected.add(key);
      });
    });
    const keys = [...affected].sort();
    let written = 0;
    for (let i = 0; i < keys.length; i += REDUCE_CHUNK) {
      const chunk = keys.slice(i, i + REDUCE_CHUNK);
      const groups = chunk.map((key) =>
        this.s.mapResultsOfKey.all(key).map((r) => JSON.parse(r.value) as IndexEntry),
      );
      const live = chunk.filter((_, j) => (groups[j]?.length ?? 0) > 0);
      const results = this.mapper.reduce(groups.filter((g) => g.length > 0));
      this.removeEntriesOf(chunk.map((key) => `r:${key}`));
      live.forEach((key, j) => {
        const result = results[j];
        if (!result) return;
        this.writeEntry(`r:${key}`, null, result, JSON.stringify(result));
        written++;
      });
    }
    return written;
  }
}

function textOf(raw: unknown): string | null {
  const parts = (Array.isArray(raw) ? raw.flat(8) : [raw]).filter((v) => v !== null && v !== undefined);
  if (parts.length === 0) return null;
  return parts.map((v) => (typeof v === 'string' ? v : JSON.stringify(v))).join('\n');
}

/** SQLite's order of values: numbers < text < blobs. */
function compareTerms(a: TermValue, b: TermValue): number {
  const rank = (v: TermValue) => (typeof v === 'number' ? 0 : typeof v === 'string' ? 1 : 2);
  const d = rank(a) - rank(b);
  if (d !== 0) return d;
  if (typeof a === 'number' && typeof b === 'number') return a - b;
  if (typeof a === 'string' && typeof b === 'string') return a < b ? -1 : a > b ? 1 : 0;
  return 0;
}
