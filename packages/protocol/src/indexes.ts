import { z } from 'zod';

/**
 * Index names: `Users/ByName`, `Packages/Search`, `Auto/Users/ByAgeAndName`.
 * Case-insensitive like document ids; `/` separates the parts.
 */
export const IndexNameSchema = z
  .string()
  .min(1, 'an index name cannot be empty')
  .max(200, 'an index name must be at most 200 characters')
  .regex(
    /^[A-Za-z0-9_][A-Za-z0-9_./@()[\]-]*$/,
    'an index name may use letters, digits, "_", "-", ".", "/", "@", "()" and "[]" (not first), e.g. "Users/ByName"',
  );

/** A path into a document: `Name`, `Address.City`, `Tags`, `Lines[].Product`, or `id()` for the document id. */
export const FieldPathSchema = z
  .string()
  .min(1)
  .max(512)
  .regex(
    /^(id\(\)|[^.[\]\s][^.[\]]*(\[\])?(\.[^.[\]\s][^.[\]]*(\[\])?)*)$/,
    'a field path looks like "Name", "Address.City", "Tags" or "Lines[].Product"',
  );

/** A spatial point built from two numeric paths. */
export const SpatialSourceSchema = z.object({ Lat: FieldPathSchema, Lng: FieldPathSchema }).strict();

/**
 * Where an index field takes its values: one path, several paths whose values
 * are combined into one multi-valued field (`["Tags", "Title"]`), or a point.
 */
export const FieldSourceSchema = z.union([
  FieldPathSchema,
  z.array(FieldPathSchema).min(1).max(32),
  SpatialSourceSchema,
]);
export type FieldSource = z.infer<typeof FieldSourceSchema>;

/** An index field's name (a map's key): automatic indexes name their fields by the query's paths, so queries meet it too. */
export const FieldNameSchema = z
  .string()
  .min(1)
  .max(128)
  .regex(
    /^[A-Za-z_@][A-Za-z0-9_@.[\]-]*$/,
    'an index field name may use letters, digits, "_", "@", ".", "-" and "[]", e.g. "Lines[].Product"',
  );

/** A declarative map: the documents of one collection, and the fields taken from each. */
export const DeclarativeMapSchema = z
  .object({
    Collection: z.string().min(1).max(256),
    Fields: z.record(FieldNameSchema, FieldSourceSchema).refine((f) => Object.keys(f).length > 0, {
      message: 'a map needs at least one field',
    }),
  })
  .strict();
export type DeclarativeMap = z.infer<typeof DeclarativeMapSchema>;

const AggregateSchema = z.union([
  z.object({ Sum: FieldNameSchema }).strict(),
  z.object({ Count: z.literal(true) }).strict(),
  z.object({ Min: FieldNameSchema }).strict(),
  z.object({ Max: FieldNameSchema }).strict(),
  z.object({ First: FieldNameSchema }).strict(),
  z.object({ Distinct: FieldNameSchema }).strict(),
]);
export type Aggregate = z.infer<typeof AggregateSchema>;

/** A declarative reduce: group the map entries by some fields, aggregate the others. */
export const DeclarativeReduceSchema = z
  .object({
    GroupBy: z.array(FieldNameSchema).min(1).max(16),
    Aggregate: z.record(FieldNameSchema, AggregateSchema),
  })
  .strict();
export type DeclarativeReduce = z.infer<typeof DeclarativeReduceSchema>;

/** How a field is indexed. `Search` is analysed full text; `Exact` keeps case; `Default` ignores case. */
export const FieldOptionsSchema = z
  .object({
    Indexing: z.enum(['Default', 'Exact', 'Search']).optional(),
    Suggestions: z.boolean().optional(),
  })
  .strict();
export type FieldOptions = z.infer<typeof FieldOptionsSchema>;

const MAX_JS_SOURCE = 64 * 1024;

/**
 * `PUT /databases/{db}/indexes` body. `Maps` are either declarative objects or
 * JavaScript strings in RavenDB's style (`map('Users', u => ({ Name: u.Name }))`),
 * not both; `Reduce` follows the same kind.
 */
export const IndexDefinitionSchema = z
  .object({
    Name: IndexNameSchema,
    Maps: z.union([
      z.array(DeclarativeMapSchema).min(1).max(32),
      z.array(z.string().min(1).max(MAX_JS_SOURCE)).min(1).max(32),
    ]),
    Reduce: z.union([DeclarativeReduceSchema, z.string().min(1).max(MAX_JS_SOURCE)]).optional(),
    Fields: z.record(FieldNameSchema, FieldOptionsSchema).optional(),
    IncludeArchived: z.boolean().optional(),
  })
  .strict()
  .superRefine((def, ctx) => {
    const jsMaps = typeof def.Maps[0] === 'string';
    if (def.Reduce !== undefined && jsMaps !== (typeof def.Reduce === 'string')) {
      ctx.addIssue({
        code: 'custom',
        path: ['Reduce'],
        message: 'Maps and Reduce must both be JavaScript strings or both be declarative objects',
      });
    }
  });
