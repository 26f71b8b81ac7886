import { z } from 'zod';
import { DocumentIdSchema } from './documents.js';
import { type QueryParameters, QueryParametersSchema, QueryRequestSchema } from './queries.js';

// Live data: the changes feed, NDJSON streams and subscriptions. docs/live-data.md describes the wire
// protocol these schemas check; the tenant serves it, the gateway carries it, @rookery/client speaks it.

/** A WebSocket text frame larger than this is refused (close 1009): commands and acks are small. */
export const MAX_LIVE_FRAME_BYTES = 64 * 1024;

/** The server pings every WebSocket this often; a peer that misses two pings is considered gone. */
export const LIVE_PING_INTERVAL_MS = 5_000;

/** WebSocket close codes the server uses, beside the standard ones (1000 normal, 1001 going away, 1009 too big). */
export const LiveCloseCodes = {
  /** A command or ack that does not parse, or is not expected now. */
  ProtocolError: 4400,
  /** The subscription does not exist (or was deleted while connected). */
  SubscriptionNotFound: 4404,
  /** Another consumer holds the subscription (strategy OpenIfFree). */
  SubscriptionInUse: 4409,
  /** A newer consumer took the subscription over (strategy TakeOver). */
  SubscriptionTakenOver: 4410,
  /** The database was deleted or the tenant is stopping. */
  DatabaseUnavailable: 4503,
} as const;

// ---------------------------------------------------------------------------------------------------------
// Changes: GET /databases/{db}/changes (WebSocket)

const NameParam = z.string().min(1).max(512);

/** What a changes connection asks for. Every command is answered by a `Confirm` with its `CommandId`. */
export const ChangesCommandSchema = z.discriminatedUnion('Command', [
  z.object({
    Command: z.enum(['watch-doc', 'unwatch-doc']),
    Param: DocumentIdSchema,
    CommandId: z.number().int(),
  }),
  z.object({
    Command: z.enum(['watch-collection', 'unwatch-collection']),
    Param: NameParam,
    CommandId: z.number().int(),
  }),
  z.object({
    Command: z.enum(['watch-prefix', 'unwatch-prefix']),
    Param: NameParam,
    CommandId: z.number().int(),
  }),
  z.object({
    Command: z.enum(['watch-index', 'unwatch-index']),
    Param: NameParam,
    CommandId: z.number().int(),
  }),
  z.object({
    // `watch-docs` and `watch-indexes` (and their unwatch) are RavenDB's clients' names for watching every document, every index.
    Command: z.enum([
      'watch-all-docs',
      'unwatch-all-docs',
      'watch-docs',
      'unwatch-docs',
      'watch-all-indexes',
      'unwatch-all-indexes',
      'watch-indexes',
      'unwatch-indexes',
    ]),
    CommandId: z.number().int(),
  }),
]);
export type ChangesCommand = z.infer<typeof ChangesCommandSchema>;

export type DocumentChangeType = 'Put' | 'Delete';

export interface DocumentChangeNotification {
  Type: 'DocumentChange';
  Value: {
    Id: string;
    Collection: string;
    /** The same as Collection: the name RavenDB's clients read. */
    CollectionName: string;
    ChangeVector: string;
    Type: DocumentChangeType;
    Etag: number;
  };
}

export type IndexChangeType = 'BatchCompleted' | 'IndexAdded' | 'IndexRemoved';

export interface IndexChangeNotification {
  Type: 'IndexChange';
  Value: { Name: string; Type: IndexChangeType; Etag: number };
}

/** Every server frame on a changes connection. */
export type ChangesServerMessage =
  | { Type: 'Confirm'; CommandId: number }
  | DocumentChangeNotification
  | IndexChangeNotification
  | {
      Type: 'Error';
      Code: string;
      Message: string;
      /** The same as Message: what RavenDB's clients read from an Error frame. */
      Exception: string;
      CommandId?: number;
    };

// ---------------------------------------------------------------------------------------------------------
// Streams: GET /databases/{db}/streams/docs and POST|GET /databases/{db}/streams/queries (NDJSON)

/**
 * `GET /databases/{db}/streams/docs?startsWith=…&startAfter=…&pageSize=…` streams documents in id order
 * (startsWith/startAfter), or `?collection=…` streams a collection in etag order.
 */
