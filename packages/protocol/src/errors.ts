import { z } from 'zod';
import { RAVEN_ERROR_KEYS, ravenErrorFields } from './ravendb.js';

/**
 * Every error Rookery returns has one of these stable codes. Clients branch on
 * the code, never on the message, so a code is never renamed or reused.
 */
export const ErrorCodes = {
  InvalidJson: 400,
  /** A request body or document nests objects and arrays deeper than MAX_JSON_DEPTH (json-depth.ts). */
  NestingTooDeep: 400,
  InvalidRequest: 400,
  InvalidId: 400,
  InvalidDatabaseName: 400,
  InvalidMetadata: 400,
  InvalidPatch: 400,
  InvalidQuery: 400,
  InvalidIndexDefinition: 400,
  IndexNotFound: 404,
  /** A RavenDB operation id this tenant process does not know (routes/ravendb/operations.ts). */
  OperationNotFound: 404,
  /**
   * RavenDB's TCP protocol (its subscription worker, `GET /info/remote-task/tcp`): not served; Rookery's
   * subscriptions are consumed over its WebSocket (docs/ravendb-compatibility.md).
   */
  RavenTcpNotSupported: 501,
  /** A RavenDB TCP connection that did not send its header and subscription options in time (ROOKERY_RAVEN_TCP_NEGOTIATION_TIMEOUT_MS). */
  RavenTcpNegotiationTimeout: 408,
  /** A PUT of an index beyond the per-database index count (ROOKERY_INDEX_MAX_PER_DATABASE). */
  TooManyIndexes: 409,
  /** A JavaScript index that does not fit the tenant's sandbox memory budget (ROOKERY_INDEX_SANDBOX_BUDGET_MB). */
  IndexSandboxBudgetExceeded: 409,
  /** A worker's build of an index from the mirror failed (a batch failed, or the build was stopped); the job says why. */
  IndexBuildFailed: 422,
  StaleResultsTimeout: 408,
  CollectionChangeNotAllowed: 400,
  DocumentNotFound: 404,
  DatabaseNotFound: 404,
  RouteNotFound: 404,
  MethodNotAllowed: 405,
  ConcurrencyConflict: 409,
  DatabaseAlreadyExists: 409,
  PayloadTooLarge: 413,
  /** The answer would hold more than the tenant's response budget (ROOKERY_MAX_RESPONSE_BYTES). */
  ResponseTooLarge: 413,
  UnsupportedMediaType: 415,
  DatabaseUnavailable: 503,
  InternalError: 500,
  // The gateway: who you are, what you may do, and what your tenant has left.
  CertificateRequired: 401,
  CertificateNotRecognised: 401,
  CertificateRevoked: 401,
  CertificateExpired: 401,
  TwoFactorRequired: 401,
  TwoFactorNotEnrolled: 400,
  TwoFactorAlreadyEnrolled: 409,
  /** POST /auth/enrolment with no enrolment waiting for the person (never started, or collected already). */
  TwoFactorEnrolmentNotPending: 404,
  InvalidTwoFactorCode: 401,
  TwoFactorCodeReused: 401,
  TooManyTwoFactorAttempts: 429,
  /** A state-changing request of a browser session without its CSRF token (X-Rookery-Csrf). */
  CsrfTokenInvalid: 403,
  /** A state-changing request another site's page sent (Origin or Sec-Fetch-Site not this gateway). */
  CrossSiteRequest: 403,
  Forbidden: 403,
  TenantRequired: 400,
  RateLimited: 429,
  /** A tenant holds as many WebSockets (or NDJSON streams) open through a gateway as it may. */
  TooManyLiveConnections: 429,
  /** A tenant has as many requests of one slow class (queries, bulk inserts) in flight through a gateway as it may. */
  TooManyRequestsInFlight: 429,
  StorageQuotaExceeded: 507,
  TenantStarting: 503,
  TenantUnavailable: 503,
  // The control plane's store: tenants, principals and their certificates.
  InvalidTenantId: 400,
  TenantNotFound: 404,
  TenantAlreadyExists: 409,
  // A deleted tenant's files are still being purged (or the purge failed): its id is not free yet.
  TenantPurgePending: 409,
  PrincipalNotFound: 404,
  CertificateNotFound: 404,
  CertificateAlreadyExists: 409,
  // The mirror on the network disk and restores from it.
  MirrorUnavailable: 503,
  MirrorCorrupt: 500,
  // Fencing (docs/scale-out.md): a host that lost a tenant stops acknowledging its writes.
  /** The host's lease lapsed (its deadline passed on the tenant's monotonic clock): writes are refused; retry through the gateway. */
  LeaseExpired: 503,
  /** A newer placement epoch writes this database's mirror: this (older) owner may not ship or acknowledge any more. */
  MirrorFenced: 503,
  MirrorNotFound: 404,
  RestorePointUnavailable: 400,
  // The fleet in the control store (packages/control-store README, "Leases and placements").
  HostNotFound: 404,
  /** Another registration of the same host id raised the lease's epoch: this process must stop serving. */
  LeaseSuperseded: 409,
  /** A compare-and-swap on a tenant's placement epoch lost: someone moved it first. */
  PlacementConflict: 409,
  TenantNotPlaced: 404,
  /** The target host is draining, retired, full or without a live lease. */
  HostUnavailable: 409,
  /** Only a drained host with no tenants placed on it can be retired. */
  HostNotEmpty: 409,
  /** No active host with a live lease has room for another tenant. */
  NoHostAvailable: 503,
  /** The host asked does not own the tenant (the placement names another host, or an older lease epoch of this one): ask the owner named in the answer. */
  TenantNotHere: 421,
  // The job queue (@rookery/jobs): jobs are typed, their payloads checked when enqueued.
  UnknownJobType: 400,
  InvalidJobPayload: 400,
  JobNotFound: 404,
  // Backups made from the mirror by the worker fleet, and restores from them.
  BackupNotFound: 404,
  BackupCorrupt: 422,
  BackupKeyMismatch: 422,
  JobQueueUnavailable: 503,
  // The control store (its PostgreSQL) cannot be reached: retry after Retry-After.
  ControlStoreUnavailable: 503,
  // The gateway is shutting down: its health port says so, so the load balancer sends it nothing new.
  GatewayStopping: 503,
  // Live data: subscriptions and streams.
  SubscriptionNotFound: 404,
  SubscriptionAlreadyExists: 409,
  SubscriptionInUse: 409,
  SubscriptionTakenOver: 409,
  StreamInterrupted: 502,
} as const satisfies Record<string, number>;

