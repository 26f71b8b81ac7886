import { EMPTY_COLLECTION, MetadataInputSchema, RookeryError, SERVER_METADATA_KEYS } from '@rookery/protocol';

/** A document split into what docs.db stores in separate columns. */
export interface PreparedDocument {
  bodyJson: string;
  /** The user's own metadata (including `@expires` / `@archive-at`), without server-owned keys; null when empty. */
  metadataJson: string | null;
  /** `@collection` as the client wrote it, or undefined. */
  collection: string | undefined;
  expiresAt: number | null;
  archiveAt: number | null;
}

const DROPPED_KEYS = new Set<string>([...SERVER_METADATA_KEYS, '@collection']);

export function prepareDocument(id: string, input: Record<string, unknown>): PreparedDocument {
  const { '@metadata': rawMetadata, ...body } = input;
  if (rawMetadata === undefined) {
    return {
      bodyJson: JSON.stringify(body),
      metadataJson: null,
      collection: undefined,
      expiresAt: null,
      archiveAt: null,
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
  const userMetadata: Record<string, unknown> = {};
  let hasUserMetadata = false;
  for (const [key, value] of Object.entries(metadata)) {
    if (DROPPED_KEYS.has(key) || value === undefined) continue;
    userMetadata[key] = value;
    hasUserMetadata = true;
  }
  return {
    bodyJson: JSON.stringify(body),
    metadataJson: hasUserMetadata ? JSON.stringify(userMetadata) : null,
    collection: metadata['@collection'],
    expiresAt: metadata['@expires'] ? Date.parse(metadata['@expires']) : null,
    archiveAt: metadata['@archive-at'] ? Date.parse(metadata['@archive-at']) : null,
  };
}

export function changeVectorOf(etag: number, databaseId: string): string {
  return `A:${etag}-${databaseId}`;
}

export interface DocumentRowHead {
  id: string;
  collection: string;
  etag: number;
  lastModified: number;
  metadata: string | null;
}

/**
 * Builds the JSON text of a stored document by splicing `@metadata` into the
 * stored body: no parse and re-serialise of the body on the read path.
 */
export function assembleDocumentJson(row: DocumentRowHead, bodyJson: string, databaseId: string): string {
  let meta =
    `{"@collection":${JSON.stringify(row.collection)},"@change-vector":"${changeVectorOf(row.etag, databaseId)}",` +
    `"@id":${JSON.stringify(row.id)},"@last-modified":"${new Date(row.lastModified).toISOString()}"`;
  if (row.metadata !== null) meta += `,${row.metadata.slice(1, -1)}`;
  meta += '}';
  return bodyJson === '{}' ? `{"@metadata":${meta}}` : `${bodyJson.slice(0, -1)},"@metadata":${meta}}`;
}

export { EMPTY_COLLECTION };
