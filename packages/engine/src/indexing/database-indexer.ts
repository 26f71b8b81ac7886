import fs from 'node:fs';
import path from 'node:path';
import { type IndexDefinition, type IndexStats, RookeryError } from '@rookery/protocol';
import type BetterSqlite3 from 'better-sqlite3';
import type { IndexSnapshotEntry } from '../mirror/index-snapshots.js';
import { BatchPreparer, type PreparedBatch } from './batch-preparer.js';
import { DocumentSource } from './document-source.js';
import {
  ADOPTING_DIRECTORY,
  awaitedBuildOf,
  catchUpStaged,
  markAwaitingBuild,
  stageIndexSnapshot,
} from './index-adoption.js';
import {
  createIndexFile,
  INDEXES_DIRECTORY,
  indexFileName,
  openIndexFile,
  readDefinition,
  removeIndexFiles,
} from './index-file.js';
import { IndexReplacements } from './index-replacement.js';
import { type IndexSnapshotPolicy, IndexSnapshotSchedule } from './index-snapshot-schedule.js';
import { indexStatsOf } from './index-stats.js';
import { type BatchOutcome, IndexWriter, ReduceBudgetExceeded } from './index-writer.js';
import { createMapper } from './mapper.js';
import { type Prepared, PrepareError, type PrepareRequest, type PrepareThread } from './prepare-thread.js';
import { resolveSandboxLimits, SandboxError, type SandboxLimits } from './sandbox/index.js';
import type { SandboxBudget } from './sandbox-budget.js';
import { currentBootId, definitionToRebuild, markWriterClosed, markWriterOpen } from './writer-marker.js';

/**
 * Documents per indexing batch (one index transaction each): the size
 * `bench:queries` measures; 8,192 built within noise of it (docs/benchmarks.md).
 * A query sees a big build move on about once a second.
 */
export const DEFAULT_INDEXING_BATCH = 16_384;

/** Indexes one database may hold (each is a file, a connection and its cache, and maybe sandboxes). */
export const DEFAULT_MAX_INDEXES = 128;

export interface DatabaseIndexerOptions {
  /** Most documents read per batch (and per index transaction). Default DEFAULT_INDEXING_BATCH. */
  batchSize?: number;
  sandbox?: Partial<SandboxLimits>;
  /** Most indexes of this database; a PUT of one more is refused (409 TooManyIndexes). Default DEFAULT_MAX_INDEXES. */
  maxIndexes?: number;
  /**
   * The tenant's sandbox memory budget, shared by its databases' indexers: a
   * JavaScript index that does not fit is refused (409 IndexSandboxBudgetExceeded).
   * Without it, sandbox memory is not counted.
   */
  sandboxBudget?: SandboxBudget;
  /**
   * The thread `step()` prepares batches on (one per process, shared by its
   * databases). Without it, `step()` prepares on the calling thread.
   */
  prepareThread?: PrepareThread;
  /** Copies caught-up indexes to the database's mirror now and then (`snapshotDue`); absent: never. */
  snapshots?: IndexSnapshotPolicy;
  /** Builds new and reset indexes of large databases on the worker fleet (`adoptBuilt`); absent: always here. */
  workerBuilds?: WorkerBuildPolicy;
}

export interface WorkerBuildPolicy {
  /** This database's directory on the mirror: where the worker's snapshot appears. */
  mirrorDirectory: string;
  /** A new or reset index of a database holding more documents than this is built by a worker. */
  threshold: number;
  /**
   * Asks for the build (the job on the queue); called again after a restart while one is awaited.
   * `build` labels it: only that snapshot is adopted, so a reset never adopts a copy of its old self.
   */
  request(definition: IndexDefinition, build: string): void;
}

export interface IndexProgress {
  index: string;
  lastEtag: number;
  documents: number;
  /** Deleted documents taken out of the index. */
  removed: number;
  errors: number;
}

