import { IndexDefinitionSchema, IndexNameSchema, RookeryError } from '@rookery/protocol';
import { z } from 'zod';

/**
 * The IPC protocol between the tenant and its indexer process. Both sides
 * parse what they receive: a message from a process that is not the one we
 * think (or a bug) is refused, never half-applied.
 */
const DbSchema = z.string().min(1).max(64);

export const ToIndexerSchema = z.discriminatedUnion('type', [
  z.object({
    type: z.literal('open'),
    id: z.number().int(),
    db: DbSchema,
    directory: z.string().min(1),
    /** The database's directory on the mirror, when it is mirrored: its indexes are copied there. */
    mirror: z.string().min(1).optional(),
  }),
  z.object({ type: z.literal('close'), id: z.number().int(), db: DbSchema }),
  z.object({ type: z.literal('nudge'), db: DbSchema }),
  /** A worker's build of an index of this database finished: adopt it now (the host said so). */
  z.object({ type: z.literal('built'), db: DbSchema }),
  z.object({ type: z.literal('put'), id: z.number().int(), db: DbSchema, definition: IndexDefinitionSchema }),
  z.object({ type: z.literal('delete'), id: z.number().int(), db: DbSchema, name: IndexNameSchema }),
  z.object({ type: z.literal('reset'), id: z.number().int(), db: DbSchema, name: IndexNameSchema }),
]);
export type ToIndexer = z.infer<typeof ToIndexerSchema>;
export type IndexerRequest = Extract<ToIndexer, { id: number }>;
/** A request as the caller writes it: the process handle numbers it. */
export type IndexerRequestBody = IndexerRequest extends infer R
  ? R extends unknown
    ? Omit<R, 'id'>
    : never
  : never;

export const FromIndexerSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('ready') }),
  /** After a nudge about `db`: the indexer looked and found every index caught up (nudges.ts). */
  z.object({ type: z.literal('idle'), db: DbSchema }),
  z.object({
    type: z.literal('reply'),
    id: z.number().int(),
    ok: z.boolean(),
    result: z.unknown().optional(),
    error: z.object({ code: z.string(), message: z.string() }).optional(),
  }),
  z.object({
    type: z.literal('progress'),
    db: DbSchema,
    index: z.string(),
    lastEtag: z.number(),
    documents: z.number(),
    removed: z.number(),
    errors: z.number(),
  }),
  /** Build this index on the worker fleet (the tenant passes it to its host, which enqueues the job). */
  z.object({
    type: z.literal('build-request'),
    db: DbSchema,
    definition: IndexDefinitionSchema,
    build: z.string().min(1).max(64),
  }),
  /** The worker's build of this index was adopted and caught up: its file was replaced. */
  z.object({ type: z.literal('adopted'), db: DbSchema, index: z.string(), lastEtag: z.number() }),
]);
export type FromIndexer = z.infer<typeof FromIndexerSchema>;

/**
 * A request one side refuses, as the error its caller gets: the tenant refuses it before sending, the
 * indexer answers it with this (never silence, which would leave the caller waiting out its deadline).
 */
export function refusalOf(error: z.ZodError): RookeryError {
  const issue = error.issues[0];
  const path = issue && issue.path.length > 0 ? ` at ${issue.path.join('.')}` : '';
  return new RookeryError(
    'InvalidRequest',
    `The indexer cannot take this request: ${issue?.message ?? 'malformed'}${path}`,
  );
}

/** The id of a message that failed to parse, when it has one to answer to. */
export function requestIdOf(raw: unknown): number | null {
  if (typeof raw !== 'object' || raw === null) return null;
  const { id } = raw as { id?: unknown };
  return typeof id === 'number' && Number.isInteger(id) ? id : null;
}
