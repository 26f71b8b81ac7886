// RavenDB's TCP protocol as its clients' subscription workers speak it (ravendb 7.x:
// ServerWide/Tcp/TcpNegotiation, Documents/Subscriptions/AbstractSubscriptionWorker; the server's side is
// Raven.Server's TcpConnectionHeaderMessage and SubscriptionConnection). Every message either way is one JSON
// object, written back to back with nothing between them. The gateway serves it (services/gateway/src/
// ravendb-tcp/) and carries each subscription onto Rookery's own WebSocket (live.ts).
import { z } from 'zod';

/** The operation a connection is for; Rookery serves subscriptions only. */
export const RAVEN_TCP_SUBSCRIPTION = 'Subscription';

/**
 * Subscription protocol versions a client may propose, newest first (TcpConnectionHeaderMessage's list).
 * Rookery answers them all the same way: documents only, no includes, no compression.
 */
export const RAVEN_SUBSCRIPTION_VERSIONS = [53_000, 51_000, 50_000, 41_400, 40] as const;

/** The first message of a connection (TcpConnectionHeaderMessage), sent again for each version proposed. */
export const RavenTcpHeaderSchema = z.object({
  DatabaseName: z.string().min(1).max(256).nullish(),
  Operation: z.string().min(1).max(64),
  SourceNodeTag: z.string().max(64).nullish(),
  OperationVersion: z.number().int(),
  AuthorizeInfo: z.unknown().optional(),
  LicensedFeatures: z.object({ DataCompression: z.boolean().optional() }).passthrough().nullish(),
});
export type RavenTcpHeader = z.infer<typeof RavenTcpHeaderSchema>;

/** The server's answer to a header (TcpConnectionHeaderResponse). */
export interface RavenTcpHeaderResponse {
  Status: 'Ok' | 'AuthorizationFailed' | 'TcpVersionMismatch';
  Version: number;
  Message?: string;
  LicensedFeatures?: { DataCompression: boolean };
}

/** A .NET TimeSpan as the client writes one (`00:00:05`, `1.00:00:00.5000000`). */
const TimeSpanSchema = z.string().max(32).nullish();

/** The worker's options, its second message (SubscriptionConnectionOptions as the client sends them). */
export const RavenSubscriptionOptionsSchema = z.object({
  SubscriptionName: z.string().min(1).max(256),
  TimeToWaitBeforeConnectionRetry: TimeSpanSchema,
  IgnoreSubscriberErrors: z.boolean().nullish(),
  Strategy: z.enum(['OpenIfFree', 'TakeOver', 'WaitForFree', 'Concurrent']).nullish(),
  MaxDocsPerBatch: z.number().int().min(1).nullish(),
  MaxErroneousPeriod: TimeSpanSchema,
  CloseWhenNoDocsLeft: z.boolean().nullish(),
});
export type RavenSubscriptionOptions = z.infer<typeof RavenSubscriptionOptionsSchema>;

/** What the worker sends once connected: an acknowledgement of the batch it processed. */
export const RavenSubscriptionClientMessageSchema = z.object({
  Type: z.enum(['Acknowledge', 'None', 'DisposedNotification', 'CloseBatch']),
  ChangeVector: z.string().max(4096).nullish(),
});
export type RavenSubscriptionClientMessage = z.infer<typeof RavenSubscriptionClientMessageSchema>;

/** ConnectionStatus statuses the client reads (`Accepted`, or why it stops or retries). */
export type RavenConnectionStatus = 'Accepted' | 'InUse' | 'Closed' | 'NotFound' | 'Invalid';

/** What the server sends on a subscription connection (SubscriptionConnectionServerMessage). */
export type RavenSubscriptionServerMessage =
  | {
      Type: 'ConnectionStatus';
      Status: RavenConnectionStatus;
      Message?: string;
      Exception?: string;
      Data?: Record<string, unknown>;
    }
  | { Type: 'Data'; Data: Record<string, unknown> }
  | { Type: 'EndOfBatch' }
  | { Type: 'Confirm' }
  | { Type: 'Error'; Message: string; Exception: string };
