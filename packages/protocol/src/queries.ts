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

/** The longest a query may wait for its index to catch up. */
const MAX_WAIT_MS = 600_000;

/**
 * RavenDB's clients' `WaitForNonStaleResultsTimeout`: milliseconds (the Node client) or a TimeSpan
 * (`00:00:15`, `1.00:00:00.5`, the .NET one), in milliseconds.
 */
const RavenTimeoutSchema = z.union([
  z.number().int().min(0).max(MAX_WAIT_MS),
  z
    .string()
    .regex(
      /^(\d+\.)?\d{1,2}:\d{2}:\d{2}(\.\d{1,7})?$/,
      'expected milliseconds or a TimeSpan such as 00:00:15',
    )
    .transform((text) => {
      const [, days, hours, minutes, seconds] = /^(?:(\d+)\.)?(\d+):(\d+):(\d+(?:\.\d+)?)$/.exec(text)!;
      // Rounded up: a TimeSpan a tick past the limit is past it.
      return Math.ceil(
        ((Number(days ?? 0) * 24 + Number(hours)) * 60 + Number(minutes)) * 60_000 + Number(seconds) * 1000,
      );
    })
    .pipe(z.number().max(MAX_WAIT_MS, `the wait is at most ${MAX_WAIT_MS} ms`)),
]);

/**
 * `POST /databases/{db}/queries` body. `WaitForNonStaleResultsTimeout`, `DisableCaching` and
 * `SkipDuplicateChecking` are what RavenDB's clients send (docs/ravendb-compatibility.md): the first is the
 * wait in their units, the other two change nothing here (every answer carries its result etag; results are
 * never duplicated), and QueryParameters may be null.
 */
export const QueryRequestSchema = z
  .object({
    Query: z.string().min(1, 'the query is empty').max(MAX_QUERY_CHARS),
    QueryParameters: QueryParametersSchema.nullish(),
    WaitForNonStaleResults: z.boolean().optional(),
    WaitForNonStaleResultsTimeoutMs: z.number().int().min(0).max(MAX_WAIT_MS).optional(),
    WaitForNonStaleResultsTimeout: RavenTimeoutSchema.optional(),
    DisableCaching: z.boolean().optional(),
    SkipDuplicateChecking: z.boolean().optional(),
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
export const QueryPlanNodeSchema: z.ZodType<QueryPlanNode> = z.lazy(() =>
  z.object({
    Operation: z.string(),
    Details: z.string().optional(),
    Children: z.array(QueryPlanNodeSchema).optional(),
  }),
);

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

/** `POST/GET /databases/{db}/queries` response: a page of results (documents or projections). */
export const QueryResultSchema = z.object({
  Results: z.array(z.unknown()),
  Includes: z.record(z.string(), z.unknown()),
  TotalResults: z.number().int(),
  SkippedResults: z.number().int(),
  IsStale: z.boolean(),
  IndexName: z.string().nullable(),
  IndexEtag: z.number().int(),
  ResultEtag: z.string(),
  DurationInMs: z.number(),
  Timings: z.record(z.string(), z.number()).optional(),
  Plan: QueryPlanNodeSchema.optional(),
});
export type QueryResult = z.infer<typeof QueryResultSchema>;
