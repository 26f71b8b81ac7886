// What every JobQueue promises, run against SQLite (sqlite-queue.test.ts) and
// PostgreSQL (postgres-queue.test.ts). Tests wait for states, never for a
// fixed time; the only time comparisons are lower bounds the queue guarantees
// (nothing starts before its backoff, runAt or lease allows).
import type { ChildProcess } from 'node:child_process';
import path from 'node:path';
import { isRookeryError, type RookeryError } from '@rookery/protocol';
import { spawnTs, waitForExit } from '@rookery/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { LEASE_EXPIRED_MESSAGE } from './attempts.js';
import type { TestStore } from './test-fixtures/stores.js';
import { openTestQueue } from './test-fixtures/stores.js';
import type { WorkerProcessConfig } from './test-fixtures/worker-process.js';
import type { Job, JobQueue, JobTypes } from './types.js';

export interface ContractStore {
  store: TestStore;
  cleanup: () => Promise<void>;
}

const TaskPayload = z.object({ n: z.number().int(), label: z.string().default('none') });
const TYPES = {
  task: { payload: TaskPayload },
  other: { payload: TaskPayload },
  /** A short lease, for the test that kills a worker mid-job. */
  leased: { payload: TaskPayload, leaseMs: 1000 },
} satisfies JobTypes;
type Queue = JobQueue<typeof TYPES>;

/** Fast polling keeps the suite quick; a test waits on states, not on this. */
const POLL = { pollMs: 20 };
const WORKER_PROCESS = path.join(import.meta.dirname, 'test-fixtures', 'worker-process.ts');

