// The shapes of the HTTP answers the client relies on, checked with zod as they arrive: a server (or a
// proxy) that answers something else fails loudly at the boundary instead of deep inside a session.
// Documents themselves stay `unknown` here: they are the user's data, checked where they are used.
import { QueryParametersSchema } from '@rookery/protocol';
import { z } from 'zod';
import { clientError } from '../errors.js';

// The server's own answer schemas where the client reads them as they are (one source with the routes'
// OpenAPI description); the ones below are the client's where it tolerates older servers (defaults).
export { BatchResponseSchema, HiLoResponseSchema } from '@rookery/protocol';

const DocumentSchema = z.record(z.string(), z.unknown());

export const GetDocumentsResponseSchema = z.object({
  Results: z.array(DocumentSchema.nullable()),
  Includes: z.record(z.string(), z.unknown()).default({}),
});

export const QueryResultSchema = z.looseObject({
  Results: z.array(z.unknown()),
  Includes: z.record(z.string(), z.unknown()).default({}),
  TotalResults: z.number(),
  SkippedResults: z.number().default(0),
  IsStale: z.boolean(),
  IndexName: z.string().nullable(),
  IndexEtag: z.number().optional(),
  ResultEtag: z.string().optional(),
  DurationInMs: z.number().default(0),
});
export type QueryResultBody = z.infer<typeof QueryResultSchema>;

export const TwoFactorSessionSchema = z.object({
  Binding: z.enum(['browser', 'certificate']),
  ExpiresAt: z.string(),
});

export const SubscriptionStateSchema = z.looseObject({
  Name: z.string(),
  Query: z.string(),
  LastAcknowledgedEtag: z.number(),
  CreatedAt: z.string(),
  LastAcknowledgedAt: z.string().nullable(),
  Connected: z.boolean(),
  QueryParameters: QueryParametersSchema,
});

export const BulkInsertProgressSchema = z.discriminatedUnion('Type', [
  z.object({
    Type: z.literal('Progress'),
    Processed: z.number(),
    Batches: z.number(),
    ElapsedMs: z.number(),
  }),
  z.object({
    Type: z.literal('Completed'),
    Processed: z.number(),
    Batches: z.number(),
    ElapsedMs: z.number(),
    DocsPerSecond: z.number(),
  }),
  z.object({
    Type: z.literal('Failed'),
    Processed: z.number(),
    Batches: z.number(),
    ElapsedMs: z.number(),
    Error: z.record(z.string(), z.unknown()),
  }),
]);

/** Checks an answer against its schema; a mismatch is the server's fault, reported as UnexpectedResponse. */
export function parseResponse<S extends z.ZodType>(schema: S, value: unknown, what: string): z.infer<S> {
  const parsed = schema.safeParse(value);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0];
  throw clientError(
    'UnexpectedResponse',
    `The ${what} is not what this client expects (${issue?.path.join('.') || '(root)'}: ${issue?.message})`,
    parsed.error,
  );
}