interface LoadedIndex {
  name: string;
  file: string;
  db: BetterSqlite3.Database;
  writer: IndexWriter;
  /** The definition as JSON: the key of the index's preparer on the prepare thread. */
  definitionJson: string;
  /** Preparation on this thread (`runOnce`), started on first use. */
  preparer: BatchPreparer | null;
  /** The next batch, being prepared on the prepare thread while this one is written. */
  prefetch: { afterEtag: number; prepared: Promise<Prepared> } | null;
  /** What the index holds of the sandbox budget. */
  sandboxMb: number;
  /**
   * Most documents of its next batch: the indexer's batch size, less after a
   * batch whose JavaScript reduce ran over its time budget (see ReduceBudgetExceeded).
   */
  batchLimit: number;
  /**
   * The worker build this index awaits (null: built here). An empty index
   * is not built here meanwhile; an old one (a reset) keeps answering and keeping up.
   */
  awaitingBuild: string | null;
}

/**
 * The indexing side of one database: owns every index file of the database
 * (the only writer of them) and moves each index forward from docs.db, batch
 * by batch. Runs in an indexer process, never on the tenant's request path.
 */
export class DatabaseIndexer {
  private readonly source: DocumentSource;
  private readonly indexes = new Map<string, LoadedIndex>();
  /**
   * By the same key: the index of a changed definition, built (here, or by a worker) beside the one in
   * `indexes`, which answers until this one has caught up and takes its place (index-replacement.ts).
   */
  private readonly replacements: IndexReplacements<LoadedIndex>;
  private readonly batchSize: number;
  private readonly directory: string;
  private readonly bootId = currentBootId();
  private readonly docsFile: string;
  private readonly snapshots: IndexSnapshotSchedule | null;
  private closed = false;
  /**
   * docs.db's data_version when the indexer last found nothing to do and did its quiet-point work
   * (`markQuiet`); null: look again. While docs.db's data_version still equals it, nothing can be due.
   */
  private quietVersion: number | null = null;
  /** docs.db's data_version read at the start of the last step: what `markQuiet` records. */
  private lookedAtVersion: number | null = null;
  /** Times `isQuiet` answered true: the idle looks that cost one pragma and no index work. */
  quietLooks = 0;

  constructor(
    databaseDirectory: string,
    private readonly options: DatabaseIndexerOptions = {},
  ) {
    this.docsFile = path.join(databaseDirectory, 'docs.db');
    this.source = new DocumentSource(this.docsFile);
    this.batchSize = options.batchSize ?? DEFAULT_INDEXING_BATCH;
    this.directory = path.join(databaseDirectory, INDEXES_DIRECTORY);
    this.snapshots = options.snapshots
      ? new IndexSnapshotSchedule(databaseDirectory, options.snapshots)
      : null;
    this.replacements = new IndexReplacements({
      directory: this.directory,
      answering: this.indexes,
      load: (file) => this.load(file),
      unload: (loaded) => this.unload(loaded),
      lookAgain: () => this.lookAgain(),
    });
    fs.mkdirSync(this.directory, { recursive: true });
    for (const file of fs.readdirSync(this.directory)) {
      if (!file.endsWith('.db')) continue;
      try {
        this.indexes.set(...this.load(path.join(this.directory, file)));
      } catch {
        // A file left half-created by a crash during creation: the definition can be put again.
        removeIndexFiles(path.join(this.directory, file));
      }
    }
    this.replacements.resume();
    for (const name of this.awaitingBuilds) this.requestBuildIfAwaited(name);
  }

  get names(): string[] {
    return [...this.indexes.values()].map((i) => i.name);
  }

  /** Names of the indexes whose changed definition is being built beside them (side by side). */
  get replacing(): string[] {
    return this.replacements.values().map((i) => i.name);
  }

