import { z } from 'zod';

const MAX_QUERY_CHARS = 64 * 1024;

/** A `$parameter` value: JSON scalars, or arrays of them for `in (...)`. */
const ParameterValueSchema = z.union([
  z.string(),
  z.number(),
  z.boolean(),
  z.null(),
  z.array(z.union([z.string(), z.number(), z.boolean(), z.null()])).max(10_000),
]);

/** The values of a query's `$name` references, by name (without the `$`). Subscriptions take the same. */
export const QueryParametersSchema = z.record(z.string().min(1).max(128), ParameterValueSchema);
export type QueryParameters = z.infer<typeof QueryParametersSchema>;

/** `POST /databases/{db}/queries` body. */
export const QueryRequestSchema = z
  .object({
    Query: z.string().min(1, 'the query is empty').max(MAX_QUERY_CHARS),
    QueryParameters: QueryParametersSchema.optional(),
    WaitForNonStaleResults: z.boolean().optional(),
    WaitForNonStaleResultsTimeoutMs: z.number().int().min(0).max(600_000).optional(),
  })
  .strict();
export type QueryRequest = z.infer<typeof QueryRequestSchema>;

/** `GET /databases/{db}/queries?query=…[&parameters={json}][&waitForNonStaleResults=true]`. */
export const QueryStringSchema = z.object({
  query: z.string().min(1, 'the query is empty').max(MAX_QUERY_CHARS),
  parameters: z.string().max(MAX_QUERY_CHARS).optional(),
  waitForNonStaleResults: z.enum(['true', 'false']).optional(),
  waitForNonStaleResultsTimeoutMs: z.coerce.number().int().min(0).max(600_000).optional(),
});

/** One node of the plan tree returned with `include explanations()` (and always in `Timings` mode). */
export interface QueryPlanNode {
  Operation: string;
  Details?: string;
  Children?: QueryPlanNode[];
}

export interface FacetValue {
  Range: string;
  Count: number;
}
export interface FacetResult {
  Name: string;
  Values: FacetValue[];
}
export interface SuggestionResult {
  Name: string;
  Suggestions: string[];
}

export interface QueryResult {
  Results: unknown[];
  Includes: Record<string, unknown>;
  TotalResults: number;
  SkippedResults: number;
  IsStale: boolean;
  IndexName: string | null;
  IndexEtag: number;
  ResultEtag: string;
  DurationInMs: number;
  Timings?: Record<string, number>;
  Plan?: QueryPlanNode;
}
