import {
  collectionsOf,
  type Database,
  type DatabaseCatalog,
  IndexCatalog,
  type IndexingControl,
  QueryRunner,
} from '@rookery/engine';
import { type IndexDefinition, IndexDefinitionSchema } from '@rookery/protocol';
import type { FastifyBaseLogger } from 'fastify';
import type { IndexChange, IndexChangeFeed } from '../live/index-change-feed.js';
import { CatchUpWaits } from './catch-up-waits.js';
import { IndexerProcess } from './indexer-process.js';
import { type IndexBuildSink, WorkerBuilds } from './worker-builds.js';

const RETIRE_WAIT_MS = 10 * 60_000;

export interface TenantIndexingOptions {
  /** Every indexer request's deadline (ROOKERY_INDEXER_REQUEST_TIMEOUT_MS); the indexer's default otherwise. */
  indexerRequestTimeoutMs?: number;
  /** What one query answer may hold (ROOKERY_MAX_RESPONSE_BYTES); the engine's default otherwise. */
  maxResponseBytes?: number;
  /** Where requests for worker builds go (the host); absent: a tenant no host supervises. */
  indexBuildSink?: IndexBuildSink | undefined;
}

/** The query side of one database: its index readers and its query runner. */
export interface DatabaseQueries {
  db: Database;
  indexes: IndexCatalog;
  runner: QueryRunner;
}

/**
 * Indexing for the tenant's databases: one indexer process for all of them,
 * told about each database when it is first queried or written, nudged after
 * every commit.
 */
export class TenantIndexing {
  private readonly indexer: IndexerProcess;
  private readonly databases = new Map<string, Promise<DatabaseQueries>>();
  private readonly catchUps = new CatchUpWaits();
  /** Indexes the worker fleet builds, and how far it is (worker-builds.ts). */
  readonly workerBuilds: WorkerBuilds;

  /**
   * `indexer`: one started ahead (a spare tenant process starts it while it waits); else one is started now.
   * `indexChanges`: where index events go for the changes feed (batches completed, indexes added, removed).
   */
  constructor(
    private readonly catalog: DatabaseCatalog,
    private readonly log: FastifyBaseLogger,
    indexer?: IndexerProcess,
    private readonly indexChanges?: IndexChangeFeed,
    private readonly options: TenantIndexingOptions = {},
  ) {
    this.indexer = indexer ?? new IndexerProcess(log);
    // A spare's indexer was started before the tenant's configuration was known.
    if (options.indexerRequestTimeoutMs !== undefined)
      this.indexer.requestTimeoutMs = options.indexerRequestTimeoutMs;
    // Progress wakes the queries waiting on that database's indexes early; a poll covers the rest.
    this.indexer.onProgress((db) => this.catchUps.check(db));
    this.indexer.onProgress((db, index, lastEtag, batch) => {
      // Nothing to tell when the index did not change: a failed batch (retried every second at the same
      // etag), or one that only moved the index past writes to other collections. Every write would
      // otherwise notify every index, and each notification makes clients' aggressive caches suspect.
      if (batch.documents === 0 && batch.removed === 0) return;
      this.indexChanges?.publish(db, { Name: index, Type: 'BatchCompleted', Etag: lastEtag });
    });
    this.workerBuilds = new WorkerBuilds(options.indexBuildSink ?? null, log, (db) =>
      this.indexer.buildLanded(db.toLowerCase()),
    );
    this.indexer.onWorkerBuild((event) => {
      this.workerBuilds.onIndexer(event);
      if (event.type !== 'adopted') return;
      // The index file was swapped for the caught-up build: its waiting queries look again.
      this.catchUps.check(event.db);
      this.indexChanges?.publish(event.db, {
        Name: event.index,
        Type: 'BatchCompleted',
        Etag: event.lastEtag,
      });
    });
  }

  /** The database's query side, starting its indexing on first use. */
  forDatabase(name: string): Promise<DatabaseQueries> {
    let db: Database;
    try {
      db = this.catalog.get(name);
    } catch (error) {
      return Promise.reject(error);
    }
    const key = db.name.toLowerCase();
    let queries = this.databases.get(key);
    if (!queries) {
      queries = this.start(db, key);
      this.databases.set(key, queries);
      queries.catch(() => this.databases.delete(key));
    }
    return queries;
  }

  /** Stops indexing a database that is about to be deleted. */
  async forget(name: string): Promise<void> {
    const key = name.toLowerCase();
    const queries = this.databases.get(key);
    this.databases.delete(key);
    if (!queries) return;
    (await queries.catch(() => null))?.indexes.close();
    await this.indexer.closeDatabase(key);
  }