  /** Creates the index, or replaces it (and re-indexes) if its definition changed. */
  put(definition: IndexDefinition): { created: boolean } {
    const key = definition.Name.toLowerCase();
    const existing = this.indexes.get(key);
    const replacing = this.replacements.get(key);
    const json = JSON.stringify(definition);
    if (existing && existing.definitionJson === json) {
      // The answering definition put back: the change being built beside it is called off.
      if (replacing) this.replacements.drop(key);
      return { created: false };
    }
    if (replacing && replacing.definitionJson === json) return { created: false };
    const maxIndexes = this.options.maxIndexes ?? DEFAULT_MAX_INDEXES;
    if (!existing && this.indexes.size >= maxIndexes) {
      throw new RookeryError(
        'TooManyIndexes',
        `Index ${definition.Name} was not created: a database may hold at most ${maxIndexes} indexes ` +
          `and this one holds ${this.indexes.size}. Delete an index you no longer query, or ask the ` +
          'operator to raise ROOKERY_INDEX_MAX_PER_DATABASE.',
        { limit: maxIndexes },
      );
    }
    // A replacement's sandboxes run beside the old index's: only a replacement it supersedes gives some back.
    let sideBySide = existing !== undefined;
    const sandboxMb = this.sandboxMbOf(definition);
    try {
      this.options.sandboxBudget?.check(
        definition.Name,
        sandboxMb,
        existing ? (replacing?.sandboxMb ?? 0) : 0,
      );
    } catch (error) {
      if (!existing) throw error;
      // No room for both: replaced in place, as before side by side (the new one answers as it builds).
      this.options.sandboxBudget?.check(
        definition.Name,
        sandboxMb,
        existing.sandboxMb + (replacing?.sandboxMb ?? 0),
      );
      sideBySide = false;
    }
    // Compile first: a definition that does not compile must not replace a working index.
    try {
      createMapper(definition, this.options.sandbox).dispose();
    } catch (error) {
      throw new RookeryError(
        'InvalidIndexDefinition',
        `Index ${definition.Name} does not compile: ${(error as Error).message}`,
      );
    }
    // A changed definition is built side by side: the old index answers until the new one has caught up.
    if (replacing) this.replacements.drop(key);
    if (existing && !sideBySide) this.delete(existing.name);
    const file = sideBySide
      ? this.replacements.fileFor(definition.Name)
      : path.join(this.directory, indexFileName(definition.Name));
    fs.mkdirSync(path.dirname(file), { recursive: true });
    removeIndexFiles(file);
    const created = createIndexFile(file, definition);
    try {
      if (this.buildsOnWorker()) markAwaitingBuild(created);
    } finally {
      created.close();
    }
    const [, loaded] = this.load(file);
    if (sideBySide) this.replacements.add(key, loaded);
    else this.indexes.set(key, loaded);
    this.requestBuildIfAwaited(definition.Name);
    return { created: true };
  }

  delete(name: string): boolean {
    this.replacements.drop(name.toLowerCase());
    const loaded = this.indexes.get(name.toLowerCase());
    if (!loaded) return false;
    this.indexes.delete(name.toLowerCase());
    this.unload(loaded);
    removeIndexFiles(loaded.file);
    this.lookAgain();
    return true;
  }

  /** Drops everything the index holds and indexes the database again from etag 0. */
  reset(name: string): boolean {
    const loaded = this.indexes.get(name.toLowerCase());
    if (!loaded) return false;
    const replacement = this.replacements.get(name.toLowerCase());
    if (replacement) {
      // The definition that will answer is the replacement's: it starts again from zero, the old one answering.
      const definition = replacement.writer.definition;
      this.replacements.drop(name.toLowerCase());
      this.put(definition);
      return true;
    }
    const definition = loaded.writer.definition;
    if (this.buildsOnWorker()) {
      // The old index answers (and keeps up here) until the worker's build is adopted.
      loaded.awaitingBuild = markAwaitingBuild(loaded.db);
      this.lookAgain();
      this.requestBuildIfAwaited(definition.Name);
      return true;
    }
    this.delete(loaded.name);
    this.put(definition);
    return true;
  }

  /** The documents' last etag now (the end a build from scratch must reach). */
  documentsLastEtag(): number {
    return this.source.lastEtag();
  }

  /** Names of the indexes a worker is building. */
  get awaitingBuilds(): string[] {
    return this.allLoaded()
      .filter((i) => i.awaitingBuild !== null)
      .map((i) => i.name);
  }

  /** The answering indexes, then the replacements being built beside them. */
  private allLoaded(): LoadedIndex[] {
    return [...this.indexes.values(), ...this.replacements.values()];
  }

