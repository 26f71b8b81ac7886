// @rookery/client: the TypeScript SDK of Rookery. Everything a program may use is exported here.
export type { AggressiveCacheHandle } from './aggressive-cache-handle.js';
export type { BulkInsertItem, BulkInsertResult } from './bulk-insert.js';
export { DEFAULT_CONVENTIONS, type DocumentConventions, pluralize } from './conventions.js';
export { DocumentStore, type DocumentStoreOptions, type TwoFactorOptions } from './document-store.js';
export {
  CertificateRevokedError,
  type ClientErrorCode,
  ConcurrencyConflictError,
  DatabaseNotFoundError,
  DocumentNotFoundError,
  IndexNotFoundError,
  InvalidQueryError,
  NonUniqueResultError,
  RateLimitedError,
  RookeryClientError,
  StreamInterruptedError,
  SubscriptionInUseError,
  SubscriptionNotFoundError,
  SubscriptionTakenOverError,
  TenantUnavailableError,
  TooManyLiveConnectionsError,
  TooManyRequestsInSessionError,
  TwoFactorRequiredError,
} from './errors.js';
export type { RequestCounters } from './http/request-executor.js';
export type { ChangesObservable } from './live/changes-observable.js';
export type { ChangesEvents, ConnectionStatus, DatabaseChanges } from './live/database-changes.js';
export type { DocumentChange, IndexChange } from './live/frames.js';
export type {
  AggregationQuery,
  DocumentQuery,
  QueryStatistics,
  SuggestionQuery,
} from './query/document-query.js';
export {
  type Facet,
  FacetRange,
  type FieldFacetOptions,
  facet,
  range,
  rangeFacet,
  type SuggestionRequest,
} from './query/facets.js';
export type { OrderingType, QuerySource, QueryValue } from './query/query-builder.js';
export type {
  DocumentSession,
  DocumentStreamOptions,
  LoadOptions,
  SessionAdvanced,
  SessionOptions,
  StoreOptions,
} from './session/document-session.js';
export type { EntityType, Metadata } from './session/tracked-documents.js';
export type { DocumentStream, StreamEnd, StreamResult } from './streaming/document-stream.js';
export type { DocumentSubscriptions, SubscriptionCreation } from './subscriptions/document-subscriptions.js';
export type {
  SubscriptionBatch,
  SubscriptionItem,
  SubscriptionWorker,
  SubscriptionWorkerOptions,
} from './subscriptions/subscription-worker.js';
export type { ClientCertificate } from './tls-options.js';
