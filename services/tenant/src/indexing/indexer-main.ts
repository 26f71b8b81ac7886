#!/usr/bin/env node
// The indexer process: beside a tenant container, it owns the index files of
// the tenant's databases and keeps them up to date from docs.db, so indexing
// never runs on the tenant's request path (and tenant JavaScript in index
// definitions runs in sandboxes here, not in the process serving requests).
import { DatabaseIndexer, type DatabaseIndexerOptions, PrepareThread, SandboxBudget } from '@rookery/engine';
import { RookeryError } from '@rookery/protocol';
import pino from 'pino';
import { loadIndexerConfig } from '../config.js';
import { type FromIndexer, refusalOf, requestIdOf, type ToIndexer, ToIndexerSchema } from './messages.js';

const log = pino({ level: process.env.ROOKERY_LOG_LEVEL ?? 'info', base: { service: 'indexer' } });
/** Batches are read and mapped on this thread while the process's own thread writes the one before. */
const prepareThread = new PrepareThread();
const config = loadIndexerConfig();
/** What the tenant's index code may cost (one budget for all its databases: this process is the tenant's). */
const indexerOptions: DatabaseIndexerOptions = {
  prepareThread,
  maxIndexes: config.indexMaxPerDatabase,
  sandboxBudget: new SandboxBudget(config.indexSandboxBudgetMb),
  sandbox: {
    memoryMb: config.indexSandboxMemoryMb,
    documentTimeoutMs: config.indexDocumentTimeoutMs,
    batchTimeMs: config.indexBatchTimeMs,
    maxEntriesPerDocument: config.indexMaxEntriesPerDocument,
  },
};
const indexers = new Map<string, DatabaseIndexer>();
const pending = new Set<string>();
/** Databases whose last batch failed: retried after a pause instead of in a hot loop. */
const backingOff = new Set<string>();
let working = false;
/** Databases the tenant nudged and has not been told `idle` about since: it sends no more nudges for them. */
const nudged = new Set<string>();

/** The safety net for lost nudges: every database is looked at this often (one pragma when nothing changed). */
const POLL_MS = 1_000;
const BACKOFF_MS = 1_000;
/**
 * How often a quiet database gets its whole look anyway: what no write announces — a copy to the mirror
 * that falls due by time (`indexSnapshotMinutes` after the last one), a worker's build whose 'built' word
 * was lost — is found within this.
 */
const QUIET_RECHECK_MS = 60_000;

function send(message: FromIndexer): void {
  // The tenant may already be gone (killed before we said ready); 'disconnect' then ends us.
  if (!process.connected) return;
  process.send?.(message, undefined, undefined, () => undefined);
}

/**
 * Tells the tenant we looked at `db` after its nudge and found it caught up, so that its next commit
 * nudges us again; until then it sends none (services/tenant/src/indexing/nudges.ts). Only for a database
 * we were nudged about: the polls and other looks send nothing.
 */
function sayIdle(db: string): void {
  if (nudged.delete(db)) send({ type: 'idle', db });
}

function schedule(db: string): void {
  if (backingOff.has(db)) return;
  pending.add(db);
  if (working) return;
  working = true;
  setImmediate(() => void work());
}

/**
 * Turns over the databases with work: one batch per index per database per
 * turn, so one big index never starves the others (or IPC, which is served
 * while a batch is being prepared).
 */
async function work(): Promise<void> {
  try {
    while (pending.size > 0) {
      for (const db of [...pending]) {
        const indexer = indexers.get(db);
        // Taken off before the look: a nudge that arrives while the step reads puts it back, so a commit
        // the step began too early to see is looked at again, and that nudge is not answered `idle`.
        pending.delete(db);
        if (!indexer) {
          sayIdle(db);
          continue;
        }
        // Nothing committed, put or adopted since the last quiet point: nothing to index, adopt or copy.
        if (indexer.isQuiet()) {
          sayIdle(db);
          continue;
        }
        const progress = await indexer.step();
        // The database may have been closed or reopened while the batch was prepared.
        if (indexers.get(db) !== indexer) continue;
        for (const p of progress) send({ type: 'progress', db, ...p });
        if (progress.length === 0) {
          const adopted = adoptBuilt(db, indexer);
          const copied = await snapshotDue(db, indexer);
          // A failed adoption or copy keeps the database looked at every second, to try again.
          if (adopted && copied && indexers.get(db) === indexer) indexer.markQuiet();
          if (!pending.has(db)) sayIdle(db);
        } else if (progress.every((p) => p.documents === 0 && p.errors > 0)) {
          backingOff.add(db);
          log.warn({ db, indexes: progress.map((p) => p.index) }, 'indexing failed; retrying in a second');
          setTimeout(() => {
            backingOff.delete(db);
            schedule(db);
          }, BACKOFF_MS).unref();
        } else pending.add(db); // more batches to index
      }
      await new Promise((resolve) => setImmediate(resolve));
    }
  } catch (error) {
    log.error({ err: error }, 'indexing stopped unexpectedly; the next nudge or poll starts it again');
  } finally {
    working = false;
  }
}

/**
 * At a quiet point, adopts what the worker fleet finished building (docs/mirror.md, "Worker-built
 * indexes"): each adopted index is caught up and swapped in, and the tenant told, so that queries waiting
 * on it look again. A failure leaves the index awaiting its build; the next quiet point tries again.
 * False when it failed.
 */