export const DocumentStreamQuerySchema = z
  .object({
    startsWith: z.string().max(512).optional(),
    startAfter: z.string().max(512).optional(),
    collection: z.string().min(1).max(256).optional(),
    pageSize: z.coerce.number().int().min(1).max(100_000_000).optional(),
    /** `jsonl`: RavenDB's framing (docs/ravendb-compatibility.md), which its clients ask for; absent: Rookery's. */
    format: z
      .literal('jsonl', { message: 'the only stream format is "jsonl" (or none, for NDJSON)' })
      .optional(),
  })
  .strict();
export type DocumentStreamQuery = z.infer<typeof DocumentStreamQuerySchema>;

/** `POST /databases/{db}/streams/queries` body: a query, streamed instead of paged. */
export const StreamQueryRequestSchema = QueryRequestSchema;

/** `POST /databases/{db}/streams/queries?format=jsonl`: RavenDB's framing, as for streams/docs. */
export const StreamQueryFormatSchema = z.object({ format: DocumentStreamQuerySchema.shape.format });

/**
 * The last line of every NDJSON stream. A stream that ends without it was cut short (the client reports
 * that as an error instead of handing out a partial result as complete).
 */
export interface StreamEndLine {
  '@end': { Count: number; IndexName?: string | null; TotalResults?: number };
}

/** A line sent in place of `@end` when the stream fails after its headers left (e.g. the database closed). */
export interface StreamErrorLine {
  '@error': { code: string; detail: string };
}

// ---------------------------------------------------------------------------------------------------------
// Subscriptions: /databases/{db}/subscriptions[/{name}] (HTTP) and …/{name}/connect (WebSocket)

export const SubscriptionNameSchema = z
  .string()
  .min(1)
  .max(128)
  .regex(/^[A-Za-z0-9][A-Za-z0-9._-]*$/, 'a subscription name uses letters, digits, ".", "_" and "-"');

/** `PUT /databases/{db}/subscriptions` body. The query is `from Collection [where …]`. */
export const SubscriptionCreateSchema = z
  .object({
    Name: SubscriptionNameSchema,
    Query: z
      .string()
      .min(1)
      .max(64 * 1024),
    /** The values of the query's `$name` references, as a query takes them; stored with the subscription. */
    QueryParameters: QueryParametersSchema.optional(),
    /** Where the subscription starts: every existing document (default), or only changes after now. */
    StartFrom: z.enum(['Beginning', 'Now']).optional(),
  })
  .strict();
export type SubscriptionCreate = z.infer<typeof SubscriptionCreateSchema>;

/** A subscription as `GET /databases/{db}/subscriptions[/{name}]` returns it. */
export interface SubscriptionState {
  Name: string;
  Query: string;
  /** The values its query's `$name` references read (`{}` when it has none). */
  QueryParameters: QueryParameters;
  /** The etag of the last document the consumer acknowledged (its batch's last etag). */
  LastAcknowledgedEtag: number;
  CreatedAt: string;
  LastAcknowledgedAt: string | null;
  /** Whether a consumer is connected now. */
  Connected: boolean;
}

export const SubscriptionStrategySchema = z.enum(['OpenIfFree', 'TakeOver', 'WaitForFree']);
export type SubscriptionStrategy = z.infer<typeof SubscriptionStrategySchema>;

/** `…/subscriptions/{name}/connect?strategy=…&batchSize=…&maxWaitMs=…` */
export const SubscriptionConnectQuerySchema = z
  .object({
    strategy: SubscriptionStrategySchema.optional(),
    /** Most documents in one batch (default 256). */
    batchSize: z.coerce.number().int().min(1).max(10_000).optional(),
    /** How long the server holds a partial batch for more matching documents before sending it (default 0). */
    maxWaitMs: z.coerce.number().int().min(0).max(60_000).optional(),
  })
  .strict();
export type SubscriptionConnectQuery = z.infer<typeof SubscriptionConnectQuerySchema>;

export interface SubscriptionItem {
  Id: string;
  ChangeVector: string;
  /** The document with its `@metadata`. */
  Document: Record<string, unknown>;
}

export type SubscriptionServerMessage =
  | { Type: 'Connected'; Name: string; LastAcknowledgedEtag: number }
  | { Type: 'Batch'; BatchId: number; LastEtag: number; Items: SubscriptionItem[] }
  | { Type: 'Error'; Code: string; Message: string };

/** The consumer's only message: the batch it processed. The server sends the next batch after it. */
export const SubscriptionAckSchema = z
  .object({ Type: z.literal('Ack'), BatchId: z.number().int().min(0) })
  .strict();
export type SubscriptionAck = z.infer<typeof SubscriptionAckSchema>;
