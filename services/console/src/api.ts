// The console's one way to the gateway: same-origin fetch (the browser presents the client certificate and
// the session cookie itself), the CSRF token on every state-changing call (the gateway's
// browser-session.ts), and every answer parsed with zod before the pages see it. A refusal becomes an
// ApiError with the problem's stable code and, for a query the parser refused, where in the text.
import { z } from 'zod';

const ProblemSchema = z.looseObject({
  code: z.string(),
  detail: z.string().default(''),
  line: z.number().int().optional(),
  column: z.number().int().optional(),
});

export class ApiError extends Error {
  constructor(
    readonly status: number,
    readonly code: string,
    message: string,
    /** 1-based line and column of an InvalidQuery's syntax error. */
    readonly position: { line: number; column: number } | null = null,
  ) {
    super(message);
  }
}

let csrfToken: string | null = null;

/** Remembers the session's CSRF token (from POST /auth/2fa or GET /auth/session). */
export function setCsrfToken(token: string | null): void {
  csrfToken = token;
}

export interface Answer<T> {
  status: number;
  body: T;
  headers: Headers;
}

export async function call<T>(
  method: string,
  path: string,
  schema: z.ZodType<T>,
  options: { body?: unknown; headers?: Record<string, string> } = {},
): Promise<Answer<T>> {
  const response = await send(method, path, options);
  const text = await response.text();
  const json = parseJson(text);
  if (!response.ok) throw toApiError(response.status, json, text);
  const parsed = schema.safeParse(json);
  if (!parsed.success) {
    throw new ApiError(
      response.status,
      'UnexpectedAnswer',
      `${method} ${path}: ${z.prettifyError(parsed.error)}`,
    );
  }
  return { status: response.status, body: parsed.data, headers: response.headers };
}

/**
 * A call whose answer is read as it arrives (an NDJSON stream): the Response once the gateway accepted
 * it; a refusal before the first line is an ApiError as for call().
 */
export async function openStream(method: string, path: string, body: unknown): Promise<Response> {
  const response = await send(method, path, { body, headers: { accept: 'application/x-ndjson' } });
  if (!response.ok) {
    const text = await response.text();
    throw toApiError(response.status, parseJson(text), text);
  }
  return response;
}

function send(
  method: string,
  path: string,
  options: { body?: unknown; headers?: Record<string, string> },
): Promise<Response> {
  const headers: Record<string, string> = { accept: 'application/json', ...options.headers };
  if (options.body !== undefined) headers['content-type'] = 'application/json';
  if (method !== 'GET' && csrfToken !== null) headers['x-rookery-csrf'] = csrfToken;
  return fetch(path, {
    method,
    headers,
    credentials: 'same-origin',
    body: options.body === undefined ? undefined : JSON.stringify(options.body),
  });
}

function parseJson(text: string): unknown {
  if (text === '') return null;
  try {
    return JSON.parse(text);
  } catch {
    return text;
  }
}

function toApiError(status: number, json: unknown, text: string): ApiError {
  const problem = ProblemSchema.safeParse(json);
  if (!problem.success)
    return new ApiError(status, 'UnexpectedAnswer', text.slice(0, 300) || `HTTP ${status}`);
  const { code, detail, line, column } = problem.data;
  const position = line !== undefined && column !== undefined ? { line, column } : null;
  return new ApiError(status, code, detail || code, position);
}

// ── the answers the pages read ────────────────────────────────────────────

export const RoleSchema = z.looseObject({ kind: z.string() });
export const SessionSchema = z.object({
  Principal: z.object({
    Id: z.string(),
    Name: z.string(),
    Kind: z.string(),
    TenantId: z.string().nullable(),
    Role: RoleSchema,
  }),
  Binding: z.enum(['browser', 'certificate']).nullable(),
  ExpiresAt: z.string().nullable(),
  CsrfToken: z.string().nullable(),
});
export type Session = z.infer<typeof SessionSchema>;

export const OpenedSchema = z.object({
  Binding: z.string(),
  ExpiresAt: z.string(),
  CsrfToken: z.string().nullish(),
});
export const NothingSchema = z.unknown();

export const DatabasesSchema = z.looseObject({ Databases: z.array(z.string()) });
/** GET /control/tenants (operators). */
export const TenantsSchema = z.looseObject({ tenants: z.array(z.looseObject({ id: z.string() })) });

export const StatsSchema = z.looseObject({
  CountOfDocuments: z.number(),
  Collections: z.record(z.string(), z.number()),
});

export const MetadataSchema = z.looseObject({
  '@id': z.string().optional(),
  '@change-vector': z.string().optional(),
  '@collection': z.string().optional(),
  '@last-modified': z.string().optional(),
});
export const DocumentSchema = z.looseObject({ '@metadata': MetadataSchema.optional() });
export type StoredDocument = z.infer<typeof DocumentSchema>;

export const LoadedSchema = z.looseObject({ Results: z.array(DocumentSchema.nullable()) });
export const PutSchema = z.looseObject({ Id: z.string(), ChangeVector: z.string() });

export const QueryResultSchema = z.looseObject({
  Results: z.array(z.unknown()),
  TotalResults: z.number(),
  IsStale: z.boolean(),
  IndexName: z.string().nullable().optional(),
  DurationInMs: z.number().optional(),
  /** With `include timings()`: milliseconds per stage. */
  Timings: z.record(z.string(), z.number()).optional(),
  /** With `include explanations()`: the plan tree (parsed by the query page, query/Extras.tsx). */
  Plan: z.unknown().optional(),
});
export type QueryResult = z.infer<typeof QueryResultSchema>;

// The tenant the pages act on when the principal is an operator (who reaches every tenant, so the gateway
// needs it named in the path: /tenants/{id}/…, /control/tenants/{id}/…); null for everyone else, whose
// certificate names its tenant. Set before the pages mount, as the CSRF token is.
let tenantScope: string | null = null;

export function setTenantScope(tenantId: string | null): void {
  tenantScope = tenantId;
}

/** A tenant data-plane path (`databases`, `databases/shop/…`), under /tenants/{id} for an operator. */
export function tenantPath(rest: string): string {
  return tenantScope === null ? `/${rest}` : `/tenants/${encodeURIComponent(tenantScope)}/${rest}`;
}

/** A control-plane path of the tenant (`principals`, `jobs`, …), under /control/tenants/{id} for an operator. */
export function controlPath(rest: string): string {
  return tenantScope === null
    ? `/control/${rest}`
    : `/control/tenants/${encodeURIComponent(tenantScope)}/${rest}`;
}

/** The tenant's usage path: an operator names the tenant as a parameter. */
export function usagePath(from: number, to: number): string {
  const tenant = tenantScope === null ? '' : `&tenant=${encodeURIComponent(tenantScope)}`;
  return `/usage?from=${from}&to=${to}${tenant}`;
}

/** A database's paths through the gateway (names are percent-encoded: `a/b` stays one segment). */
export function databasePath(database: string, rest: string): string {
  return tenantPath(`databases/${encodeURIComponent(database)}/${rest}`);
}

/** A document's body and its metadata, apart: the editor shows one and the other separately. */
export function splitMetadata(document: StoredDocument): {
  body: Record<string, unknown>;
  metadata: Record<string, unknown>;
} {
  const { '@metadata': metadata, ...body } = document;
  return { body, metadata: metadata ?? {} };
}

/** An error as a page shows it: the stable code first for the gateway's refusals. */
export function describeError(error: unknown): string {
  return error instanceof ApiError ? `${error.code}: ${error.message}` : String(error);
}
