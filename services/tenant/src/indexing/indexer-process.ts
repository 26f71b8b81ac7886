import { type ChildProcess, fork } from 'node:child_process';
import { createRequire } from 'node:module';
import path from 'node:path';
import { fileURLToPath } from 'node:url';
import { type ErrorCode, ErrorCodes, RookeryError } from '@rookery/protocol';
import type { FastifyBaseLogger } from 'fastify';
import {
  type FromIndexer,
  FromIndexerSchema,
  type IndexerRequestBody,
  refusalOf,
  ToIndexerSchema,
} from './messages.js';
import { Nudges } from './nudges.js';

const RESTART_DELAY_MS = 500;
/** How long a request waits for the indexer's answer by default (ROOKERY_INDEXER_REQUEST_TIMEOUT_MS). */
export const DEFAULT_INDEXER_REQUEST_TIMEOUT_MS = 10_000;

export interface IndexerProcessOptions {
  /** A request the indexer has not answered within this fails with 503 DatabaseUnavailable. */
  requestTimeoutMs?: number;
}

/** `batch`: what the batch did (a batch with errors and no document indexed failed and will be retried). */
type ProgressListener = (
  db: string,
  index: string,
  lastEtag: number,
  batch: { documents: number; removed: number; errors: number },
) => void;

/** The indexer asks for a worker build, or says it adopted one (worker-builds.ts). */
export type WorkerBuildEvent = Extract<FromIndexer, { type: 'build-request' | 'adopted' }>;

interface Waiting {
  resolve(result: unknown): void;
  reject(error: Error): void;
  /** Armed once the indexer is ready (see `request`). */
  timer?: NodeJS.Timeout;
}

/**
 * The tenant's handle on its indexer process: starts it, restarts it if it
 * dies (re-opening every database), sends requests and nudges, and passes
 * progress to whoever waits for an index to catch up.
 */
export class IndexerProcess {
  private child: ChildProcess | null = null;
  private nextId = 1;
  private readonly waiting = new Map<number, Waiting>();
  /** Open databases: their directory, and their directory on the mirror when mirrored. */
  private readonly open = new Map<string, { directory: string; mirror: string | undefined }>();
  private readonly listeners = new Set<ProgressListener>();
  private readonly buildListeners = new Set<(event: WorkerBuildEvent) => void>();
  /** A nudge lost to a closing channel is harmless: the restarted indexer looks at every database. */
  private readonly nudges = new Nudges((db) => {
    if (!this.child?.connected) return false;
    this.child.send({ type: 'nudge', db }, () => undefined);
    return true;
  });
  private stopping = false;
  /** Settles when the current indexer process has loaded its code (its `ready` message) or has exited. */
  private booted: Promise<void> = Promise.resolve();
  private markBooted: () => void = () => {};
  /**
   * Every request's deadline. Settable: a spare tenant process starts its indexer before it knows the
   * tenant's configuration, which sets this once it does.
   */
  requestTimeoutMs: number;

  constructor(
    private readonly log: FastifyBaseLogger,
    options: IndexerProcessOptions = {},
  ) {
    this.requestTimeoutMs = options.requestTimeoutMs ?? DEFAULT_INDEXER_REQUEST_TIMEOUT_MS;
    this.spawn();
  }

  /** The indexer's process id while one runs (the host puts it in the tenant's cgroup). */
  get pid(): number | undefined {
    return this.child?.pid;
  }

  /** Resolves once the indexer process has loaded its code: a spare waits for this before it says it is ready. */
  whenReady(): Promise<void> {
    return this.booted;
  }

  /** Starts indexing a database (idempotent). */
  async openDatabase(db: string, directory: string, mirror?: string): Promise<void> {
    this.open.set(db, { directory, mirror });
    await this.request(openRequest(db, directory, mirror));
  }

  async closeDatabase(db: string): Promise<void> {
    if (!this.open.delete(db)) return;
    this.nudges.forget(db);
    await this.request({ type: 'close', db });
  }

  /** Tells the indexer a database changed: at once when it is idle, else once it says it is (nudges.ts). */
  nudge(db: string): void {
    this.nudges.nudge(db);
  }

  /** Nudges written to the channel since start. */
  get nudgesSent(): number {
    return this.nudges.sent;
  }

  /** Resolves once the indexer has said it caught up with every commit it was nudged about in `db`. */
  settled(db: string): Promise<void> {
    return this.nudges.settled(db);
  }

  /** Tells the indexer a worker's build of one of the database's indexes finished: it adopts it now. */
  buildLanded(db: string): void {
    // Lost with a closing channel, it is found by the indexer's own periodic look (QUIET_RECHECK_MS).
    if (this.child?.connected) this.child.send({ type: 'built', db }, () => undefined);
  }

  onWorkerBuild(listener: (event: WorkerBuildEvent) => void): void {
    this.buildListeners.add(listener);
  }

