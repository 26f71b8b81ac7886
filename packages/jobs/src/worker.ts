// The worker loop, one per work() call, the same for both queues: claim what
// fits, run each attempt with an AbortSignal, watch it for cancellation and for
// its lease, record how it ended. Claiming is the backend's (atomic, fenced);
// this loop only decides when to ask and what to do with the answer.
import type { Logger } from 'pino';
import { attemptDeadlineMs, LEASE_EXPIRED_MESSAGE } from './attempts.js';
import type { AttemptOutcome, Claim, QueueBackend } from './backend.js';
import type { JobTypeRegistry, RegisteredJobType } from './job-types.js';
import { type ParsedWorkOptions, parseProgress } from './requests.js';
import type { Job, JobHandler, JobProgress, StopWorking } from './types.js';

export interface WorkerSetup<C extends Claim> {
  backend: QueueBackend<C>;
  registry: JobTypeRegistry;
  type: RegisteredJobType;
  handler: JobHandler<unknown>;
  options: ParsedWorkOptions;
  logger: Logger;
}

export function startWorker<C extends Claim>(setup: WorkerSetup<C>): StopWorking {
  const worker = new Worker(setup);
  return () => worker.stop();
}

class Worker<C extends Claim> {
  private readonly running = new Set<Promise<void>>();
  private readonly log: Logger;
  private stopping = false;
  private wakeUp: (() => void) | null = null;
  private nudged = false;
  private readonly loop: Promise<void>;

  constructor(private readonly setup: WorkerSetup<C>) {
    this.log = setup.logger.child({ jobType: setup.type.name });
    this.loop = this.run();
  }

  stop(): Promise<void> {
    this.stopping = true;
    this.nudge();
    return this.loop;
  }

  private async run(): Promise<void> {
    const { backend, type, options } = this.setup;
    while (!this.stopping) {
      const free = options.concurrency - this.running.size;
      let claimed = 0;
      if (free > 0) {
        try {
          const claims = await backend.claim({
            type: type.name,
            max: free,
            perTenant: options.perTenantConcurrency,
          });
          claimed = claims.length;
          for (const claim of claims) this.start(claim);
        } catch (error) {
          this.log.error({ err: error }, 'Claiming jobs failed; trying again after the poll interval');
        }
      }
      // A full batch may mean more is waiting: ask again at once. Otherwise wait
      // for the poll interval, or less if a running attempt frees a place.
      if (claimed === 0 || claimed < free) await this.sleep(options.pollMs);
    }
    await Promise.allSettled(this.running);
  }

  /** Ends the current sleep early, or the next one if the loop is busy claiming. */
  private nudge(): void {
    if (this.wakeUp) this.wakeUp();
    else this.nudged = true;
  }

  private sleep(ms: number): Promise<void> {
    if (this.stopping || this.nudged) {
      this.nudged = false;
      return Promise.resolve();
    }
    return new Promise((resolve) => {
      const done = () => {
        clearTimeout(timer);
        this.wakeUp = null;
        resolve();
      };
      const timer = setTimeout(done, ms);
      this.wakeUp = done;
    });
  }

  private start(claim: C): void {
    const attempt: Promise<void> = this.runAttempt(claim).finally(() => {
      this.running.delete(attempt);
      this.nudge();
    });
    this.running.add(attempt);
  }

  private async runAttempt(claim: C): Promise<void> {
    const { backend, registry, type, handler, options } = this.setup;
    const { job } = claim;
    const log = this.setup.logger.child({
      job: job.id,
      tenant: job.tenantId,
      jobType: job.type,
      attempt: job.attempts,
    });
    const controller = new AbortController();
    // Whichever comes first decides the outcome: the handler settling, the
    // deadline before the lease runs out, or the claim turning out to be lost.
    let decide: (outcome: AttemptOutcome) => void = () => undefined;
    const decided = new Promise<AttemptOutcome>((resolve) => {
      decide = resolve;
    });
    const abandon = (reason: string) => {
      controller.abort(new Error(reason));
      decide({ kind: 'abandoned' });
    };

    const deadline = setTimeout(() => {
      controller.abort(new Error(LEASE_EXPIRED_MESSAGE));
      decide({ kind: 'failed', message: LEASE_EXPIRED_MESSAGE });
    }, attemptDeadlineMs(claim.leaseMs));
    const watch = new ClaimWatch(
      () => backend.isStillMine(claim),
      options.pollMs,
      log,
      () => abandon('The job was cancelled or is no longer this worker’s.'),
    );

    let progressWrites: Promise<unknown> = Promise.resolve();
    const progress = (value: JobProgress): Promise<void> => {
      const checked = parseProgress(value);
      const write = progressWrites.then(async () => {
        if (controller.signal.aborted) return;
        try {
          if (!(await backend.saveProgress(claim, checked))) abandon('The job was cancelled.');
        } catch (error) {
          log.warn({ err: error }, 'Recording job progress failed');
        }
      });
      progressWrites = write;
      return write;
    };

    const handled = (async () => {
      const payload = registry.parsePayload(type, job.payload);
      await handler({ ...job, payload } as Job<unknown>, { progress, signal: controller.signal, log });
    })().then(
      () => decide({ kind: 'completed' }),
      (error: unknown) => decide({ kind: 'failed', message: errorMessage(error) }),
    );

    const outcome = await decided;
    clearTimeout(deadline);
    watch.stop();
    if (outcome.kind !== 'completed') controller.abort(new Error('The attempt has ended.'));
    try {
      const recorded = await backend.settle(claim, outcome);
      if (!recorded && outcome.kind !== 'abandoned') {
        log.warn(
          { outcome: outcome.kind },
          'The job was cancelled or taken over while it ran; outcome dropped',
        );
      } else if (outcome.kind === 'failed') {
        log.warn({ error: outcome.message }, 'Job attempt failed');
      }
    } catch (error) {
      // The lease will run out and the job be retried: nothing is lost but time.
      log.error({ err: error }, 'Recording the outcome of a job attempt failed');
    }
    // The place stays taken until the handler has really stopped.
    await handled;
    await progressWrites;
  }
}

/** Checks, every poll interval, that a running attempt is still its worker's. */
class ClaimWatch {
  private timer: NodeJS.Timeout | null = null;
  private stopped = false;

  constructor(
    private readonly check: () => Promise<boolean>,
    private readonly intervalMs: number,
    private readonly log: Logger,
    private readonly onLost: () => void,
  ) {
    this.schedule();
  }

  stop(): void {
    this.stopped = true;
    if (this.timer) clearTimeout(this.timer);
  }

  private schedule(): void {
    // One check at a time: the next is scheduled only after the last returned.
    this.timer = setTimeout(async () => {
      try {
        if (!(await this.check())) {
          if (!this.stopped) this.onLost();
          return;
        }
      } catch (error) {
        this.log.warn({ err: error }, 'Checking a running job failed');
      }
      if (!this.stopped) this.schedule();
    }, this.intervalMs);
  }
}

function errorMessage(error: unknown): string {
  if (error instanceof Error) return error.message || error.name;
  return String(error);
}