  async close(): Promise<void> {
    for (const queries of this.databases.values()) (await queries.catch(() => null))?.indexes.close();
    this.databases.clear();
    await this.indexer.stop();
  }

  request: IndexerProcess['request'] = (body) => this.indexer.request(body);

  /**
   * Creates or replaces an index: the indexer builds its file, then the definition is stored in
   * docs.db, which is what the mirror ships and a restore rebuilds the index from.
   */
  async defineIndex(db: Database, definition: IndexDefinition): Promise<{ created: boolean }> {
    const held = this.indexChanges?.hold(db.name, definition.Name);
    let added: IndexChange | undefined;
    let outcome: { created: boolean };
    try {
      outcome = (await this.indexer.request({
        type: 'put',
        db: db.name.toLowerCase(),
        definition,
      })) as { created: boolean };
      // A replaced definition is a new index too (it is built again from the first document).
      added = { Name: definition.Name, Type: 'IndexAdded', Etag: db.lastEtag };
    } finally {
      held?.release(added);
    }
    await db.putIndexDefinition(definition);
    return outcome;
  }

  async dropIndex(db: Database, name: string): Promise<boolean> {
    const deleted = (await this.indexer.request({
      type: 'delete',
      db: db.name.toLowerCase(),
      name,
    })) as boolean;
    await db.deleteIndexDefinition(name);
    if (deleted) this.indexChanges?.publish(db.name, { Name: name, Type: 'IndexRemoved', Etag: db.lastEtag });
    return deleted;
  }

  private async start(db: Database, key: string): Promise<DatabaseQueries> {
    await this.indexer.openDatabase(key, db.directory, db.mirror?.directory);
    db.onCommit(() => this.indexer.nudge(key));
    const indexes = new IndexCatalog(db.directory);
    await this.reconcileDefinitions(db, indexes);
    const control: IndexingControl = {
      putIndex: async (definition: IndexDefinition) => {
        await this.defineIndex(db, definition);
      },
      waitForNonStale: (name, timeoutMs) => this.waitForNonStale(db, indexes, name, timeoutMs),
      retireWhenCaughtUp: (name, successor) => {
        void this.waitForNonStale(db, indexes, successor, RETIRE_WAIT_MS)
          .then((caughtUp) => (caughtUp ? this.dropIndex(db, name) : null))
          .then(() => this.log.info({ db: db.name, index: name, successor }, 'automatic index retired'))
          .catch((err) =>
            this.log.warn({ err, db: db.name, index: name }, 'could not retire automatic index'),
          );
      },
    };
    const runner = new QueryRunner(db, indexes, control, { maxResponseBytes: this.options.maxResponseBytes });
    return { db, indexes, runner };
  }

  /**
   * Brings index files and the definitions stored in docs.db in line. Definitions without a file
   * (a database restored from the mirror: index files are never mirrored) are built again; files
   * without their definition in docs.db (a database from before definitions were stored there, or a
   * crash between the two steps of defineIndex) have it recorded, the file being the newer intent.
   */
  private async reconcileDefinitions(db: Database, indexes: IndexCatalog): Promise<void> {
    const files = new Map(indexes.definitions().map((d) => [d.Name.toLowerCase(), d]));
    const stored = new Map(db.indexDefinitions().map((d) => [d.Name.toLowerCase(), d]));
    for (const [key, definition] of stored) {
      if (files.has(key)) continue;
      await this.indexer.request({ type: 'put', db: db.name.toLowerCase(), definition });
      this.log.info({ db: db.name, index: definition.Name }, 'index rebuilt from its stored definition');
    }
    const canonical = (d: IndexDefinition | undefined) => d && JSON.stringify(IndexDefinitionSchema.parse(d));
    for (const [key, answering] of files) {
      // An index being replaced side by side is meant to have its replacement's definition.
      const definition = indexes.replacementDefinition(key) ?? answering;
      if (canonical(stored.get(key)) !== canonical(definition)) await db.putIndexDefinition(definition);
    }
  }

  /** Resolves true once the index has caught up with the database, false after `timeoutMs`. */
  private waitForNonStale(
    db: Database,
    indexes: IndexCatalog,
    name: string,
    timeoutMs: number,
  ): Promise<boolean> {
    const isCaughtUp = () => {
      const reader = indexes.reader(name);
      return (
        reader !== null &&
        !db.hasChangesAfter(collectionsOf(reader.definition), reader.lastEtag()) &&
        !indexes.isReplacing(name)
      );
    };
    const key = db.name.toLowerCase();
    if (isCaughtUp()) return Promise.resolve(true);
    this.indexer.nudge(key);
    return this.catchUps.wait(key, name, isCaughtUp, timeoutMs);
  }
}