export type ErrorCode = keyof typeof ErrorCodes;

/** The `application/problem+json` body (RFC 9457) with Rookery's stable `code`. */
export const ProblemSchema = z
  .object({
    type: z.string(),
    title: z.string(),
    status: z.number().int(),
    detail: z.string(),
    code: z.string(),
  })
  .catchall(z.unknown());
export type Problem = z.infer<typeof ProblemSchema>;

const TITLES: Record<ErrorCode, string> = {
  InvalidJson: 'Malformed JSON',
  NestingTooDeep: 'JSON nested too deeply',
  InvalidRequest: 'Invalid request',
  InvalidId: 'Invalid document id',
  InvalidDatabaseName: 'Invalid database name',
  InvalidMetadata: 'Invalid document metadata',
  InvalidPatch: 'Patch cannot be applied',
  InvalidQuery: 'Invalid query',
  InvalidIndexDefinition: 'Invalid index definition',
  IndexNotFound: 'Index not found',
  OperationNotFound: 'Operation not found',
  RavenTcpNotSupported: "RavenDB's TCP protocol is not supported",
  RavenTcpNegotiationTimeout: 'RavenDB TCP negotiation too slow',
  TooManyIndexes: 'Too many indexes',
  IndexBuildFailed: 'Index build failed',
  IndexSandboxBudgetExceeded: 'Index sandbox memory budget exhausted',
  StaleResultsTimeout: 'Index still stale',
  CollectionChangeNotAllowed: 'Collection change not allowed',
  DocumentNotFound: 'Document not found',
  DatabaseNotFound: 'Database not found',
  RouteNotFound: 'Route not found',
  MethodNotAllowed: 'Method not allowed',
  ConcurrencyConflict: 'Concurrency conflict',
  DatabaseAlreadyExists: 'Database already exists',
  PayloadTooLarge: 'Payload too large',
  ResponseTooLarge: 'Response too large',
  UnsupportedMediaType: 'Unsupported media type',
  DatabaseUnavailable: 'Database unavailable',
  InternalError: 'Internal error',
  CertificateRequired: 'Client certificate required',
  CertificateNotRecognised: 'Certificate not recognised',
  CertificateRevoked: 'Certificate revoked',
  CertificateExpired: 'Certificate expired',
  TwoFactorRequired: 'Two-factor session required',
  TwoFactorNotEnrolled: 'No authenticator enrolled',
  TwoFactorAlreadyEnrolled: 'Authenticator already enrolled',
  TwoFactorEnrolmentNotPending: 'No enrolment to collect',
  InvalidTwoFactorCode: 'Invalid two-factor code',
  TwoFactorCodeReused: 'Two-factor code already used',
  TooManyTwoFactorAttempts: 'Too many two-factor attempts',
  CsrfTokenInvalid: 'CSRF token missing or wrong',
  CrossSiteRequest: 'Cross-site request refused',
  Forbidden: 'Forbidden',
  TenantRequired: 'Tenant required',
  RateLimited: 'Request rate limit reached',
  TooManyLiveConnections: 'Too many live connections',
  TooManyRequestsInFlight: 'Too many requests in flight',
  StorageQuotaExceeded: 'Storage quota exceeded',
  TenantStarting: 'Tenant starting',
  TenantUnavailable: 'Tenant unavailable',
  InvalidTenantId: 'Invalid tenant id',
  TenantNotFound: 'Tenant not found',
  TenantAlreadyExists: 'Tenant already exists',
  TenantPurgePending: "The tenant's purge has not finished",
  PrincipalNotFound: 'Principal not found',
  CertificateNotFound: 'Certificate not found',
  CertificateAlreadyExists: 'Certificate already exists',
  MirrorUnavailable: 'Mirror unavailable',
  MirrorCorrupt: 'Mirror corrupt',
  LeaseExpired: 'Host lease expired',
  MirrorFenced: 'Mirror fenced by a newer owner',
  MirrorNotFound: 'Nothing mirrored',
  RestorePointUnavailable: 'Restore point unavailable',
  HostNotFound: 'Host not found',
  LeaseSuperseded: 'Host lease superseded',
  PlacementConflict: 'Placement changed meanwhile',
  TenantNotPlaced: 'Tenant not placed',
  HostUnavailable: 'Host cannot take tenants',
  HostNotEmpty: 'Host still has tenants',
  NoHostAvailable: 'No host available',
  TenantNotHere: 'Tenant not on this host',
  UnknownJobType: 'Unknown job type',
  InvalidJobPayload: 'Invalid job payload',
  JobNotFound: 'Job not found',
  BackupNotFound: 'Backup not found',
  BackupCorrupt: 'Backup corrupt',
  BackupKeyMismatch: 'Backup key mismatch',
  JobQueueUnavailable: 'Job queue unavailable',
  ControlStoreUnavailable: 'Control store unavailable',
  GatewayStopping: 'Gateway stopping',
  SubscriptionNotFound: 'Subscription not found',
  SubscriptionAlreadyExists: 'Subscription already exists',
  SubscriptionInUse: 'Subscription in use',
  SubscriptionTakenOver: 'Subscription taken over',
  StreamInterrupted: 'Stream interrupted',
};