function adoptBuilt(db: string, indexer: DatabaseIndexer): boolean {
  try {
    for (const index of indexer.adoptBuilt()) {
      const lastEtag = indexer.stats(index)?.LastIndexedEtag ?? 0;
      log.info({ db, index, lastEtag }, 'index built by a worker adopted');
      send({ type: 'adopted', db, index, lastEtag });
    }
    return true;
  } catch (error) {
    log.warn(
      { err: error, db },
      'could not adopt an index a worker built; trying again at the next quiet point',
    );
    return false;
  }
}

/**
 * At a quiet point (every index of the database caught up), copies the indexes that are due to the
 * mirror, so a restore can start from them instead of rebuilding (docs/mirror.md, "Index snapshots").
 * A failed copy costs only a rebuild after a restore: it is logged and tried again at the next quiet point.
 * False when it failed.
 */
async function snapshotDue(db: string, indexer: DatabaseIndexer): Promise<boolean> {
  try {
    for (const taken of await indexer.snapshotDue())
      log.info(
        { db, index: taken.name, etag: taken.etag, txid: taken.txid, bytes: taken.bytes },
        'index copied to the mirror',
      );
    return true;
  } catch (error) {
    log.warn(
      { err: error, db },
      'could not copy an index to the mirror; trying again at the next quiet point',
    );
    return false;
  }
}

function handle(message: ToIndexer): unknown {
  switch (message.type) {
    case 'open': {
      indexers.get(message.db)?.close();
      indexers.set(
        message.db,
        new DatabaseIndexer(message.directory, {
          ...indexerOptions,
          ...(message.mirror === undefined
            ? {}
            : {
                snapshots: {
                  mirrorDirectory: message.mirror,
                  everyEtags: config.indexSnapshotEtags,
                  everyMs: config.indexSnapshotMinutes * 60_000,
                },
              }),
          // Only a mirrored database can be built away: the worker reads it from the mirror.
          ...(message.mirror === undefined || config.indexWorkerThreshold === 0
            ? {}
            : {
                workerBuilds: {
                  mirrorDirectory: message.mirror,
                  threshold: config.indexWorkerThreshold,
                  request: (definition, build) =>
                    send({ type: 'build-request', db: message.db, definition, build }),
                },
              }),
        }),
      );
      schedule(message.db);
      return null;
    }
    case 'close':
      indexers.get(message.db)?.close();
      indexers.delete(message.db);
      pending.delete(message.db);
      nudged.delete(message.db);
      return null;
    case 'nudge':
      nudged.add(message.db);
      schedule(message.db);
      return null;
    case 'built':
      // A worker's build finished: its snapshot is on the mirror, to adopt now rather than at the next write.
      indexers.get(message.db)?.lookAgain();
      schedule(message.db);
      return null;
    default: {
      const indexer = indexers.get(message.db);
      if (!indexer)
        throw new RookeryError('DatabaseNotFound', `Database ${message.db} is not open in the indexer`);
      let result: unknown;
      if (message.type === 'put') {
        result = indexer.put(message.definition);
        log.info({ db: message.db, index: message.definition.Name }, 'index defined');
      } else if (message.type === 'delete') result = indexer.delete(message.name);
      else result = indexer.reset(message.name);
      schedule(message.db);
      return result;
    }
  }
}

process.on('message', (raw) => {
  const parsed = ToIndexerSchema.safeParse(raw);
  if (!parsed.success) {
    log.error({ issues: parsed.error.issues.slice(0, 3) }, 'refused a malformed message from the tenant');
    // A request is answered even so: its caller would otherwise wait out its whole deadline.
    const id = requestIdOf(raw);
    if (id !== null) {
      const refusal = refusalOf(parsed.error);
      send({ type: 'reply', id, ok: false, error: { code: refusal.code, message: refusal.message } });
    }
    return;
  }
  const message = parsed.data;
  try {
    const result = handle(message);
    if ('id' in message) send({ type: 'reply', id: message.id, ok: true, result });
  } catch (error) {
    // The reply reaches the tenant's clients: our own errors are written for them; anything else
    // (SQLite, the file system) speaks of files and paths, so it is logged here and not sent on.
    const ours = error instanceof RookeryError;
    if (!ours) log.error({ err: error, db: message.db }, 'indexer request failed');
    const reply = ours
      ? { code: error.code, message: error.message }
      : {
          code: 'InternalError' as const,
          message: `The indexer failed on an internal error (database ${message.db}); the tenant's log has the details.`,
        };
    if ('id' in message) send({ type: 'reply', id: message.id, ok: false, error: reply });
  }
});

// The tenant going away (crash or shutdown) ends the indexer: it has no work without it.
// Closing cleanly matters: an index closed cleanly is trusted after a reboot
// instead of rebuilt (see the engine's writer-marker.ts).
function closeAndExit(): void {
  for (const indexer of indexers.values()) indexer.close();
  process.exit(0);
}
process.on('disconnect', closeAndExit);
process.on('SIGTERM', closeAndExit);
// Ctrl+C reaches the whole process group; the tenant drains first, then disconnects us.
process.on('SIGINT', () => undefined);

// A safety net for lost nudges: every database is looked at once a second (a quiet one costs a pragma).
setInterval(() => {
  for (const db of indexers.keys()) schedule(db);
}, POLL_MS).unref();
setInterval(() => {
  for (const indexer of indexers.values()) indexer.lookAgain();
}, QUIET_RECHECK_MS).unref();

send({ type: 'ready' });