  /**
   * Adopts the worker-built snapshot of every index that awaits one and has it on the mirror
   * (index-adoption.ts): caught up in a staging file, then swapped in. Returns the names adopted.
   */
  adoptBuilt(): string[] {
    const policy = this.options.workerBuilds;
    if (!policy) return [];
    const adopted: string[] = [];
    for (const loaded of this.allLoaded()) {
      if (loaded.awaitingBuild === null || this.closed) continue;
      const definition = loaded.writer.definition;
      const staged = stageIndexSnapshot(
        policy.mirrorDirectory,
        path.dirname(this.directory),
        definition,
        this.source.txid(),
        loaded.awaitingBuild,
      );
      if (!staged) continue;
      try {
        catchUpStaged(staged.file, definition, this.source, this.batchSize, this.options.sandbox);
        this.replacements.promote(loaded.name.toLowerCase(), staged.file);
        adopted.push(loaded.name);
      } finally {
        fs.rmSync(path.join(path.dirname(this.directory), ADOPTING_DIRECTORY), {
          recursive: true,
          force: true,
        });
      }
    }
    return adopted;
  }

  private buildsOnWorker(): boolean {
    const policy = this.options.workerBuilds;
    return policy !== undefined && this.source.documentCount() > policy.threshold;
  }

  private requestBuildIfAwaited(name: string): void {
    const loaded = this.replacements.get(name.toLowerCase()) ?? this.indexes.get(name.toLowerCase());
    if (loaded && loaded.awaitingBuild !== null)
      this.options.workerBuilds?.request(loaded.writer.definition, loaded.awaitingBuild);
  }

  /** An index a worker builds from zero is not built here too (that is the host's CPU the worker saves). */
  private buildsHere(loaded: LoadedIndex): boolean {
    return !(loaded.awaitingBuild !== null && loaded.writer.lastEtag === 0);
  }

  /**
   * True while nothing can have changed since the last quiet point (`markQuiet`): docs.db's data_version
   * is the same (no commit by the tenant) and no index was put, deleted, reset or adopted here. One
   * pragma: the indexer's safety-net poll asks this of every database every second, so an idle database
   * costs that and no index work. False also counts as a look: `step` records the version it starts from.
   */
  isQuiet(): boolean {
    if (this.quietVersion === null || this.source.dataVersion() !== this.quietVersion) return false;
    this.quietLooks++;
    return true;
  }

  /**
   * Records that the last `step` found every index caught up and the quiet-point work (adoption of worker
   * builds, copies to the mirror) is done: `isQuiet` says so until docs.db changes or `lookAgain`.
   */
  markQuiet(): void {
    this.quietVersion = this.lookedAtVersion;
  }

  /**
   * Ends the quiet: the next look does the whole step and quiet-point work again. Called on every local
   * change, and by the indexer process when a worker's build landed or a time-based check may be due.
   */
  lookAgain(): void {
    this.quietVersion = null;
    // A step in flight saw the state before this change: its quiet point must not be marked.
    this.lookedAtVersion = null;
  }

  /**
   * Runs at most one batch per index that is behind, preparing it on this
   * thread. Returns the progress made (empty when every index is up to date).
   */
  runOnce(): IndexProgress[] {
    // Read before the last etag: a commit after it changes the version, so the quiet it may mark ends.
    this.lookedAtVersion = this.source.dataVersion();
    const progress: IndexProgress[] = [];
    const lastEtag = this.source.lastEtag();
    for (const loaded of this.allLoaded()) {
      const from = loaded.writer.readsFrom;
      if ((from >= lastEtag && !loaded.writer.reducing) || !this.buildsHere(loaded)) continue;
      progress.push(
        this.advance(loaded, from, () => {
          loaded.preparer ??= new BatchPreparer(loaded.writer.definition, this.options.sandbox);
          const batch = this.source.readBatch(loaded.preparer.collections, from, loaded.batchLimit, {
            includeArchived: loaded.writer.definition.IncludeArchived === true,
          });
          return loaded.preparer.prepare(batch);
        }),
      );
    }
    this.promoteCaughtUp();
    return progress;
  }

  /** Swaps in every replacement built here that has caught up with the database. */
  private promoteCaughtUp(): void {
    if (this.replacements.size === 0 || this.closed) return;
    this.replacements.promoteCaughtUp(this.source.lastEtag());
  }

