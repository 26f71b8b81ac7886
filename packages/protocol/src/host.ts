// The answers of the host's internal HTTP API (services/host/src/server.ts), read by the gateway (wake,
// stats) and the worker (wake, purge). The host builds its answers to these types and its readers parse
// them with these schemas, so a host and a reader of different versions (a rolling upgrade) or a
// misbehaving host fail with a clear error instead of a wrong value read through a cast. Objects are not
// strict: a newer host may add a field, which older readers drop. Errors are problem+json (ProblemSchema).
import { z } from 'zod';
import { RookeryError } from './errors.js';
import { TenantIdSchema } from './tenant-id.js';

const Count = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);
/** Epoch milliseconds. */
const Time = z.number().int().nonnegative();

export const HostTenantStateSchema = z.enum(['stopped', 'starting', 'running', 'stopping']);
export type HostTenantState = z.infer<typeof HostTenantStateSchema>;

/** `POST /tenants/{id}/wake`: the socket of the tenant's running process, started if it slept. */
export const HostWakeAnswerSchema = z.object({
  socketPath: z.string().min(1),
  /** False when the tenant was already running. */
  startedNow: z.boolean(),
  /** How long the start this wake waited for took (0 when it was running). */
  startMs: z.number().nonnegative(),
});
export type HostWakeAnswer = z.infer<typeof HostWakeAnswerSchema>;

/** `POST /tenants/{id}/stop`. */
export const HostStopAnswerSchema = z.object({
  tenantId: TenantIdSchema,
  state: HostTenantStateSchema,
  /** It was running (or starting) and was stopped. */
  wasRunning: z.boolean(),
});
export type HostStopAnswer = z.infer<typeof HostStopAnswerSchema>;

/** `DELETE /tenants/{id}`: a deleted tenant's process and local files are gone (idempotent). */
export const HostPurgeAnswerSchema = z.object({
  tenantId: TenantIdSchema,
  /** Its process was running (or starting) and was stopped. */
  wasRunning: z.boolean(),
  /** It had files on this host, now deleted. */
  removedFiles: z.boolean(),
});
export type HostPurgeAnswer = z.infer<typeof HostPurgeAnswerSchema>;

/** One database of a tenant, read by the host from its files. */
export const HostDatabaseSummarySchema = z.object({
  name: z.string().min(1),
  databaseId: z.string().min(1),
  documents: Count,
  tombstones: Count,
  collections: z.record(z.string(), Count),
  lastEtag: Count,
  /** docs.db (+ WAL) and the database's index files. */
  bytesOnDisk: Count,
});
export type HostDatabaseSummary = z.infer<typeof HostDatabaseSummarySchema>;

/** A database whose files the host could not read: its name and why. */
export const HostDatabaseReadFailureSchema = z.object({
  name: z.string().min(1),
  error: z.string(),
});
export type HostDatabaseReadFailure = z.infer<typeof HostDatabaseReadFailureSchema>;

/** `GET /tenants/{id}/stats`: what the tenant stores, read from its files without starting it. */
export const HostTenantStatsSchema = z.object({
  tenantId: TenantIdSchema,
  state: HostTenantStateSchema,
  databases: z.array(z.union([HostDatabaseSummarySchema, HostDatabaseReadFailureSchema])),
  /** Every file under the tenant's directory. */
  bytesOnDisk: Count,
});
export type HostTenantStats = z.infer<typeof HostTenantStatsSchema>;

/** One tenant in `GET /tenants`. */
export const HostTenantInfoSchema = z.object({
  tenantId: TenantIdSchema,
  state: HostTenantStateSchema,
  pid: z.number().int().positive().nullable(),
  socketPath: z.string().min(1),
  /** When the running process became ready. */
  readySince: Time.nullable(),
  lastActivityAt: Time.nullable(),
  inFlight: Count,
  /** Processes started for this tenant since the host started. */
  starts: Count,
  crashes: Count,
  /** Automatic restarts (and wakes) are suspended until then after too many crashes in a minute. */
  suspendedUntil: Time.nullable(),
});
export type HostTenantInfo = z.infer<typeof HostTenantInfoSchema>;

/** `GET /tenants`. */
export const HostTenantListSchema = z.object({ tenants: z.array(HostTenantInfoSchema) });
export type HostTenantList = z.infer<typeof HostTenantListSchema>;

/**
 * A fleet host's `421 TenantNotHere` (any `/tenants/{id}/wake` or `/stats` of a tenant it does not own),
 * answered before it starts the tenant or reads its files: who owns the tenant as the control store says,
 * for the caller to refresh its placement and ask that host. `owner` is null when the tenant is not placed
 * (or its host is not registered); `epoch` is the placement's epoch, null when it is not placed.
 */
export const HostTenantNotHereAnswerSchema = z.object({
  type: z.string(),
  title: z.string(),
  status: z.literal(421),
  detail: z.string(),
  code: z.literal('TenantNotHere'),
  tenantId: TenantIdSchema,
  owner: z.object({ hostId: z.string().min(1), address: z.string().min(1).nullable() }).nullable(),
  epoch: z.number().int().min(0).nullable(),
});
export type HostTenantNotHereAnswer = z.infer<typeof HostTenantNotHereAnswerSchema>;

/**
 * Parses a host's answer with its schema. An answer off the contract is a fault of ours (a host and a
 * caller of different versions, a bug), so InternalError naming the route and the first field that is not
 * as the contract says; a caller may turn it into its own answer (the gateway's wake: 503).
 */
export function parseHostAnswer<T>(schema: z.ZodType<T>, body: unknown, route: string): T {
  const parsed = schema.safeParse(body);
  if (parsed.success) return parsed.data;
  const issue = parsed.error.issues[0]!;
  const where = issue.path.length > 0 ? `${issue.path.join('.')}: ` : '';
  throw new RookeryError(
    'InternalError',
    `The host's answer to ${route} is not what @rookery/protocol's host contract says (${where}${issue.message}); are the host and its caller the same version?`,
    { route },
  );
}
