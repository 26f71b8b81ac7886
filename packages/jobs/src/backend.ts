// What a queue implementation stores and decides; everything else (argument
// checks, payload schemas, the worker loop, leases as seen by a handler) is
// shared in queue.ts and worker.ts. Backends receive checked values only.
import type { ParsedListFilter } from './requests.js';
import type { Job, JobProgress } from './types.js';

/** A job about to be stored: ids and times are chosen by the caller of insert(). */
export interface NewJob {
  id: string;
  type: string;
  tenantId: string;
  /** The payload as JSON text, already checked against the type's schema. */
  payloadJson: string;
  createdAt: number;
  runAt: number;
  maxAttempts: number;
  backoffMs: number;
  leaseMs: number;
  dedupeKey: string | null;
}

/**
 * One attempt a worker has claimed. Backends extend it with what proves the
 * attempt is still theirs (a fencing token), so a worker that lost its claim
 * can never complete or fail someone else's attempt.
 */
export interface Claim {
  readonly job: Job;
  readonly leaseMs: number;
}

export interface ClaimRequest {
  type: string;
  /** Claim at most this many jobs. */
  max: number;
  /** Never let a tenant have more than this many active jobs of this type. */
  perTenant: number;
}

export type AttemptOutcome =
  | { kind: 'completed' }
  | { kind: 'failed'; message: string }
  /** Cancelled, or taken over: nothing to record, only to let go. */
  | { kind: 'abandoned' };

export interface QueueBackend<C extends Claim = Claim> {
  /** Stores the job and returns its id, or the id of the waiting job with the same dedupe key. */
  insert(job: NewJob): Promise<string>;
  /** Starts attempts on due jobs, oldest first, within the per-tenant limit. */
  claim(request: ClaimRequest): Promise<C[]>;
  /**
   * Records how the attempt ended (a failure retries or fails the job) and lets
   * go of the claim. False when the attempt was no longer this claim's.
   */
  settle(claim: C, outcome: AttemptOutcome): Promise<boolean>;
  /** False when the attempt is no longer this claim's (cancelled, or its lease taken over). */
  saveProgress(claim: C, progress: JobProgress): Promise<boolean>;
  isStillMine(claim: C): Promise<boolean>;
  get(id: string): Promise<Job | null>;
  list(filter: ParsedListFilter): Promise<Job[]>;
  /** Cancels a queued or active job; null if there is no such job. */
  cancel(id: string): Promise<Job | null>;
  close(): Promise<void>;
}
