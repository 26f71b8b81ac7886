// The index answers the Indexes page reads (packages/protocol's IndexStats), parsed before it sees them.
import { z } from 'zod';

const ProgressSchema = z
  .object({ TotalDocuments: z.number(), DocumentsToProcess: z.number(), IsEstimate: z.boolean() })
  .nullable();
export type BuildProgress = z.infer<typeof ProgressSchema>;

/** A worker's build of the index or of its replacement, as the job queue last said (WorkerBuildStats). */
const WorkerBuildSchema = z.looseObject({
  State: z.enum(['requested', 'queued', 'active', 'completed', 'failed', 'cancelled']),
  Phase: z.enum(['restore', 'index', 'snapshot']).nullable(),
  DocumentsIndexed: z.number(),
});
export type WorkerBuild = z.infer<typeof WorkerBuildSchema>;

export const IndexStatsSchema = z.looseObject({
  Name: z.string(),
  Type: z.string(),
  Collections: z.array(z.string()),
  LastIndexedEtag: z.number(),
  IsStale: z.boolean(),
  Progress: ProgressSchema,
  EntriesCount: z.number(),
  ErrorsCount: z.number(),
  Errors: z.array(z.object({ Document: z.string().nullable(), Error: z.string(), At: z.string() })),
  State: z.string(),
  WorkerBuild: WorkerBuildSchema.optional(),
  /** A changed definition built side by side while this one answers (IndexReplacementStats). */
  Replacement: z
    .looseObject({
      LastIndexedEtag: z.number(),
      Progress: ProgressSchema,
      EntriesCount: z.number(),
      WorkerBuild: WorkerBuildSchema.optional(),
    })
    .optional(),
});
export type IndexStats = z.infer<typeof IndexStatsSchema>;

export const IndexListSchema = z.looseObject({ Results: z.array(IndexStatsSchema) });
export const IndexPutSchema = z.looseObject({ Index: z.string(), Created: z.boolean() });
export const IndexResetSchema = z.looseObject({ Index: z.string(), Reset: z.literal(true) });

/**
 * `GET …/indexes/definition?name=`: the definition as PUT took it. Only its shape is read here; the tenant
 * checks the rest when it is saved again.
 */
export const IndexDefinitionSchema = z.looseObject({
  Name: z.string(),
  Maps: z.array(z.unknown()).min(1),
  Reduce: z.unknown().optional(),
});
export type IndexDefinition = z.infer<typeof IndexDefinitionSchema>;