/**
 * An error as a value: stable code, HTTP status, a message that tells the user
 * what to do, and optional structured details (e.g. both change vectors of a
 * conflict) that travel in the problem body.
 */
export class RookeryError extends Error {
  readonly code: ErrorCode;
  readonly status: number;
  readonly details: Readonly<Record<string, unknown>>;

  constructor(code: ErrorCode, message: string, details: Record<string, unknown> = {}) {
    super(message);
    this.name = 'RookeryError';
    this.code = code;
    this.status = ErrorCodes[code];
    this.details = details;
  }

  toProblem(): Problem {
    return {
      type: `https://rookery.dev/errors/${this.code}`,
      title: TITLES[this.code],
      status: this.status,
      detail: this.message,
      code: this.code,
      ...this.details,
      // What RavenDB's official clients read (ravendb.ts), last so that their `Type` wins over `type`.
      ...ravenErrorFields(this.code, this.status, this.message),
    };
  }

  /** Rebuilds an error from a problem body (used by clients and the gateway). */
  static fromProblem(problem: Problem): RookeryError {
    const { type: _t, title: _ti, status: _s, detail, code, ...rest } = problem;
    const known = (code in ErrorCodes ? code : 'InternalError') as ErrorCode;
    const details = Object.fromEntries(
      Object.entries(rest).filter(([key]) => !(RAVEN_ERROR_KEYS as readonly string[]).includes(key)),
    );
    return new RookeryError(known, detail, details);
  }
}

export function isRookeryError(value: unknown): value is RookeryError {
  return value instanceof RookeryError;
}

/** Turns a zod failure into a 400 that names the offending field and what was expected. */
export function invalidRequest(error: z.ZodError, what: string): RookeryError {
  const issues = error.issues.slice(0, 5).map((issue) => {
    const path = issue.path.length > 0 ? issue.path.join('.') : '(root)';
    return `${path}: ${issue.message}`;
  });
  return new RookeryError('InvalidRequest', `The ${what} is not valid. ${issues.join('; ')}.`, {
    issues: error.issues.slice(0, 20).map((i) => ({ path: i.path.map(String), message: i.message })),
  });
}