export function jobQueueContract(makeStore: () => Promise<ContractStore>): void {
  let current: ContractStore;
  let queues: Queue[];
  let children: ChildProcess[];

  const open = async (): Promise<Queue> => {
    const queue = await openTestQueue(current.store, TYPES);
    queues.push(queue);
    return queue;
  };

  beforeEach(async () => {
    current = await makeStore();
    queues = [];
    children = [];
  });

  afterEach(async () => {
    for (const child of children) {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
      await waitForExit(child);
    }
    await Promise.all(queues.map((queue) => queue.close()));
    await current.cleanup();
  });

  describe('enqueue, run, complete', () => {
    it('runs a job once and reports it completed, with the payload as its schema outputs it', async () => {
      const queue = await open();
      const id = await queue.enqueue({ type: 'task', tenantId: 'acme', payload: { n: 1 } });
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      const seen: Job<z.output<typeof TaskPayload>>[] = [];
      queue.work(
        'task',
        async (job) => {
          seen.push(job);
        },
        POLL,
      );
      const done = await eventually(
        () => queue.get(id),
        (job) => job?.state === 'completed',
      );
      expect(seen).toHaveLength(1);
      expect(seen[0]).toMatchObject({ id, tenantId: 'acme', type: 'task', payload: { n: 1, label: 'none' } });
      expect(done).toMatchObject({
        id,
        type: 'task',
        tenantId: 'acme',
        payload: { n: 1 },
        state: 'completed',
        attempts: 1,
        maxAttempts: 3,
        lastError: null,
        dedupeKey: null,
      });
      expect(done!.startedAt).not.toBeNull();
      expect(done!.finishedAt).not.toBeNull();
      expect(done!.startedAt!).toBeGreaterThanOrEqual(done!.createdAt);
      expect(done!.finishedAt!).toBeGreaterThanOrEqual(done!.startedAt!);
    });

    it('shows progress while a job runs and keeps the last report', async () => {
      const queue = await open();
      const release = gate();
      const id = await queue.enqueue({ type: 'task', tenantId: 'acme', payload: { n: 1 } });
      queue.work(
        'task',
        async (_job, { progress }) => {
          await progress({ copied: 1, of: 2 });
          await release.opened;
        },
        POLL,
      );
      const running = await eventually(
        () => queue.get(id),
        (job) => job?.progress?.['copied'] === 1,
      );
      expect(running).toMatchObject({ state: 'active', progress: { copied: 1, of: 2 } });
      release.open();
      const done = await eventually(
        () => queue.get(id),
        (job) => job?.state === 'completed',
      );
      expect(done!.progress).toEqual({ copied: 1, of: 2 });
    });

    it('does not start a job before its runAt', async () => {
      const queue = await open();
      const runAt = Date.now() + 300;
      const id = await queue.enqueue({ type: 'task', tenantId: 'acme', payload: { n: 1 }, runAt });
      expect(await queue.get(id)).toMatchObject({ state: 'queued', runAt, attempts: 0 });
      let startedAt = 0;
      queue.work(
        'task',
        async () => {
          startedAt = Date.now();
        },
        POLL,
      );
      await eventually(
        () => queue.get(id),
        (job) => job?.state === 'completed',
      );
      expect(startedAt).toBeGreaterThanOrEqual(runAt);
    });

    it('a stopped worker finishes what it runs and takes nothing more', async () => {
      const queue = await open();
      const release = gate();
      const first = await queue.enqueue({ type: 'task', tenantId: 'acme', payload: { n: 1 } });
      const ranByFirstWorker: number[] = [];
      const stop = queue.work(
        'task',
        async (job) => {
          ranByFirstWorker.push(job.payload.n);
          await release.opened;
        },
        POLL,
      );
      await eventually(
        () => queue.get(first),
        (job) => job?.state === 'active',
      );
      const stopped = stop();
      release.open();
      await stopped;
      expect((await queue.get(first))?.state).toBe('completed');

      const second = await queue.enqueue({ type: 'task', tenantId: 'acme', payload: { n: 2 } });
      const ranBySecondWorker: number[] = [];
      queue.work(
        'task',
        async (job) => {
          ranBySecondWorker.push(job.payload.n);
        },
        POLL,
      );
      await eventually(
        () => queue.get(second),
        (job) => job?.state === 'completed',
      );
      expect(ranByFirstWorker).toEqual([1]);
      expect(ranBySecondWorker).toEqual([2]);
    });
  });

  describe('retries', () => {
    it('retries a failing job until maxAttempts, then fails it with the last error', async () => {
      const queue = await open();
      const id = await queue.enqueue({
        type: 'task',
        tenantId: 'acme',
        payload: { n: 1 },
        maxAttempts: 3,
        backoffMs: 0,
      });
      let calls = 0;
      queue.work(
        'task',
        async () => {
          calls += 1;
          throw new Error(`disk full (attempt ${calls})`);
        },
        POLL,
      );
      const failed = await eventually(
        () => queue.get(id),
        (job) => job?.state === 'failed',
      );
      expect(calls).toBe(3);
      expect(failed).toMatchObject({ attempts: 3, maxAttempts: 3, lastError: 'disk full (attempt 3)' });
      expect(failed!.finishedAt).not.toBeNull();
    });

    it('completes a job whose retry succeeds and keeps the error of the failed attempt', async () => {
      const queue = await open();
      const id = await queue.enqueue({ type: 'task', tenantId: 'acme', payload: { n: 1 }, backoffMs: 0 });
      let calls = 0;
      queue.work(
        'task',
        async () => {
          calls += 1;
          if (calls === 1) throw new Error('network blip');
        },
        POLL,
      );
      const done = await eventually(
        () => queue.get(id),
        (job) => job?.state === 'completed',
      );
      expect(done).toMatchObject({ attempts: 2, lastError: 'network blip' });
    });

    it('waits at least backoffMs before the first retry', async () => {
      const queue = await open();
      const backoffMs = 300;
      const id = await queue.enqueue({
        type: 'task',
        tenantId: 'acme',
        payload: { n: 1 },
        maxAttempts: 2,
        backoffMs,
      });
      let failedAt = 0;
      let retriedAt = 0;
      queue.work(
        'task',
        async () => {
          if (failedAt === 0) {
            failedAt = Date.now();
            throw new Error('try later');
          }
          retriedAt = Date.now();
        },
        POLL,
      );
      const waiting = await eventually(
        () => queue.get(id),
        (job) => job?.state === 'queued' && job.attempts === 1,
      );
      expect(waiting!.lastError).toBe('try later');
      expect(waiting!.runAt).toBeGreaterThanOrEqual(failedAt + backoffMs);
      await eventually(
        () => queue.get(id),
        (job) => job?.state === 'completed',
      );
      expect(retriedAt - failedAt).toBeGreaterThanOrEqual(backoffMs);
    });

    it('retries the job of a worker process killed mid-job once its lease has run out', async () => {
      const queue = await open();
      const id = await queue.enqueue({ type: 'leased', tenantId: 'acme', payload: { n: 1 }, backoffMs: 0 });
      const child = spawnWorker({ store: current.store, type: 'leased', behaviour: 'hang', concurrency: 1 });
      await message(child, (m) => m['started'] === id);
      child.kill('SIGKILL');
      await waitForExit(child);
      const abandoned = await queue.get(id);
      expect(abandoned).toMatchObject({ state: 'active', attempts: 1 });

      let retriedAt = 0;
      queue.work(
        'leased',
        async () => {
          retriedAt = Date.now();
        },
        POLL,
      );
      const done = await eventually(
        () => queue.get(id),
        (job) => job?.state === 'completed',
      );
      expect(done).toMatchObject({ attempts: 2, lastError: LEASE_EXPIRED_MESSAGE });
      expect(retriedAt).toBeGreaterThanOrEqual(abandoned!.startedAt! + 1000);
    });

    it('fails an attempt that overruns its lease and aborts its handler', async () => {
      const queue = await open();
      const id = await queue.enqueue({
        type: 'leased',
        tenantId: 'acme',
        payload: { n: 1 },
        maxAttempts: 1,
      });
      let aborted = false;
      queue.work(
        'leased',
        async (_job, { signal }) => {
          await new Promise((resolve) => signal.addEventListener('abort', resolve));
          aborted = true;
          throw signal.reason;
        },
        POLL,
      );
      const failed = await eventually(
        () => queue.get(id),
        (job) => job?.state === 'failed',
      );
      expect(failed).toMatchObject({ attempts: 1, lastError: LEASE_EXPIRED_MESSAGE });
      expect(aborted).toBe(true);
    });
  });

  describe('per-tenant concurrency', () => {
    it('never runs more of one tenant’s jobs than its limit, across workers, while other tenants’ jobs run', async () => {
      // Two queues on one store stand for two worker processes.
      const workers = [await open(), await open()];
      const producer = workers[0]!;
      const release = gate();
      const running = new Map<string, number>();
      const most = new Map<string, number>();
      const busyIds: string[] = [];
      for (let n = 0; n < 6; n++) {
        busyIds.push(await producer.enqueue({ type: 'task', tenantId: 'busy', payload: { n } }));
      }
      const quietId = await producer.enqueue({ type: 'task', tenantId: 'quiet', payload: { n: 99 } });
      for (const worker of workers) {
        worker.work(
          'task',
          async (job) => {
            const now = (running.get(job.tenantId) ?? 0) + 1;
            running.set(job.tenantId, now);
            most.set(job.tenantId, Math.max(most.get(job.tenantId) ?? 0, now));
            try {
              if (job.tenantId === 'busy') await release.opened;
            } finally {
              running.set(job.tenantId, (running.get(job.tenantId) ?? 1) - 1);
            }
          },
          { ...POLL, concurrency: 4, perTenantConcurrency: 2 },
        );
      }
      try {
        await eventually(
          () => producer.get(quietId),
          (job) => job?.state === 'completed',
        );
        await eventually(
          async () => running.get('busy') ?? 0,
          (count) => count >= 2,
        );
        expect(running.get('busy')).toBe(2);
        // The status view settles on the two that run: on PostgreSQL a worker that fetched a third
        // job for a full tenant shows it active for the moment it takes to give it back (the limit
        // itself is what `running` and `most` measure).
        await eventually(
          () => producer.list({ tenantId: 'busy', state: 'active' }),
          (active) => active.length === 2,
        );
      } finally {
        release.open();
      }
      for (const id of busyIds) {
        await eventually(
          () => producer.get(id),
          (job) => job?.state === 'completed',
        );
      }
      expect(most.get('busy')).toBe(2);
      // Waiting for a slot is not an attempt.
      for (const id of busyIds) expect((await producer.get(id))?.attempts).toBe(1);
    });
  });

  describe('dedupe', () => {
    it('returns the waiting job for the same type and key, and a new one once it has started', async () => {
      const queue = await open();
      const request = {
        type: 'task',
        tenantId: 'acme',
        payload: { n: 1 },
        dedupeKey: 'backup:acme',
      } as const;
      const first = await queue.enqueue(request);
      expect(await queue.enqueue({ ...request, payload: { n: 2 } })).toBe(first);
      const otherType = await queue.enqueue({ ...request, type: 'other' });
      expect(otherType).not.toBe(first);
      expect((await queue.get(first))?.dedupeKey).toBe('backup:acme');
      expect(await queue.list({ type: 'task' })).toHaveLength(1);

      const release = gate();
      queue.work('task', () => release.opened, POLL);
      await eventually(
        () => queue.get(first),
        (job) => job?.state === 'active',
      );
      const afterStart = await queue.enqueue(request);
      expect(afterStart).not.toBe(first);
      release.open();
      await eventually(
        () => queue.get(afterStart),
        (job) => job?.state === 'completed',
      );
    });
  });

  describe('cancel', () => {
    it('a cancelled queued job never runs', async () => {
      const queue = await open();
      const cancelled = await queue.enqueue({ type: 'task', tenantId: 'acme', payload: { n: 1 } });
      const result = await queue.cancel(cancelled);
      expect(result).toMatchObject({ id: cancelled, state: 'cancelled' });
      expect(result.finishedAt).not.toBeNull();
      const kept = await queue.enqueue({ type: 'task', tenantId: 'acme', payload: { n: 2 } });
      const ran: number[] = [];
      queue.work(
        'task',
        async (job) => {
          ran.push(job.payload.n);
        },
        POLL,
      );
      await eventually(
        () => queue.get(kept),
        (job) => job?.state === 'completed',
      );
      expect(ran).toEqual([2]);
      expect((await queue.get(cancelled))?.state).toBe('cancelled');
    });

    it('cancelling an active job aborts its handler and drops its outcome', async () => {
      const queue = await open();
      const id = await queue.enqueue({ type: 'task', tenantId: 'acme', payload: { n: 1 } });
      let aborted = false;
      queue.work(
        'task',
        async (_job, { signal }) => {
          await new Promise((resolve) => signal.addEventListener('abort', resolve));
          aborted = true;
          // Finishing normally after the cancel must not complete the job.
        },
        POLL,
      );
      await eventually(
        () => queue.get(id),
        (job) => job?.state === 'active',
      );
      expect((await queue.cancel(id)).state).toBe('cancelled');
      await eventually(
        async () => aborted,
        (value) => value,
      );
      // The worker (concurrency 1) has let go of the cancelled attempt: the next job runs.
      const next = await queue.enqueue({ type: 'task', tenantId: 'acme', payload: { n: 2 } });
      await eventually(
        () => queue.get(next),
        (job) => job?.state === 'active',
      );
      expect((await queue.cancel(next)).state).toBe('cancelled');
      expect((await queue.get(id))?.state).toBe('cancelled');
    });

    it('leaves finished jobs alone and refuses unknown ids with JobNotFound', async () => {
      const queue = await open();
      const id = await queue.enqueue({ type: 'task', tenantId: 'acme', payload: { n: 1 } });
      queue.work('task', async () => undefined, POLL);
      await eventually(
        () => queue.get(id),
        (job) => job?.state === 'completed',
      );
      expect((await queue.cancel(id)).state).toBe('completed');
      for (const unknown of ['3f0c1c52-7d2e-4c1a-9a51-0d6f5c3b1e2a', 'not-a-job-id']) {
        const error = await failure(queue.cancel(unknown));
        expect(error.code).toBe('JobNotFound');
        expect(error.status).toBe(404);
      }
    });
  });

  describe('refused requests', () => {
    it('refuses a bad payload (InvalidJobPayload), an unknown type (UnknownJobType) and bad options (InvalidRequest)', async () => {
      const queue = await open();
      const badPayload = await failure(
        queue.enqueue({ type: 'task', tenantId: 'acme', payload: { n: 'one' } as unknown as { n: number } }),
      );
      expect(badPayload.code).toBe('InvalidJobPayload');
      expect(badPayload.status).toBe(400);
      expect(badPayload.message).toContain('"task"');
      expect(badPayload.toProblem()).toMatchObject({ code: 'InvalidJobPayload', jobType: 'task' });

      const notJson = await failure(
        queue.enqueue({ type: 'task', tenantId: 'acme', payload: { n: 1n } as unknown as { n: number } }),
      );
      expect(notJson.code).toBe('InvalidJobPayload');

      const unknownType = await failure(
        queue.enqueue({ type: 'nope' as 'task', tenantId: 'acme', payload: { n: 1 } }),
      );
      expect(unknownType.code).toBe('UnknownJobType');
      expect(() => queue.work('nope' as 'task', async () => undefined)).toThrow(/no job type "nope"/);

      const badOptions = await failure(
        queue.enqueue({ type: 'task', tenantId: 'acme', payload: { n: 1 }, maxAttempts: 0 }),
      );
      expect(badOptions.code).toBe('InvalidRequest');
      expect(await queue.list()).toEqual([]);
    });
  });

  describe('get and list', () => {
    it('filters by tenant, type and state, newest first, up to a limit', async () => {
      const queue = await open();
      const a1 = await queue.enqueue({ type: 'task', tenantId: 'a', payload: { n: 1 } });
      const b1 = await queue.enqueue({ type: 'other', tenantId: 'b', payload: { n: 2 } });
      const a2 = await queue.enqueue({ type: 'other', tenantId: 'a', payload: { n: 3 } });
      const ids = (jobs: Job[]) => jobs.map((job) => job.id);
      expect(ids(await queue.list())).toEqual([a2, b1, a1]);
      expect(ids(await queue.list({ tenantId: 'a' }))).toEqual([a2, a1]);
      expect(ids(await queue.list({ type: 'other' }))).toEqual([a2, b1]);
      expect(ids(await queue.list({ tenantId: 'a', type: 'other' }))).toEqual([a2]);
      expect(ids(await queue.list({ limit: 2 }))).toEqual([a2, b1]);

      queue.work('task', async () => undefined, POLL);
      await eventually(
        () => queue.get(a1),
        (job) => job?.state === 'completed',
      );
      expect(ids(await queue.list({ state: 'completed' }))).toEqual([a1]);
      expect(ids(await queue.list({ state: 'queued' }))).toEqual([a2, b1]);
      expect(await queue.list({ state: 'failed' })).toEqual([]);

      expect(await queue.get('3f0c1c52-7d2e-4c1a-9a51-0d6f5c3b1e2a')).toBeNull();
      expect(await queue.get('not-a-job-id')).toBeNull();
      expect((await failure(queue.list({ limit: 0 }))).code).toBe('InvalidRequest');
    });

    it('sees jobs enqueued through another connection to the same store', async () => {
      const [writer, reader] = [await open(), await open()];
      const id = await writer.enqueue({ type: 'task', tenantId: 'acme', payload: { n: 7 } });
      expect(await reader.get(id)).toMatchObject({ id, payload: { n: 7 }, state: 'queued' });
    });
  });

  function spawnWorker(config: WorkerProcessConfig): ChildProcess {
    const child = spawnTs(WORKER_PROCESS, [JSON.stringify(config)]);
    children.push(child);
    return child;
  }
}

