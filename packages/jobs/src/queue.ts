// The JobQueue both implementations share: it checks every argument, turns an
// enqueue request into a stored job, and runs workers over a backend.
import { randomUUID } from 'node:crypto';
import { RookeryError } from '@rookery/protocol';
import type { Logger } from 'pino';
import type { QueueBackend } from './backend.js';
import type { JobTypeRegistry } from './job-types.js';
import {
  EnqueueRequestSchema,
  JobIdSchema,
  ListFilterSchema,
  parseRequest,
  WorkOptionsSchema,
} from './requests.js';
import type { Job, JobHandler, JobQueue, JobTypes, ListFilter, StopWorking, WorkOptions } from './types.js';
import { startWorker } from './worker.js';

// QueueBackend's methods are bivariant in their claim type, so any backend fits here.
export function createJobQueue<Types extends JobTypes>(
  backend: QueueBackend,
  registry: JobTypeRegistry,
  logger: Logger,
): JobQueue<Types> {
  const workers = new Set<StopWorking>();
  let closing: Promise<void> | null = null;

  const assertOpen = () => {
    if (closing) throw new Error('The job queue is closed.');
  };

  return {
    async enqueue(request) {
      assertOpen();
      const parsed = parseRequest(EnqueueRequestSchema, request, 'job');
      const type = registry.get(parsed.type);
      const payloadJson = registry.serialisePayload(type, parsed.payload);
      const now = Date.now();
      return backend.insert({
        id: randomUUID(),
        type: type.name,
        tenantId: parsed.tenantId,
        payloadJson,
        createdAt: now,
        runAt: parsed.runAt ?? now,
        maxAttempts: parsed.maxAttempts,
        backoffMs: parsed.backoffMs,
        leaseMs: type.leaseMs,
        dedupeKey: parsed.dedupeKey ?? null,
      });
    },

    work(typeName, handler, options?: WorkOptions) {
      assertOpen();
      const type = registry.get(typeName);
      const stop = startWorker({
        backend,
        registry,
        type,
        handler: handler as JobHandler<unknown>,
        options: parseRequest(WorkOptionsSchema, options ?? {}, 'worker options'),
        logger,
      });
      let stopping: Promise<void> | null = null;
      const stopOnce: StopWorking = () => {
        stopping ??= stop().finally(() => workers.delete(stopOnce));
        return stopping;
      };
      workers.add(stopOnce);
      return stopOnce;
    },

    async get(id: string): Promise<Job | null> {
      if (!JobIdSchema.safeParse(id).success) return null;
      return backend.get(id);
    },

    async list(filter: ListFilter = {}): Promise<Job[]> {
      return backend.list(parseRequest(ListFilterSchema, filter, 'job filter'));
    },

    async cancel(id: string): Promise<Job> {
      const job = JobIdSchema.safeParse(id).success ? await backend.cancel(id) : null;
      if (!job) throw new RookeryError('JobNotFound', `There is no job "${id}".`, { jobId: id });
      return job;
    },

    close() {
      closing ??= (async () => {
        await Promise.allSettled([...workers].map((stop) => stop()));
        await backend.close();
      })();
      return closing;
    },
  };
}
