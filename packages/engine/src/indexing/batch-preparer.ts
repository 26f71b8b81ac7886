import type { IndexDefinition } from '@rookery/protocol';
import type { SourceBatch, SourceDocument } from './document-source.js';
import { type EntryRows, EntryRowsBuilder } from './entry-rows.js';
import { createMapper, type MapOutcome, type Mapper } from './mapper.js';
import type { SandboxLimits } from './sandbox/index.js';

/** A map output of a map/reduce index, ready to store: the document, its group key, the entry as JSON. */
export interface MapResultRow {
  source: string;
  key: string;
  value: string;
}

/**
 * Everything an index writer needs from one batch, worked out without the
 * index file: the documents mapped (in tenant code, possibly slow) and turned
 * into rows. Plain data, so a batch can be prepared on another thread while
 * the writer stores the one before it.
 */
export interface PreparedBatch {
  upToEtag: number;
  documents: number;
  /** Deleted (or, to this index, archived) documents whose entries must go. */
  removed: number;
  /** Lower-cased ids of every document the batch touches, sorted: their old entries are replaced. */
  sources: string[];
  errors: { document: string; error: string }[];
  /** A map index's new entries. */
  entries: EntryRows | null;
  /** A map/reduce index's new map outputs, to be re-reduced by group. */
  mapResults: MapResultRow[] | null;
}

/** Maps batches of one index's documents and turns them into rows (no I/O). */
export class BatchPreparer {
  private mapper: Mapper;
  private readonly entries: EntryRowsBuilder;

  constructor(
    private readonly definition: IndexDefinition,
    private readonly limits?: Partial<SandboxLimits>,
  ) {
    this.mapper = createMapper(definition, limits);
    this.entries = new EntryRowsBuilder(definition);
  }

  /** Collections the maps read, or null for every document. */
  get collections(): readonly string[] | null {
    return this.mapper.collections;
  }

  prepare(batch: SourceBatch): PreparedBatch {
    // Rows left by a batch that failed part-way must not leak into this one.
    this.entries.reset();
    const outcomes = this.mapDocuments(batch.documents);
    const sources = [
      ...new Set([...batch.documents.map((d) => d.key), ...batch.tombstones.map((t) => t.key)]),
    ];
    sources.sort();
    const errors: { document: string; error: string }[] = [];
    const mapResults: MapResultRow[] | null = this.mapper.hasReduce ? [] : null;
    batch.documents.forEach((doc, i) => {
      const outcome = outcomes[i];
      if (!outcome?.ok) {
        errors.push({ document: doc.id, error: outcome?.error ?? 'the map returned no result' });
        return;
      }
      if (mapResults) {
        if (outcome.entries.length === 0) return;
        const keys = this.mapper.reduceKeys(outcome.entries);
        outcome.entries.forEach((entry, j) => {
          const key = keys[j];
          if (key !== undefined) mapResults.push({ source: doc.key, key, value: JSON.stringify(entry) });
        });
      } else for (const entry of outcome.entries) this.entries.add(doc.key, doc.id, entry, null);
    });
    return {
      upToEtag: batch.upToEtag,
      documents: batch.documents.length,
      removed: batch.tombstones.length,
      sources,
      errors,
      entries: mapResults ? null : this.entries.take(),
      mapResults,
    };
  }

  dispose(): void {
    this.mapper.dispose();
  }

  private mapDocuments(documents: readonly SourceDocument[]): MapOutcome[] {
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
    return outcomes;
  }

  private mapOne(collection: string, doc: Record<string, unknown>): MapOutcome {
    try {
      return this.mapper.map(collection, [doc])[0] ?? { ok: false, error: 'the map returned no result' };
    } catch (error) {
      // A memory limit disposes the sandbox: start a fresh one for the next documents.
      this.mapper.dispose();
      this.mapper = createMapper(this.definition, this.limits);
      return { ok: false, error: (error as Error).message };
    }
  }
}
