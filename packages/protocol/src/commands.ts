import { z } from 'zod';
import { DocumentIdSchema, DocumentInputSchema } from './documents.js';

/**
 * Expected change vector for optimistic concurrency: a string must equal the
 * document's current change vector; the empty string means "must not exist";
 * null or absent means "no check".
 */
export const ExpectedChangeVectorSchema = z.string().max(512).nullable().optional();

/** A dotted path inside a document: `Address.City`, `Lines.0.Quantity`. */
export const PatchPathSchema = z
  .string()
  .min(1)
  .max(512)
  .refine((p) => p.split('.').every((s) => s.length > 0), { message: 'a path cannot have empty segments' })
  .refine((p) => !p.split('.').some((s) => s === '__proto__' || s === 'constructor' || s === 'prototype'), {
    message: 'a path cannot use __proto__, constructor or prototype',
  });

export const PatchOperationSchema = z.discriminatedUnion('Op', [
  z.object({ Op: z.literal('set'), Path: PatchPathSchema, Value: z.unknown() }),
  z.object({ Op: z.literal('unset'), Path: PatchPathSchema }),
  z.object({ Op: z.literal('increment'), Path: PatchPathSchema, By: z.number().finite() }),
  z.object({ Op: z.literal('append'), Path: PatchPathSchema, Value: z.unknown() }),
  z.object({ Op: z.literal('remove'), Path: PatchPathSchema, Value: z.unknown() }),
]);
export type PatchOperation = z.infer<typeof PatchOperationSchema>;

/** A patch is either a JSON merge patch (RFC 7396) or a list of operations. */
export const PatchSchema = z.union([
  z.object({ Merge: z.record(z.string(), z.unknown()) }).strict(),
  z.object({ Operations: z.array(PatchOperationSchema).min(1).max(1000) }).strict(),
]);
export type Patch = z.infer<typeof PatchSchema>;

export const PutCommandSchema = z.object({
  Type: z.literal('PUT'),
  Id: DocumentIdSchema,
  Document: DocumentInputSchema,
  ChangeVector: ExpectedChangeVectorSchema,
});
export const DeleteCommandSchema = z.object({
  Type: z.literal('DELETE'),
  Id: DocumentIdSchema,
  ChangeVector: ExpectedChangeVectorSchema,
});
export const PatchCommandSchema = z.object({
  Type: z.literal('PATCH'),
  Id: DocumentIdSchema,
  Patch: PatchSchema,
  ChangeVector: ExpectedChangeVectorSchema,
});

export const CommandSchema = z.discriminatedUnion('Type', [
  PutCommandSchema,
  DeleteCommandSchema,
  PatchCommandSchema,
]);
export type Command = z.infer<typeof CommandSchema>;
export type PutCommand = z.infer<typeof PutCommandSchema>;
export type DeleteCommand = z.infer<typeof DeleteCommandSchema>;
export type PatchCommand = z.infer<typeof PatchCommandSchema>;

/** Most commands one batch may carry; bigger loads belong in bulk insert. */
export const MAX_COMMANDS_PER_BATCH = 10_000;

/** `POST /databases/{db}/bulk_docs` body: one ACID batch. */
export const BatchRequestSchema = z.object({
  Commands: z.array(CommandSchema).min(1, 'a batch needs at least one command').max(MAX_COMMANDS_PER_BATCH),
});
export type BatchRequest = z.infer<typeof BatchRequestSchema>;

export const CommandResultSchema = z.object({
  Type: z.enum(['PUT', 'DELETE', 'PATCH']),
  Id: z.string(),
  /** Null for a DELETE of a document that did not exist. */
  ChangeVector: z.string().nullable(),
  Collection: z.string().nullable(),
  LastModified: z.string().nullable(),
  /** For DELETE: whether a document was actually removed. */
  Deleted: z.boolean().optional(),
});
export type CommandResult = z.infer<typeof CommandResultSchema>;

/** `POST /databases/{db}/bulk_docs` response: one result per command, in order. */
export const BatchResponseSchema = z.object({ Results: z.array(CommandResultSchema) });
export type BatchResponse = z.infer<typeof BatchResponseSchema>;

/** One NDJSON line of `POST /databases/{db}/bulk_insert`. */
export const BulkInsertLineSchema = z.object({
  Id: DocumentIdSchema,
  /** RavenDB's clients name each command's type (services/tenant's ravendb/bulk-array.ts): documents only. */
  Type: z
    .literal('PUT', {
      message:
        'only documents ("Type": "PUT") are bulk inserted; counters, time series and attachments are not',
    })
    .optional(),
  Document: DocumentInputSchema,
});
export type BulkInsertLine = z.infer<typeof BulkInsertLineSchema>;

/** Lines streamed back by bulk insert: progress, then one final line. */
export type BulkInsertProgress =
  | { Type: 'Progress'; Processed: number; Batches: number; ElapsedMs: number }
  | { Type: 'Completed'; Processed: number; Batches: number; ElapsedMs: number; DocsPerSecond: number }
  | { Type: 'Failed'; Processed: number; Batches: number; ElapsedMs: number; Error: Record<string, unknown> };