export type IndexDefinition = z.infer<typeof IndexDefinitionSchema>;

export const IndexKindSchema = z.enum(['Map', 'MapReduce', 'AutoMap']);
export type IndexKind = z.infer<typeof IndexKindSchema>;

/**
 * How far a stale index has got: the documents it covers (its collections'
 * documents, archived ones only if the index includes them) and how many of
 * them were written after its last etag. Exact up to 10,000 left, estimated
 * above (`IsEstimate`). Deletions still to apply are not counted.
 */
export const IndexBuildProgressSchema = z.object({
  TotalDocuments: z.number().int(),
  DocumentsToProcess: z.number().int(),
  IsEstimate: z.boolean(),
});
export type IndexBuildProgress = z.infer<typeof IndexBuildProgressSchema>;

/** How far a worker's build of an index is, as the job queue last said (index-builds.ts). */
export const WorkerBuildStatsSchema = z.object({
  /** `requested`: asked of the host, no word from the queue yet; then the job's state. */
  State: z.enum(['requested', 'queued', 'active', 'completed', 'failed', 'cancelled']),
  /** The worker's phase: restoring the database from the mirror, indexing it, writing the snapshot. */
  Phase: z.enum(['restore', 'index', 'snapshot']).nullable(),
  /** Documents the worker indexed so far. */
  DocumentsIndexed: z.number().int(),
});
export type WorkerBuildStats = z.infer<typeof WorkerBuildStatsSchema>;

/** How far the changed definition being built beside an index is; it answers once it has caught up. */
export const IndexReplacementStatsSchema = z.object({
  /** The replacement's own position: 0 until its first batch (or until a worker's build of it is adopted). */
  LastIndexedEtag: z.number().int(),
  /** As `IndexStats.Progress`, for the replacement: null once it has caught up (promoted at the next step). */
  Progress: IndexBuildProgressSchema.nullable(),
  EntriesCount: z.number().int(),
  /** Present while the worker fleet builds the replacement. */
  WorkerBuild: WorkerBuildStatsSchema.optional(),
});
export type IndexReplacementStats = z.infer<typeof IndexReplacementStatsSchema>;

/** `GET /databases/{db}/indexes/stats` response, and each of `GET /databases/{db}/indexes`'s `Results`. */
export const IndexStatsSchema = z.object({
  Name: z.string(),
  Type: IndexKindSchema,
  Collections: z.array(z.string()),
  LastIndexedEtag: z.number().int(),
  IsStale: z.boolean(),
  /**
   * Null when the index is not stale. While a replacement builds, `IsStale` is true (queries say so too) and
   * this is still the answering index's own, which may be null: the replacement's is `Replacement.Progress`.
   */
  Progress: IndexBuildProgressSchema.nullable(),
  EntriesCount: z.number().int(),
  ErrorsCount: z.number().int(),
  Errors: z.array(z.object({ Document: z.string().nullable(), Error: z.string(), At: z.string() })),
  State: z.enum(['Normal', 'Error']),
  /** Present while the worker fleet builds the index (docs/mirror.md, "Worker-built indexes"). */
  WorkerBuild: WorkerBuildStatsSchema.optional(),
  /**
   * Present while a changed definition of the index is built side by side (RavenDB's `ReplacementOf/<name>`,
   * shown here inside the index it replaces: docs/mirror.md, "Worker-built indexes").
   */
  Replacement: IndexReplacementStatsSchema.optional(),
});
export type IndexStats = z.infer<typeof IndexStatsSchema>;

/** `PUT /databases/{db}/indexes` response (201 created, 200 replaced), in Rookery's shape. */
export const PutIndexResponseSchema = z.object({ Index: z.string(), Created: z.boolean() });
export type PutIndexResponse = z.infer<typeof PutIndexResponseSchema>;

/** `GET /databases/{db}/indexes` response: each index's stats (its names alone with `?namesOnly=true`). */
/** `POST /databases/{db}/indexes/reset` response. */
export const IndexResetResponseSchema = z.object({ Index: z.string(), Reset: z.literal(true) });

export const IndexListResponseSchema = z.object({
  Results: z.array(z.union([IndexStatsSchema, z.string()])),
});
