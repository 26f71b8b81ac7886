import { z } from 'zod';
import { IsoDateSchema } from './documents.js';

/** Documents one sweep call handles when the caller does not say. */
export const DEFAULT_SWEEP_LIMIT = 512;
/**
 * Most documents one sweep call handles: a sweep is one unit of work in the database's single
 * writer, so a bounded batch keeps the writes merged with it from waiting long.
 */
export const MAX_SWEEP_LIMIT = 10_000;

/**
 * `POST /databases/{db}/admin/sweep` body (the body may also be absent): archive documents whose
 * `@archive-at` is at or before `now` and delete those whose `@expires` is, at most `limit` of them.
 * `now` defaults to the tenant's clock; sweep jobs and tests pass it to control time.
 */
export const SweepRequestSchema = z
  .object({
    now: IsoDateSchema.optional(),
    limit: z.number().int().min(1).max(MAX_SWEEP_LIMIT).optional(),
  })
  .strict();
export type SweepRequest = z.infer<typeof SweepRequestSchema>;

/** What one sweep call did; `More` is true while due documents remain (call again). */
export interface SweepResult {
  Archived: number;
  Expired: number;
  More: boolean;
}
