// The queue as its users see it: one interface, two implementations (SQLite
// embedded, PostgreSQL through pg-boss at scale). Times are epoch milliseconds.
import type { Logger } from 'pino';
import type { z } from 'zod';

export const JOB_STATES = ['queued', 'active', 'completed', 'failed', 'cancelled'] as const;
/**
 * queued: waiting for its first attempt or for a retry (see `attempts` and `runAt`);
 * active: an attempt is running; completed, failed (no attempts left) and
 * cancelled are final.
 */
export type JobState = (typeof JOB_STATES)[number];

export type JsonValue = string | number | boolean | null | JsonValue[] | { [key: string]: JsonValue };
export type JobProgress = { [key: string]: JsonValue };

/** What the caller registers for each job type when the queue opens. */
export interface JobTypeDefinition<Payload extends z.ZodType = z.ZodType> {
  /** Checks payloads at enqueue and again before the handler sees them. Must describe JSON. */
  payload: Payload;
  /**
   * How long one attempt may run (ms, 1 s – 23 h; default 15 min). A job still
   * active after its lease (its worker died, or the handler overran) counts as a
   * failed attempt and is retried if attempts remain.
   */
  leaseMs?: number;
}

export type JobTypes = Record<string, JobTypeDefinition>;

export interface Job<Payload = unknown> {
  id: string;
  type: string;
  tenantId: string;
  payload: Payload;
  state: JobState;
  /** Attempts started so far. */
  attempts: number;
  maxAttempts: number;
  backoffMs: number;
  dedupeKey: string | null;
  /** The error of the most recent failed attempt; kept when a later attempt succeeds. */
  lastError: string | null;
  /** The latest `progress()` report of the current or last attempt. */
  progress: JobProgress | null;
  createdAt: number;
  /** The earliest start of the next attempt (meaningful while queued). */
  runAt: number;
  /** When the latest attempt started. */
  startedAt: number | null;
  /** When the job became completed, failed or cancelled. */
  finishedAt: number | null;
}

export interface EnqueueRequest<Type extends string = string, Payload = unknown> {
  type: Type;
  tenantId: string;
  payload: Payload;
  /** Do not start before this time (epoch ms). Default: now. */
  runAt?: number;
  /** Attempts in all, first one included (1–100, default 3). */
  maxAttempts?: number;
  /**
   * Delay before the first retry (ms, default 5000); each further retry waits
   * twice as long as the one before, plus up to as much again of random jitter.
   * PostgreSQL (pg-boss) counts whole seconds, rounding up. 0 retries at once.
   */
  backoffMs?: number;
  /**
   * While a job of this type with this key is still waiting for its first
   * attempt, enqueueing another returns the waiting job's id instead.
   */
  dedupeKey?: string;
}

export interface WorkContext {
  /** Records a JSON object as the job's progress, visible through get() and list(). */
  progress(value: JobProgress): Promise<void>;
  /** Aborted when the job is cancelled, its lease runs out, or it is no longer this worker's. */
  signal: AbortSignal;
  /** A child logger with the job id, tenant, type and attempt. */
  log: Logger;
}

/** Resolving completes the job; throwing fails this attempt (retried while attempts remain). */
export type JobHandler<Payload> = (job: Job<Payload>, context: WorkContext) => Promise<void>;

export interface WorkOptions {
  /** Attempts this worker runs at once (default 1). */
  concurrency?: number;
  /**
   * Active jobs of this type per tenant, counted across every worker on the
   * queue (default: `concurrency`). Workers of one type should agree on it.
   */
  perTenantConcurrency?: number;
  /** How often to look for work when none was found, and to check running jobs for cancellation (ms, default 1000). */
  pollMs?: number;
}

/** Stops claiming new jobs and resolves once the attempts already running have ended. */
export type StopWorking = () => Promise<void>;

export interface ListFilter {
  tenantId?: string;
  type?: string;
  state?: JobState;
  /** 1–1000, default 100. Newest jobs first. */
  limit?: number;
}

export interface JobQueue<Types extends JobTypes = JobTypes> {
  /** Checks the payload against the type's schema; returns the job id. */
  enqueue<Type extends keyof Types & string>(
    request: EnqueueRequest<Type, z.input<Types[Type]['payload']>>,
  ): Promise<string>;
  work<Type extends keyof Types & string>(
    type: Type,
    handler: JobHandler<z.output<Types[Type]['payload']>>,
    options?: WorkOptions,
  ): StopWorking;
  get(id: string): Promise<Job | null>;
  list(filter?: ListFilter): Promise<Job[]>;
  /**
   * Cancels a queued or active job (an active job's handler sees its signal
   * abort, and its outcome is dropped). A finished job is left as it is.
   * Returns the job afterwards; `JobNotFound` if there is none.
   */
  cancel(id: string): Promise<Job>;
  /** Stops every worker of this queue (waiting for running attempts) and closes the connection. */
  close(): Promise<void>;
}