  /**
   * Like `runOnce`, with batches prepared on the prepare thread (when given):
   * while a batch is written here, the next one of the same index is already
   * being read and mapped there, so the two cores work at once.
   */
  async step(): Promise<IndexProgress[]> {
    const thread = this.options.prepareThread;
    if (!thread) return this.runOnce();
    this.lookedAtVersion = this.source.dataVersion();
    const progress: IndexProgress[] = [];
    const lastEtag = this.source.lastEtag();
    for (const loaded of this.allLoaded()) {
      const from = loaded.writer.readsFrom;
      if ((from >= lastEtag && !loaded.writer.reducing) || !this.buildsHere(loaded)) continue;
      // A first build's reduce phase reads no documents (a batch prepared ahead waits for its end).
      if (loaded.writer.reducing) {
        progress.push(this.advance(loaded, from, null));
        continue;
      }
      const prefetched = loaded.prefetch?.afterEtag === from ? loaded.prefetch.prepared : null;
      loaded.prefetch = null;
      let prepared: Prepared;
      try {
        prepared = await (prefetched ?? thread.prepare(this.prepareRequest(loaded, from)));
      } catch (error) {
        if (this.isCurrent(loaded, from)) progress.push(this.failed(loaded, from, error as Error));
        continue;
      }
      // The index may have been replaced, reset or closed while the batch was prepared.
      if (!this.isCurrent(loaded, from)) continue;
      if (prepared.more) {
        const next = thread.prepare(this.prepareRequest(loaded, prepared.batch.upToEtag));
        next.catch(() => undefined); // a failure is reported when the batch is taken, if it still is
        loaded.prefetch = { afterEtag: prepared.batch.upToEtag, prepared: next };
      }
      progress.push(this.advance(loaded, from, () => prepared.batch));
    }
    this.promoteCaughtUp();
    return progress;
  }

  /** Prepares (through `prepare`) and writes one batch, or reduces groups in a first build's reduce phase (bulk-build.ts). */
  private advance(loaded: LoadedIndex, from: number, prepare: (() => PreparedBatch) | null): IndexProgress {
    let outcome: BatchOutcome;
    let documents = loaded.batchLimit;
    try {
      const batch = loaded.writer.reducing ? null : prepare?.();
      documents = batch?.documents ?? documents;
      // The batch that reaches the documents' end ends a first build's bulk phase (bulk-build.ts).
      outcome = batch
        ? loaded.writer.write(batch, { final: batch.upToEtag >= this.source.lastEtag() })
        : loaded.writer.reduceChunk(loaded.batchLimit);
    } catch (error) {
      if (error instanceof ReduceBudgetExceeded) {
        // Rolled back, not failed: the same documents come again in smaller batches, after the other indexes' turn.
        loaded.batchLimit = Math.max(1, Math.floor(documents / 4));
        return { index: loaded.name, lastEtag: from, documents: 0, removed: 0, errors: 0 };
      }
      return this.failed(loaded, from, error as Error);
    }
    loaded.batchLimit = Math.min(this.batchSize, loaded.batchLimit * 2);
    return {
      index: loaded.name,
      lastEtag: outcome.upToEtag,
      documents: outcome.documents,
      removed: outcome.removed,
      errors: outcome.errors,
    };
  }

  /** Never silently dropped: the error goes into the index's stats and the batch is retried later. */
  private failed(loaded: LoadedIndex, from: number, error: Error): IndexProgress {
    const tenantCode = error instanceof SandboxError || (error instanceof PrepareError && error.sandbox);
    loaded.writer.recordError(null, tenantCode ? error.message : `indexing failed: ${error.message}`);
    return { index: loaded.name, lastEtag: from, documents: 0, removed: 0, errors: 1 };
  }

  /** False once the index was replaced, reset, deleted or moved on, or the indexer closed. */
  private isCurrent(loaded: LoadedIndex, from: number): boolean {
    const key = loaded.name.toLowerCase();
    return (
      !this.closed &&
      (this.indexes.get(key) === loaded || this.replacements.get(key) === loaded) &&
      loaded.writer.readsFrom === from
    );
  }

  private prepareRequest(loaded: LoadedIndex, afterEtag: number): PrepareRequest {
    return {
      docsFile: this.docsFile,
      definition: loaded.definitionJson,
      afterEtag,
      limit: loaded.batchLimit,
      includeArchived: loaded.writer.definition.IncludeArchived === true,
      ...(this.options.sandbox ? { sandbox: this.options.sandbox } : {}),
    };
  }