  onProgress(listener: ProgressListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  /**
   * Sends a request and resolves with the indexer's answer. Every request ends: refused here if the indexer
   * would refuse it (the same schema both sides parse with), failed with 503 if the indexer is not there,
   * does not answer within `requestTimeoutMs`, or stops before it answers.
   */
  request(body: IndexerRequestBody): Promise<unknown> {
    const id = this.nextId++;
    const parsed = ToIndexerSchema.safeParse({ ...body, id });
    if (!parsed.success) return Promise.reject(refusalOf(parsed.error));
    const child = this.child;
    if (!child?.connected) {
      return Promise.reject(
        new RookeryError('DatabaseUnavailable', 'The indexer is restarting; retry in a moment'),
      );
    }
    const timeoutMs = this.requestTimeoutMs;
    const booted = this.booted;
    return new Promise((resolve, reject) => {
      const waiting: Waiting = { resolve, reject };
      this.waiting.set(id, waiting);
      // The deadline is for an indexer that does not answer, not for one still loading its code (seconds
      // from TypeScript sources on a loaded machine, when a tenant's first query sends the first request):
      // it runs from its ready message. One that dies while loading fails what is pending at its exit.
      void booted.then(() => {
        if (this.waiting.get(id) !== waiting) return; // settled meanwhile
        waiting.timer = setTimeout(() => {
          this.waiting.delete(id);
          reject(
            new RookeryError(
              'DatabaseUnavailable',
              `The indexer did not answer within ${timeoutMs} ms (ROOKERY_INDEXER_REQUEST_TIMEOUT_MS); retry in a moment`,
            ),
          );
        }, timeoutMs);
      });
      child.send(parsed.data, (error) => {
        if (error)
          this.settle(id, new RookeryError('DatabaseUnavailable', 'The indexer is restarting; retry'));
      });
    });
  }

  async stop(): Promise<void> {
    this.stopping = true;
    const child = this.child;
    this.child = null;
    if (!child || child.exitCode !== null || child.signalCode !== null) return;
    const exited = new Promise((resolve) => child.once('exit', resolve));
    child.disconnect();
    const timer = setTimeout(() => child.kill('SIGKILL'), 5_000);
    await exited;
    clearTimeout(timer);
  }

  private spawn(): void {
    const { entry, execArgv } = indexerEntry();
    const child = fork(entry, [], {
      execArgv,
      env: process.env,
      stdio: ['ignore', 'inherit', 'inherit', 'ipc'],
    });
    this.child = child;
    // What was out went to the indexer before this one; this one looks at every database it is opened with.
    this.nudges.reset();
    this.booted = new Promise((resolve) => {
      this.markBooted = resolve;
    });
    child.on('message', (raw) => this.receive(raw));
    // Without a listener a failed send would throw in the tenant; a send's own callback reports it instead.
    child.on('error', (err) => this.log.error({ err }, 'indexer process error'));
    // The channel closes before 'exit' is reported: nothing will answer what is pending, so fail it now.
    child.on('disconnect', () => this.failPending());
    child.on('exit', (code, signal) => {
      this.markBooted();
      this.failPending();
      if (this.stopping) return;
      this.log.error({ code, signal }, 'indexer process exited; restarting it');
      setTimeout(() => {
        if (this.stopping) return;
        this.spawn();
        // With the mirror as first opened: its index copies and worker builds go on after a restart.
        for (const [db, { directory, mirror }] of this.open) {
          this.request(openRequest(db, directory, mirror)).catch((err) =>
            this.log.error({ err, db }, 'could not reopen the database in the indexer'),
          );
        }
      }, RESTART_DELAY_MS).unref();
    });
  }

  private failPending(): void {
    for (const id of [...this.waiting.keys()]) {
      this.settle(id, new RookeryError('DatabaseUnavailable', 'The indexer stopped while answering; retry'));
    }
  }

  /** Ends a pending request once, with its answer or an error; later answers to it are dropped. */
  private settle(id: number, outcome: { result: unknown } | Error): void {
    const waiting = this.waiting.get(id);
    if (!waiting) return;
    this.waiting.delete(id);
    clearTimeout(waiting.timer);
    if (outcome instanceof Error) waiting.reject(outcome);
    else waiting.resolve(outcome.result);
  }

  private receive(raw: unknown): void {
    const parsed = FromIndexerSchema.safeParse(raw);
    if (!parsed.success) {
      this.log.error({ issues: parsed.error.issues.slice(0, 3) }, 'malformed message from the indexer');
      return;
    }
    const message: FromIndexer = parsed.data;
    if (message.type === 'progress') {
      if (message.errors > 0) this.log.warn({ db: message.db, index: message.index }, 'indexing errors');
      const batch = { documents: message.documents, removed: message.removed, errors: message.errors };
      for (const listener of this.listeners) listener(message.db, message.index, message.lastEtag, batch);
      return;
    }
    if (message.type === 'build-request' || message.type === 'adopted') {
      for (const listener of this.buildListeners) listener(message);
      return;
    }
    if (message.type === 'idle') {
      this.nudges.idle(message.db);
      return;
    }
    if (message.type === 'ready') this.markBooted();
    if (message.type !== 'reply') return;
    if (message.ok) this.settle(message.id, { result: message.result });
    else {
      const code = (message.error?.code ?? 'InternalError') as ErrorCode;
      this.settle(
        message.id,
        new RookeryError(
          code in ErrorCodes ? code : 'InternalError',
          message.error?.message ?? 'indexer failed',
        ),
      );
    }
  }
}

function openRequest(db: string, directory: string, mirror: string | undefined): IndexerRequestBody {
  return { type: 'open', db, directory, ...(mirror === undefined ? {} : { mirror }) };
}

/**
 * The indexer's entry beside this file: the built `.js` in production, the
 * `.ts` source through tsx in development and tests. `--no-node-snapshot` is
 * what isolated-vm (the index sandbox) asks for on Node 20+.
 */
export function indexerEntry(): { entry: string; execArgv: string[] } {
  const here = fileURLToPath(import.meta.url);
  const extension = path.extname(here);
  const entry = path.join(path.dirname(here), `indexer-main${extension}`);
  if (extension !== '.ts') return { entry, execArgv: ['--no-node-snapshot'] };
  const require = createRequire(import.meta.url);
  return {
    entry,
    execArgv: ['--no-node-snapshot', '--conditions=@rookery/source', '--import', require.resolve('tsx')],
  };
}