/** Polls `read` until `accept` says yes; fails with the last value after `timeoutMs`. */
export async function eventually<T>(
  read: () => Promise<T>,
  accept: (value: T) => boolean,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await read();
    if (accept(value)) return value;
    if (Date.now() > deadline) {
      throw new Error(`Still not there after ${timeoutMs} ms; last value: ${JSON.stringify(value)}`);
    }
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
}

/** The first IPC message from a child that passes `accept`. */
export function message(child: ChildProcess, accept: (m: Record<string, unknown>) => boolean): Promise<void> {
  return new Promise((resolve, reject) => {
    const onMessage = (m: unknown) => {
      if (typeof m === 'object' && m !== null && accept(m as Record<string, unknown>)) {
        child.off('message', onMessage);
        child.off('exit', onExit);
        resolve();
      }
    };
    const onExit = (code: number | null) => reject(new Error(`The worker process exited (${code})`));
    child.on('message', onMessage);
    child.once('exit', onExit);
  });
}

function gate(): { open: () => void; opened: Promise<void> } {
  let open: () => void = () => undefined;
  const opened = new Promise<void>((resolve) => {
    open = resolve;
  });
  return { open, opened };
}

async function failure(promise: Promise<unknown>): Promise<RookeryError> {
  try {
    await promise;
  } catch (error) {
    if (isRookeryError(error)) return error;
    throw error;
  }
  throw new Error('Expected a RookeryError, but the call succeeded');
}
