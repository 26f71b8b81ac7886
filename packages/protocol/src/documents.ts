import { z } from 'zod';

/** Longest document id we accept, in UTF-8 bytes (RavenDB's limit too). */
export const MAX_ID_BYTES = 512;

/**
 * A document id: 1..512 UTF-8 bytes, no control characters, no leading or
 * trailing whitespace. Ids are case-insensitive but keep the case they were
 * stored with. A trailing `/` or `|` asks the server to generate the id.
 */
export const DocumentIdSchema = z
  .string()
  .min(1, 'a document id cannot be empty')
  .refine((id) => Buffer.byteLength(id, 'utf8') <= MAX_ID_BYTES, {
    message: `a document id must be at most ${MAX_ID_BYTES} bytes of UTF-8`,
  })
  // biome-ignore lint/suspicious/noControlCharactersInRegex: rejecting control characters is the point
  .refine((id) => !/[\u0000-\u001f\u007f]/.test(id), {
    message: 'a document id cannot contain control characters',
  })
  .refine((id) => id.trim() === id, { message: 'a document id cannot start or end with whitespace' });

/** ISO-8601 timestamp, as used by `@expires`, `@archive-at` and `@last-modified`. */
export const IsoDateSchema = z.iso.datetime({
  offset: true,
  message: 'expected an ISO-8601 date-time such as 2026-01-31T12:00:00Z',
});

/** Metadata keys the server owns: clients may send them, the server ignores and rewrites them. */
export const SERVER_METADATA_KEYS = ['@id', '@change-vector', '@last-modified', '@etag', '@flags'] as const;

/**
 * The `@metadata` a client may send. Unknown keys are the user's own and are
 * kept as they are.
 */
export const MetadataInputSchema = z
  .object({
    '@collection': z.string().min(1).max(256).optional(),
    '@expires': IsoDateSchema.optional(),
    '@archive-at': IsoDateSchema.optional(),
    /**
     * Server-maintained but writable, as in RavenDB: a document stored back with `@archived: true` stays
     * archived, one stored without it is not (that is how a PUT or a patch un-archives a document).
     */
    '@archived': z.boolean().optional(),
  })
  .catchall(z.unknown());
export type MetadataInput = z.infer<typeof MetadataInputSchema>;

/**
 * A document as a client sends it: any JSON object, with an optional `@metadata`
 * (parsed JSON has only string keys). Checked as such rather than
 * with z.record, which copies every key and value into a new object: on bulk
 * insert that copy cost ~0.5 µs of a ~6 µs line.
 */
export const DocumentInputSchema = z.custom<Record<string, unknown>>(
  (value) => typeof value === 'object' && value !== null && !Array.isArray(value),
  'expected a JSON object',
);
export type DocumentInput = z.infer<typeof DocumentInputSchema>;

/** The metadata of a stored document, as the server returns it (the user's own keys kept as they are). */
export const DocumentMetadataSchema = z.looseObject({
  '@id': z.string(),
  '@collection': z.string(),
  '@change-vector': z.string(),
  '@last-modified': z.string(),
  '@expires': z.string().optional(),
  '@archive-at': z.string().optional(),
  /** Present (true) on an archived document: stored compressed, left out of indexes that do not include archived ones. */
  '@archived': z.literal(true).optional(),
});
export type DocumentMetadata = z.infer<typeof DocumentMetadataSchema>;

/** A stored document as returned by the server. */
export const StoredDocumentSchema = z.looseObject({ '@metadata': DocumentMetadataSchema });
export type StoredDocument = z.infer<typeof StoredDocumentSchema>;

/** Documents whose `@collection` is not set live in this pseudo-collection (as in RavenDB). */
export const EMPTY_COLLECTION = '@empty';

/** `GET /databases/{db}/docs` response: null for an id that does not exist; includes by lower-cased id. */
export const GetDocumentsResponseSchema = z.object({
  Results: z.array(StoredDocumentSchema.nullable()),
  Includes: z.record(z.string(), StoredDocumentSchema.nullable()),
});
export type GetDocumentsResponse = z.infer<typeof GetDocumentsResponseSchema>;

/** `PUT /databases/{db}/docs` response (201; the change vector is the ETag too). */
export const PutDocumentResponseSchema = z.object({
  Id: z.string(),
  ChangeVector: z.string(),
  Collection: z.string(),
  LastModified: z.string(),
});
export type PutDocumentResponse = z.infer<typeof PutDocumentResponseSchema>;
