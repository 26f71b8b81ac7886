// Where backups are kept: a directory (the embedded default, `<data>/backups`, or a mounted
// volume) or an S3-compatible bucket, behind this one small interface. Keys are paths of safe
// segments (`<tenant>/<database>/<backup id>/<file>`); an object becomes visible only once it is
// written whole, so a reader never sees half a file.
import { RookeryError } from '@rookery/protocol';

export interface BackupStorage {
  /** Where the backups go, for logs. */
  readonly location: string;
  /** Writes an object from a stream; it is visible under `key` only once complete. Resolves with its size. */
  write(key: string, body: AsyncIterable<Buffer>): Promise<number>;
  /** The object's bytes, streamed; `BackupNotFound` when there is none. */
  read(key: string): AsyncIterable<Buffer>;
  /**
   * The keys under `prefix` (which ends with "/"), in name order. May include objects still being
   * written (or whose writer died) under a temporary name beside their key: the catalog counts a
   * backup complete only by its manifest, and deletes what an attempt that died left behind.
   */
  list(prefix: string): Promise<string[]>;
  /** Deletes every object under `prefix` (which ends with "/"). */
  removeAll(prefix: string): Promise<void>;
}

const SEGMENT = /^[A-Za-z0-9_][A-Za-z0-9._-]{0,199}$/;

/** Splits a key into its segments, refusing anything that could leave the storage's root. */
export function keySegments(key: string, what = 'key'): string[] {
  const segments = key.split('/');
  const trailing = segments.at(-1) === '' ? segments.slice(0, -1) : segments;
  if (trailing.length === 0 || !trailing.every((s) => SEGMENT.test(s))) {
    throw new RookeryError('InvalidRequest', `"${key}" is not a valid backup storage ${what}`);
  }
  return trailing;
}

/** `key` is relative to the storage's root; the location itself stays out (messages reach tenants). */
export function objectNotFound(key: string): RookeryError {
  return new RookeryError(
    'BackupNotFound',
    `The backup storage has no ${key}; the backup is incomplete or was deleted.`,
    {
      key,
    },
  );
}