  /**
   * Copies to the mirror every index that is caught up and due for a copy (index-snapshot-schedule.ts).
   * Call it at a quiet point: when a step made no progress. An index replaced, deleted or closed
   * while it was being copied is skipped (its copy is abandoned and removed).
   */
  async snapshotDue(): Promise<IndexSnapshotEntry[]> {
    if (!this.snapshots) return [];
    const taken: IndexSnapshotEntry[] = [];
    for (const loaded of [...this.indexes.values()]) {
      const lastEtag = this.source.lastEtag();
      // An index awaiting a worker's build is not copied: its copy would pass for the build.
      if (loaded.awaitingBuild !== null) continue;
      if (!this.isCurrent(loaded, loaded.writer.lastEtag) || loaded.writer.lastEtag < lastEtag) continue;
      try {
        const entry = await this.snapshots.takeIfDue(
          loaded.writer.definition,
          loaded.writer.lastEtag,
          loaded.db,
          () => this.source.txid(),
        );
        if (entry) taken.push(entry);
      } catch (error) {
        if (this.indexes.get(loaded.name.toLowerCase()) === loaded && !this.closed) throw error;
      }
    }
    return taken;
  }

  /** Runs batches until every index has caught up with the database (tests and rebuilds). */
  runUntilIdle(): void {
    for (;;) {
      const progress = this.runOnce();
      if (progress.length === 0 || progress.every((p) => p.documents === 0 && p.errors > 0)) return;
    }
  }

  stats(name: string): IndexStats | null {
    const loaded = this.indexes.get(name.toLowerCase());
    if (!loaded) return null;
    return indexStatsOf(loaded.db, this.source);
  }

  close(): void {
    this.closed = true;
    for (const loaded of this.allLoaded()) this.unload(loaded);
    this.indexes.clear();
    this.replacements.clear();
    this.source.close();
    this.options.prepareThread?.forget(this.docsFile, null);
  }

  /** Opens an index file; the caller files it (answering, or a replacement) under the returned key. */
  private load(file: string): [string, LoadedIndex] {
    this.lookAgain();
    const lost = definitionToRebuild(file, this.bootId);
    if (lost) {
      // The OS went down while this index was written without fsync: start it again from its definition.
      removeIndexFiles(file);
      createIndexFile(file, lost).close();
    }
    const db = openIndexFile(file, { unsynced: this.bootId !== null });
    try {
      const definition = readDefinition(db);
      if (this.bootId !== null) markWriterOpen(file, this.bootId, definition);
      const writer = new IndexWriter(db, definition, this.options.sandbox);
      const sandboxMb = this.sandboxMbOf(definition);
      this.options.sandboxBudget?.hold(sandboxMb);
      return [
        definition.Name.toLowerCase(),
        {
          name: definition.Name,
          file,
          db,
          writer,
          definitionJson: JSON.stringify(definition),
          preparer: null,
          prefetch: null,
          sandboxMb,
          batchLimit: this.batchSize,
          awaitingBuild: awaitedBuildOf(db),
        },
      ];
    } catch (error) {
      db.close();
      throw error;
    }
  }

  /** Closes an index cleanly: everything is with the OS, so its file can be trusted after any later crash. */
  private unload(loaded: LoadedIndex): void {
    loaded.prefetch = null;
    loaded.preparer?.dispose();
    this.options.prepareThread?.forget(this.docsFile, loaded.definitionJson);
    loaded.writer.close();
    loaded.db.close();
    markWriterClosed(loaded.file);
    this.options.sandboxBudget?.release(loaded.sandboxMb);
  }

  /** The sandbox memory a definition can hold: a JavaScript map's isolate, and its reduce's (run by the writer). */
  private sandboxMbOf(definition: IndexDefinition): number {
    if (typeof definition.Maps[0] !== 'string') return 0;
    const { memoryMb } = resolveSandboxLimits(this.options.sandbox);
    return typeof definition.Reduce === 'string' ? 2 * memoryMb : memoryMb;
  }
}

/** Kept here too: the engine's door names it from this file. */
export { awaitedBuildOf };
