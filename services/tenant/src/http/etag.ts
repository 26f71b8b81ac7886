import { createHash } from 'node:crypto';

/** A strong entity tag for a list of versions (change vectors, etags). */
export function entityTag(parts: readonly (string | number | null)[]): string {
  if (parts.length === 1 && typeof parts[0] === 'string') return `"${parts[0]}"`;
  const hash = createHash('sha1');
  for (const part of parts) hash.update(`${part ?? 'null'}\n`);
  return `"${hash.digest('base64url')}"`;
}

/** RFC 9110 If-None-Match: `*`, or a comma-separated list of (possibly weak) tags. */
export function ifNoneMatch(header: string | undefined, tag: string): boolean {
  if (header === undefined) return false;
  if (header.trim() === '*') return true;
  return header.split(',').some((candidate) => candidate.trim().replace(/^W\//, '') === tag);
}

/** The change vector a client expects, from an `If-Match` header (quotes optional). */
export function expectedFromIfMatch(header: string | undefined): string | undefined {
  if (header === undefined) return undefined;
  return header
    .trim()
    .replace(/^W\//, '')
    .replace(/^"(.*)"$/, '$1');
}
