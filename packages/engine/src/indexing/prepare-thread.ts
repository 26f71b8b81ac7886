import { z } from 'zod';
import { SiblingWorker } from '../worker-thread.js';
import type { PreparedBatch } from './batch-preparer.js';

const PrepareRequestSchema = z.object({
  docsFile: z.string(),
  /** The index definition as JSON: the thread keeps one preparer (and sandbox) per definition. */
  definition: z.string(),
  afterEtag: z.number().int().nonnegative(),
  limit: z.number().int().positive(),
  includeArchived: z.boolean(),
  sandbox: z
    .object({
      memoryMb: z.number().optional(),
      timeoutMs: z.number().optional(),
      documentTimeoutMs: z.number().optional(),
      maxEntriesPerDocument: z.number().optional(),
      batchTimeMs: z.number().optional(),
    })
    .optional(),
});
/** What the prepare thread is asked: one index's next batch of one database. */
export type PrepareRequest = z.infer<typeof PrepareRequestSchema>;

export const ToPrepareThreadSchema = z.discriminatedUnion('type', [
  PrepareRequestSchema.extend({ type: z.literal('prepare'), id: z.number() }),
  /** Drops the preparers (and sandboxes) of one database's index (`definition`), or of the whole database (null). */
  z.object({ type: z.literal('forget'), docsFile: z.string(), definition: z.string().nullable() }),
]);
export type ToPrepareThread = z.infer<typeof ToPrepareThreadSchema>;

/** The thread's answer; the batch itself is our own code's output, so only the envelope is checked. */
export const FromPrepareThreadSchema = z.discriminatedUnion('ok', [
  z.object({ id: z.number(), ok: z.literal(true), batch: z.custom<PreparedBatch>(), more: z.boolean() }),
  z.object({ id: z.number(), ok: z.literal(false), error: z.string(), sandbox: z.boolean() }),
]);
export type FromPrepareThread = z.infer<typeof FromPrepareThreadSchema>;

/** A prepared batch, and whether the database had more after it when it was read. */
export interface Prepared {
  batch: PreparedBatch;
  more: boolean;
}

/** Preparation failed in the thread; `sandbox` says whether tenant code (compiling or running it) was the cause. */
export class PrepareError extends Error {
  constructor(
    message: string,
    readonly sandbox: boolean,
  ) {
    super(message);
    this.name = 'PrepareError';
  }
}

/**
 * A second thread for indexing: it reads documents, runs the maps and builds
 * the rows of the next batch while the indexer's own thread writes the batch
 * before it into the index file (SQLite writes happen there only). One per
 * indexer process, shared by its databases; started on first use, restarted
 * after a crash (the requests in flight then fail and are retried).
 */
export class PrepareThread {
  private readonly thread = new SiblingWorker(import.meta.url, 'prepare-worker', {
    message: (raw) => this.answer(raw),
    lost: (why) => this.failAll(`the indexing thread stopped (${why})`),
  });
  private nextId = 0;
  private readonly waiting = new Map<
    number,
    { resolve: (p: Prepared) => void; reject: (e: Error) => void }
  >();

  prepare(request: PrepareRequest): Promise<Prepared> {
    const worker = this.thread.running();
    const id = this.nextId++;
    return new Promise<Prepared>((resolve, reject) => {
      this.waiting.set(id, { resolve, reject });
      this.thread.hold(true);
      worker.postMessage({ type: 'prepare', id, ...request } satisfies ToPrepareThread);
    });
  }

  forget(docsFile: string, definition: string | null): void {
    if (!this.thread.started) return;
    this.thread.running().postMessage({ type: 'forget', docsFile, definition } satisfies ToPrepareThread);
  }

  async close(): Promise<void> {
    this.failAll('the indexer is closing');
    await this.thread.close();
  }

  private answer(raw: unknown): void {
    const message = FromPrepareThreadSchema.safeParse(raw);
    if (!message.success) return;
    const waiter = this.waiting.get(message.data.id);
    if (!waiter) return;
    this.waiting.delete(message.data.id);
    if (this.waiting.size === 0) this.thread.hold(false);
    if (message.data.ok) waiter.resolve({ batch: message.data.batch, more: message.data.more });
    else waiter.reject(new PrepareError(message.data.error, message.data.sandbox));
  }

  private failAll(why: string): void {
    for (const waiter of this.waiting.values()) waiter.reject(new PrepareError(why, false));
    this.waiting.clear();
  }
}
