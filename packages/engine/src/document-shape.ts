import { EMPTY_COLLECTION, MetadataInputSchema, RookeryError, SERVER_METADATA_KEYS } from '@rookery/protocol';
import { compressBody, decodeBody, encodeBody } from './compression.js';
import type { DocumentRow } from './storage/statements.js';

/**
 * Bit in `docs.flags`: the document is archived. Its body is then always compressed, it shows
 * `@archived: true` in its metadata, and indexes that do not include archived documents drop it.
 */
export const FLAG_ARCHIVED = 2;

export const isArchived = (flags: number): boolean => (flags & FLAG_ARCHIVED) !== 0;

/** A document split into what docs.db stores in separate columns. */
export interface PreparedDocument {
  bodyJson: string;
  /** The user's own metadata (including `@expires` / `@archive-at`), without server-owned keys; null when empty. */
  metadataJson: string | null;
  /** `@collection` as the client wrote it, or undefined. */
  collection: string | undefined;
  expiresAt: number | null;
  archiveAt: number | null;
  /** `@archived: true` was sent: the document is stored archived. */
  archived: boolean;
}

/** Kept in columns and flags rather than in the stored metadata text. */
const DROPPED_KEYS = new Set<string>([...SERVER_METADATA_KEYS, '@collection', '@archived']);

export function prepareDocument(id: string, input: Record<string, unknown>): PreparedDocument {
  const { '@metadata': rawMetadata, ...body } = input;
  if (rawMetadata === undefined) {
    return {
      bodyJson: JSON.stringify(body),
      metadataJson: null,
      collection: undefined,
      expiresAt: null,
      archiveAt: null,
      archived: false,
    };
  }
  if (typeof rawMetadata !== 'object' || rawMetadata === null || Array.isArray(rawMetadata)) {
    throw new RookeryError('InvalidMetadata', `The @metadata of ${id} must be a JSON object`, { id });
  }
  // Fast path for the common case, metadata that only names the collection; anything else goes through the schema.
  const keys = Object.keys(rawMetadata);
  const collection = (rawMetadata as Record<string, unknown>)['@collection'];
  if (
    keys.length === 1 &&
    typeof collection === 'string' &&
    collection.length > 0 &&
    collection.length <= 256
  ) {
    return {
      bodyJson: JSON.stringify(body),
      metadataJson: null,
      collection,
      expiresAt: null,
      archiveAt: null,
      archived: false,
    };
  }
  const parsed = MetadataInputSchema.safeParse(rawMetadata);
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    throw new RookeryError(
      'InvalidMetadata',
      `The @metadata of ${id} is not valid: ${issue.path.join('.')}: ${issue.message}`,
      { id, path: issue.path.map(String) },
    );
  }
  const metadata = parsed.data;
  const archived = metadata['@archived'] === true;
  const userMetadata: Record<string, unknown> = {};
  let hasUserMetadata = false;
  for (const [key, value] of Object.entries(metadata)) {
    if (DROPPED_KEYS.has(key) || value === undefined) continue;
    // Archiving consumes `@archive-at` (as in RavenDB): an archived document has nothing left to schedule.
    if (archived && key === '@archive-at') continue;
    userMetadata[key] = value;
    hasUserMetadata = true;
  }
  return {
    bodyJson: JSON.stringify(body),
    metadataJson: hasUserMetadata ? JSON.stringify(userMetadata) : null,
    collection: metadata['@collection'],
    expiresAt: metadata['@expires'] ? Date.parse(metadata['@expires']) : null,
    archiveAt: metadata['@archive-at'] && !archived ? Date.parse(metadata['@archive-at']) : null,
    archived,
  };
}

/** The stored form of a prepared body: archived bodies are always compressed, others above the threshold. */
export function storedBody(
  prepared: PreparedDocument,
  compressionThresholdBytes: number,
): { body: string | Buffer; flags: number } {
  if (!prepared.archived) return encodeBody(prepared.bodyJson, compressionThresholdBytes);
  const { body, flags } = compressBody(prepared.bodyJson);
  return { body, flags: flags | FLAG_ARCHIVED };
}

export function changeVectorOf(etag: number, databaseId: string): string {
  return `A:${etag}-${databaseId}`;
}

/**
 * Builds the JSON text of a stored document by splicing `@metadata` into the
 * stored body: no parse and re-serialise of the body on the read path.
 */
export function documentJsonOf(row: DocumentRow, databaseId: string): string {
  const bodyJson = decodeBody(row.body, row.flags);
  let meta =
    `{"@collection":${JSON.stringify(row.collection)},"@change-vector":"${changeVectorOf(row.etag, databaseId)}",` +
    `"@id":${JSON.stringify(row.id)},"@last-modified":"${new Date(row.last_modified).toISOString()}"`;
  if (isArchived(row.flags)) meta += ',"@archived":true';
  if (row.metadata !== null) meta += `,${row.metadata.slice(1, -1)}`;
  meta += '}';
  return bodyJson === '{}' ? `{"@metadata":${meta}}` : `${bodyJson.slice(0, -1)},"@metadata":${meta}}`;
}

export { EMPTY_COLLECTION };
