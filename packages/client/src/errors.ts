// Errors the client throws. Every one is a RookeryClientError with the server's stable `code` (or one of
// the client's own codes below), so callers can branch with `instanceof` on the common cases or on `code`
// for the rest. Server codes the client does not know yet still arrive as the base class, code intact.

/** Codes the client raises itself, beside the server's codes from @rookery/protocol's ErrorCodes. */
export type ClientErrorCode =
  /** The session made more requests than `maxNumberOfRequestsPerSession` (an N+1 loop, usually). */
  | 'TooManyRequestsInSession'
  /** `single()` found no result or more than one. */
  | 'NonUniqueResult'
  /** The server answered something that is not the documented shape (e.g. a proxy's HTML error page). */
  | 'UnexpectedResponse'
  /** The request never got an answer: connection refused, reset, TLS failure, timeout. */
  | 'ConnectionFailed'
  /** The store, the changes connection or the subscription worker was closed while in use. */
  | 'ClientClosed'
  /** The caller passed something the client cannot send (an entity without a collection and no id, …). */
  | 'InvalidArgument'
  /** An async iterator of live events fell too far behind its connection. */
  | 'ConsumerTooSlow';

export interface ErrorInit {
  code: string;
  /** The HTTP status, or null when there was no HTTP answer (a WebSocket close, a network failure). */
  status: number | null;
  detail: string;
  /** The problem body's extra members (e.g. both change vectors of a conflict). */
  details?: Record<string, unknown>;
  cause?: unknown;
}

export class RookeryClientError extends Error {
  readonly code: string;
  readonly status: number | null;
  readonly detail: string;
  readonly details: Readonly<Record<string, unknown>>;

  constructor(init: ErrorInit) {
    super(init.detail, init.cause === undefined ? undefined : { cause: init.cause });
    this.name = new.target.name;
    this.code = init.code;
    this.status = init.status;
    this.detail = init.detail;
    this.details = init.details ?? {};
  }
}

const text = (details: Readonly<Record<string, unknown>>, key: string): string | null =>
  typeof details[key] === 'string' ? (details[key] as string) : null;

/** A save named a change vector that is no longer the document's (409 ConcurrencyConflict). */
export class ConcurrencyConflictError extends RookeryClientError {
  /** The document whose change vector did not match. */
  get documentId(): string | null {
    return text(this.details, 'id');
  }
  get expectedChangeVector(): string | null {
    return text(this.details, 'expectedChangeVector');
  }
  get actualChangeVector(): string | null {
    return text(this.details, 'actualChangeVector');
  }
}

/** A person's certificate without an open two-factor session: call `store.authenticateTwoFactor(code)`. */
export class TwoFactorRequiredError extends RookeryClientError {}
/** Only surfaces from raw requests: `session.load` answers null for a missing document. */
export class DocumentNotFoundError extends RookeryClientError {}
export class DatabaseNotFoundError extends RookeryClientError {}
export class IndexNotFoundError extends RookeryClientError {}
export class InvalidQueryError extends RookeryClientError {}
export class CertificateRevokedError extends RookeryClientError {}
export class SubscriptionNotFoundError extends RookeryClientError {}
export class SubscriptionInUseError extends RookeryClientError {}
export class SubscriptionTakenOverError extends RookeryClientError {}
/** A stream ended without its `@end` line, or with an `@error` line whose code is StreamInterrupted. */
export class StreamInterruptedError extends RookeryClientError {}
/** The tenant (or the database) is starting, stopping or restarting: retried within a bounded wait first. */
export class TenantUnavailableError extends RookeryClientError {}
export class NonUniqueResultError extends RookeryClientError {}
export class TooManyRequestsInSessionError extends RookeryClientError {}
/** 429 TooManyLiveConnections: the tenant holds as many WebSockets or streams open as the gateway allows. */
export class TooManyLiveConnectionsError extends RookeryClientError {}

/** 429 RateLimited: the tenant is over its request rate. */
export class RateLimitedError extends RookeryClientError {
  /** Seconds the server asked to wait (its Retry-After header), when it said. */
  readonly retryAfterSeconds: number | null;

  constructor(init: ErrorInit & { retryAfterSeconds?: number | null }) {
    super(init);
    this.retryAfterSeconds = init.retryAfterSeconds ?? null;
  }
}

type ErrorClass = new (init: ErrorInit & { retryAfterSeconds?: number | null }) => RookeryClientError;

/** Which class a code maps to; codes not listed here arrive as RookeryClientError. */
const CLASS_BY_CODE: Readonly<Record<string, ErrorClass>> = {
  ConcurrencyConflict: ConcurrencyConflictError,
  TwoFactorRequired: TwoFactorRequiredError,
  DocumentNotFound: DocumentNotFoundError,
  DatabaseNotFound: DatabaseNotFoundError,
  IndexNotFound: IndexNotFoundError,
  InvalidQuery: InvalidQueryError,
  RateLimited: RateLimitedError,
  TenantStarting: TenantUnavailableError,
  TenantUnavailable: TenantUnavailableError,
  DatabaseUnavailable: TenantUnavailableError,
  CertificateRevoked: CertificateRevokedError,
  SubscriptionNotFound: SubscriptionNotFoundError,
  SubscriptionInUse: SubscriptionInUseError,
  SubscriptionTakenOver: SubscriptionTakenOverError,
  StreamInterrupted: StreamInterruptedError,
  NonUniqueResult: NonUniqueResultError,
  TooManyRequestsInSession: TooManyRequestsInSessionError,
  TooManyLiveConnections: TooManyLiveConnectionsError,
};

/** The typed error for a code: the mapped subclass, or the base class for codes this client does not know. */
export function errorForCode(init: ErrorInit & { retryAfterSeconds?: number | null }): RookeryClientError {
  const ErrorType = CLASS_BY_CODE[init.code] ?? RookeryClientError;
  return new ErrorType(init);
}

/** A client-side error (no HTTP status), typed by its code like the server's. */
export function clientError(code: ClientErrorCode, detail: string, cause?: unknown): RookeryClientError {
  return errorForCode({ code, status: null, detail, cause });
}
