import type { IndexDefinition } from '@rookery/protocol';
import type { SourceBatch, SourceDocument } from './document-source.js';
import { type EntryRows, EntryRowsBuilder } from './entry-rows.js';
import { createMapper, type MapOutcome, type Mapper } from './mapper.js';
import { resolveSandboxLimits, SandboxError, type SandboxLimits } from './sandbox/index.js';

/** A map output of a map/reduce index, ready to store: the document, its group key, the entry as JSON. */
export interface MapResultRow {
  source: string;
  /** The document's id as written (errors of its group name it). */
  document: string;
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

/**
 * Maps batches of one index's documents and turns them into rows (no I/O).
 *
 * Tenant code cannot make it skip an innocent document or stall: a document
 * that throws, runs over its time or entry limit, or kills the sandbox is an
 * error naming it (the others are mapped, in a fresh sandbox if needed), and a
 * batch that has spent its time budget is cut short at the first document not
 * mapped yet; the rest comes in the next batch, after the other indexes' turn.
 */
export class BatchPreparer {
  private mapper: Mapper;
  private readonly entries: EntryRowsBuilder;
  private readonly batchTimeMs: number;

  constructor(
    private readonly definition: IndexDefinition,
    private readonly limits?: Partial<SandboxLimits>,
  ) {
    this.mapper = createMapper(definition, limits);
    this.entries = new EntryRowsBuilder(definition);
    this.batchTimeMs = resolveSandboxLimits(limits).batchTimeMs;
  }

  /** Collections the maps read, or null for every document. */
  get collections(): readonly string[] | null {
    return this.mapper.collections;
  }

  prepare(whole: SourceBatch): PreparedBatch {
    // Rows left by a batch that failed part-way must not leak into this one.
    this.entries.reset();
    const deadline = Date.now() + this.batchTimeMs;
    const mapped = this.mapDocuments(whole.documents, deadline);
    const groupKeys = this.mapper.hasReduce ? this.groupKeysOf(mapped, deadline) : [];
    const batch = cutAtFirstUnmapped(whole, mapped);
    const outcomes = mapped.slice(0, batch.documents.length);
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
        const keys = groupKeys[i];
        if (keys === undefined) return; // no entries
        if (!Array.isArray(keys)) {
          // This document's group key cannot be computed: it is skipped (and named), not the batch.
          errors.push({ document: doc.id, error: keys.error });
          return;
        }
        outcome.entries.forEach((entry, j) => {
          const key = keys[j];
          if (key !== undefined)
            mapResults.push({ source: doc.key, document: doc.id, key, value: JSON.stringify(entry) });
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

  /**
   * A map/reduce index's group keys of each mapped document's entries (tenant
   * code too, one call per document), in etag order until `deadline`: the
   * documents left are marked unmapped in `mapped`, so the batch is cut there.
   */
  private groupKeysOf(
    mapped: (MapOutcome | undefined)[],
    deadline: number,
  ): (string[] | { error: string } | undefined)[] {
    const keys: (string[] | { error: string } | undefined)[] = [];
    for (let i = 0; i < mapped.length; i++) {
      const outcome = mapped[i];
      if (outcome === undefined) break;
      if (i > 0 && Date.now() >= deadline) {
        mapped.fill(undefined, i);
        break;
      }
      if (!outcome.ok || outcome.entries.length === 0) {
        keys.push(undefined);
        continue;
      }
      try {
        keys.push(this.mapper.reduceKeys(outcome.entries));
      } catch (error) {
        keys.push({ error: (error as Error).message });
        this.renewIfDead(error);
      }
    }
    return keys;
  }

  /**
   * One outcome per document, by position; a position left empty was not
   * mapped before `deadline` (the batch is cut there). The first document is
   * always mapped, so every batch moves on.
   */
  private mapDocuments(documents: readonly SourceDocument[], deadline: number): (MapOutcome | undefined)[] {
    const outcomes = new Array<MapOutcome | undefined>(documents.length).fill(undefined);
    const byCollection = new Map<string, number[]>();
    documents.forEach((d, i) => {
      const list = byCollection.get(d.collection);
      if (list) list.push(i);
      else byCollection.set(d.collection, [i]);
    });
    // In the order of each collection's first document: the first group holds the batch's first document.
    let first = true;
    for (const [collection, positions] of byCollection) {
      if (!first && Date.now() >= deadline) break;
      first = false;
      const docs = positions.map((i) => documents[i]!.doc);
      let results: MapOutcome[];
      try {
        results = this.mapper.map(collection, docs, deadline);
      } catch {
        // The sandbox failed as a whole (it went over its memory limit and was disposed, so the
        // outcomes it held are lost): map one document at a time, each sandbox that dies replaced by
        // a fresh one, so only the document that kills it is an error.
        this.renew();
        results = this.mapEach(collection, docs, deadline);
      }
      results.forEach((result, j) => {
        outcomes[positions[j]!] = result;
      });
    }
    return outcomes;
  }

  private mapEach(
    collection: string,
    docs: readonly Record<string, unknown>[],
    deadline: number,
  ): MapOutcome[] {
    const results: MapOutcome[] = [];
    for (const doc of docs) {
      if (results.length > 0 && Date.now() >= deadline) break;
      try {
        results.push(
          this.mapper.map(collection, [doc])[0] ?? { ok: false, error: 'the map returned no result' },
        );
      } catch (error) {
        this.renew();
        results.push({ ok: false, error: (error as Error).message });
      }
    }
    return results;
  }

  /** Starts a fresh sandbox after one failed with `error`, if that failure disposed it. */
  private renewIfDead(error: unknown): void {
    if (error instanceof SandboxError && error.code === 'IndexMemoryLimitExceeded') this.renew();
  }

  private renew(): void {
    this.mapper.dispose();
    this.mapper = createMapper(this.definition, this.limits);
  }
}

/** The part of `batch` up to (not including) the first document without an outcome. */
function cutAtFirstUnmapped(batch: SourceBatch, outcomes: readonly (MapOutcome | undefined)[]): SourceBatch {
  const firstUnmapped = outcomes.indexOf(undefined);
  if (firstUnmapped < 0) return batch;
  // Documents are in etag order; everything before the first unmapped one is complete.
  const upToEtag = batch.documents[firstUnmapped]!.etag - 1;
  return {
    documents: batch.documents.slice(0, firstUnmapped),
    tombstones: batch.tombstones.filter((t) => t.etag <= upToEtag),
    upToEtag,
  };
}
