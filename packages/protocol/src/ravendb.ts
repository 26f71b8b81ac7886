// The parts of RavenDB's wire dialect that Rookery speaks so that the official RavenDB clients work unchanged
// (docs/ravendb-compatibility.md): the header that tells such a client apart, its zone-less dates, the exception
// type names its ExceptionDispatcher maps errors by, and the shape of a batch's results it reads.
import { z } from 'zod';
import type { CommandResult } from './commands.js';
import type { ErrorCode } from './errors.js';

/**
 * Sent by RavenDB's official clients on every request (`Raven-Client-Version: 7.2.3`). Answers whose RavenDB
 * shape would disturb Rookery's own clients (a batch's results, which that client copies into each document's
 * metadata) take the RavenDB shape only for requests that carry it.
 */
export const RAVEN_CLIENT_VERSION_FIELD = 'raven-client-version';

/** The header of RavenDB's answer for a database that does not exist (a 503, which its clients expect). */
export const RAVEN_DATABASE_MISSING_FIELD = 'database-missing';

/** True when the request comes from one of RavenDB's official clients (see RAVEN_CLIENT_VERSION_FIELD). */
export function isRavenClient(headers: Readonly<Record<string, string | string[] | undefined>>): boolean {
  return headers[RAVEN_CLIENT_VERSION_FIELD] !== undefined;
}

/**
 * A date as RavenDB's clients write it in query strings: ISO-8601, with up to seven fractional digits and
 * without a zone (`0001-02-01T00:00:00.0000000`, read as UTC), or with one. Parsed to epoch milliseconds.
 */
export const RavenDateSchema = z
  .string()
  .regex(
    /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}(\.\d{1,7})?(Z|[+-]\d{2}:\d{2})?$/,
    'expected an ISO-8601 date-time such as 2026-01-31T12:00:00.0000000 (UTC when it has no zone)',
  )
  .transform((text, context) => {
    const zoned = /(Z|[+-]\d{2}:\d{2})$/.test(text) ? text : `${text}Z`;
    // JavaScript dates keep milliseconds: the 4th to 7th fractional digits are dropped.
    const ms = Date.parse(zoned.replace(/(\.\d{3})\d+/, '$1'));
    if (Number.isNaN(ms)) {
      context.addIssue({ code: 'custom', message: `${text} is not a date` });
      return z.NEVER;
    }
    return ms;
  });

/**
 * The exception type RavenDB's clients expect for each error code (`Raven.Client.Exceptions.…`; the client
 * throws the last segment as its error's name). Codes without a RavenDB counterpart are named
 * `Rookery.<code>`, which the client reports as a RavenException carrying Rookery's message.
 */
const RAVEN_EXCEPTION_TYPES: Partial<Record<ErrorCode, string>> = {
  ConcurrencyConflict: 'Raven.Client.Exceptions.ConcurrencyException',
  DatabaseNotFound: 'Raven.Client.Exceptions.Database.DatabaseDoesNotExistException',
  DocumentNotFound: 'Raven.Client.Exceptions.Documents.DocumentDoesNotExistException',
  IndexNotFound: 'Raven.Client.Exceptions.Documents.Indexes.IndexDoesNotExistException',
  InvalidIndexDefinition: 'Raven.Client.Exceptions.Documents.Compilation.IndexCompilationException',
  InvalidQuery: 'Raven.Client.Exceptions.InvalidQueryException',
  StaleResultsTimeout: 'System.TimeoutException',
  CollectionChangeNotAllowed: 'Raven.Client.Exceptions.Documents.DocumentCollectionMismatchException',
  SubscriptionNotFound: 'Raven.Client.Exceptions.Documents.Subscriptions.SubscriptionDoesNotExistException',
  SubscriptionInUse: 'Raven.Client.Exceptions.Documents.Subscriptions.SubscriptionInUseException',
  // The subscription worker stops on this type (others it retries for ever): it is told once, and why.
  RavenTcpNotSupported: 'Raven.Client.Exceptions.Documents.Subscriptions.SubscriptionInvalidStateException',
  StorageQuotaExceeded: 'Raven.Client.Exceptions.QuotaException',
  CertificateRequired: 'Raven.Client.Exceptions.Security.AuthenticationException',
  CertificateNotRecognised: 'Raven.Client.Exceptions.Security.AuthenticationException',
  CertificateRevoked: 'Raven.Client.Exceptions.Security.AuthenticationException',
  CertificateExpired: 'Raven.Client.Exceptions.Security.AuthenticationException',
  TwoFactorRequired: 'Raven.Client.Exceptions.Security.AuthenticationException',
  Forbidden: 'Raven.Client.Exceptions.Security.AuthorizationException',
};

/**
 * The fields RavenDB's ExceptionDispatcher reads from an error body: `Type` (mapped above; any other 400 is a
 * BadRequestException), `Message` and `Error` (Rookery's message). They follow Rookery's problem fields: the
 * client camel-cases keys as it parses, so `Type` must come after the problem's own `type` to win.
 */
export function ravenErrorFields(
  code: ErrorCode,
  status: number,
  message: string,
): { Type: string; Message: string; Error: string } {
  const type =
    RAVEN_EXCEPTION_TYPES[code] ??
    (status === 400 ? 'Raven.Client.Exceptions.BadRequestException' : `Rookery.${code}`);
  return { Type: type, Message: message, Error: message };
}

/** The keys ravenErrorFields adds to a problem body (dropped again when a problem is read back). */
export const RAVEN_ERROR_KEYS = ['Type', 'Message', 'Error'] as const;

/**
 * One result of `bulk_docs` as RavenDB's clients read it: a PUT carries the stored document's metadata
 * (`@id`, `@change-vector`, `@collection`, `@last-modified`), which the client copies, every key of it, into
 * its session's copy of the document's metadata; so a PUT carries nothing else. DELETE and PATCH keep
 * Rookery's keys (`Id`, `ChangeVector`, `LastModified`, which the client reads camel-cased).
 */
export function toRavenCommandResult(result: CommandResult): Record<string, unknown> {
  if (result.Type !== 'PUT') return { ...result };
  return {
    Type: 'PUT',
    '@id': result.Id,
    '@change-vector': result.ChangeVector,
    // A document outside any collection has none: the client would send back whatever it was given here.
    ...(result.Collection !== null && { '@collection': result.Collection }),
    '@last-modified': result.LastModified,
  };
}
