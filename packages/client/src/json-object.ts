/** A plain JSON object (not null, not an array): what documents, metadata and NDJSON lines must be. */
export function isJsonObject(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}
