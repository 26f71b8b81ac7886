// Worker-built indexes (issue [10]; docs/mirror.md, "Worker-built indexes"): the IPC messages between a
// tenant process and its host. The tenant has no access to the job queue: its indexer asks the tenant for
// a build, the tenant asks its host, the host enqueues the `index-build` job and passes the job's progress
// back while it runs, so that the index's stats say how far the worker is. Both sides parse what they get.
import { z } from 'zod';
import { DatabaseNameSchema } from './database.js';
import { IndexDefinitionSchema, IndexNameSchema } from './indexes.js';
import { IndexBuildJobPayloadSchema } from './jobs.js';

/** Tenant → host: build this index of this database on the worker fleet (the job's payload, and the tenant is the sender). */
export const IndexBuildRequestMessageSchema = z
  .object({
    type: z.literal('index-build'),
    database: DatabaseNameSchema,
    definition: IndexDefinitionSchema,
    build: IndexBuildJobPayloadSchema.shape.build,
  })
  .strict();
export type IndexBuildRequestMessage = z.infer<typeof IndexBuildRequestMessageSchema>;

/**
 * Host → tenant: where the build's job is. `state` is the queue's; `documents` is what the worker indexed
 * so far (0 before its first batch). `final`: the job ended (completed, failed, cancelled): no more come.
 */
export const IndexBuildProgressMessageSchema = z
  .object({
    type: z.literal('index-build-progress'),
    database: DatabaseNameSchema,
    index: IndexNameSchema,
    build: IndexBuildJobPayloadSchema.shape.build,
    state: z.enum(['queued', 'active', 'completed', 'failed', 'cancelled']),
    phase: z.enum(['restore', 'index', 'snapshot']).nullable(),
    documents: z.number().int().nonnegative(),
    final: z.boolean(),
  })
  .strict();
export type IndexBuildProgressMessage = z.infer<typeof IndexBuildProgressMessageSchema>;
