// Every argument that reaches the queue from its callers is parsed here, once,
// by zod: the implementations below only ever see checked, defaulted values.
import { invalidRequest } from '@rookery/protocol';
import { z } from 'zod';
import { JOB_STATES, type JobProgress } from './types.js';

const SECOND = 1000;
const HOUR = 3600 * SECOND;

export const DEFAULT_LEASE_MS = 15 * 60 * SECOND;
export const DEFAULT_MAX_ATTEMPTS = 3;
export const DEFAULT_BACKOFF_MS = 5 * SECOND;

/** Job type names are pg-boss queue names too: short, lower-case, `-` allowed. */
export const JobTypeNameSchema = z
  .string()
  .regex(
    /^[a-z][a-z0-9-]{0,62}$/,
    'a job type is 1-63 lower-case letters, digits or "-", starting with a letter',
  );

/** pg-boss needs whole seconds, at least one, under a day. */
export const LeaseMsSchema = z
  .number()
  .int()
  .min(SECOND)
  .max(23 * HOUR);

export const JobIdSchema = z.uuid();

export const EnqueueRequestSchema = z
  .object({
    type: z.string(),
    tenantId: z.string().min(1).max(128),
    payload: z.unknown(),
    runAt: z.number().int().nonnegative().optional(),
    maxAttempts: z.number().int().min(1).max(100).default(DEFAULT_MAX_ATTEMPTS),
    backoffMs: z
      .number()
      .int()
      .min(0)
      .max(24 * HOUR)
      .default(DEFAULT_BACKOFF_MS),
    dedupeKey: z.string().min(1).max(256).optional(),
  })
  .strict();

export const WorkOptionsSchema = z
  .object({
    concurrency: z.number().int().min(1).max(1000).default(1),
    perTenantConcurrency: z.number().int().min(1).max(1000).optional(),
    pollMs: z.number().int().min(10).max(60_000).default(1000),
  })
  .strict()
  .transform((options) => ({
    ...options,
    perTenantConcurrency: options.perTenantConcurrency ?? options.concurrency,
  }));
export type ParsedWorkOptions = z.output<typeof WorkOptionsSchema>;

export const ListFilterSchema = z
  .object({
    tenantId: z.string().min(1).optional(),
    type: z.string().min(1).optional(),
    state: z.enum(JOB_STATES).optional(),
    limit: z.number().int().min(1).max(1000).default(100),
  })
  .strict();
export type ParsedListFilter = z.output<typeof ListFilterSchema>;

/** Progress is shown by the control plane: a small JSON object, not a log. */
const MAX_PROGRESS_BYTES = 16 * 1024;
const JobProgressSchema: z.ZodType<JobProgress> = z
  .record(z.string(), z.json())
  .refine((value) => JSON.stringify(value).length <= MAX_PROGRESS_BYTES, {
    message: `progress must serialise to at most ${MAX_PROGRESS_BYTES} bytes`,
  });

/** Parses with a schema or throws `InvalidRequest` naming `what`. */
export function parseRequest<Schema extends z.ZodType>(schema: Schema, value: unknown, what: string) {
  const result = schema.safeParse(value);
  if (!result.success) throw invalidRequest(result.error, what);
  return result.data as z.output<Schema>;
}

export function parseProgress(value: unknown): JobProgress {
  return parseRequest(JobProgressSchema, value, 'job progress');
}
