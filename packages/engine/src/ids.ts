import { RookeryError } from '@rookery/protocol';

/** The single node tag of a single-node database, used in generated ids (`users/1-A`). */
export const NODE_TAG = 'A';

/**
 * Ids compare case-insensitively. `toLowerCase` applies Unicode's default
 * (locale-independent) case mapping, so the key is the same on every machine.
 */
export function idKey(id: string): string {
  return id.toLowerCase();
}

export type IdRequest =
  | { kind: 'exact'; id: string }
  | { kind: 'hilo'; prefix: string; tag: string }
  | { kind: 'identity'; prefix: string; tag: string };

/**
 * `users/` asks the server for a HiLo id (`users/17-A`); `users|` asks for the
 * next identity (`users/17`); anything else is taken as it is.
 */
export function classifyId(id: string): IdRequest {
  const last = id[id.length - 1];
  if (last !== '/' && last !== '|') return { kind: 'exact', id };
  const stem = id.slice(0, -1);
  if (stem.length === 0 || stem.endsWith('/') || stem.endsWith('|')) {
    throw new RookeryError(
      'InvalidId',
      `"${id}" asks for a generated id but has no prefix; use a prefix such as "users/" or "users|"`,
      { id },
    );
  }
  const tag = idKey(stem);
  return last === '/'
    ? { kind: 'hilo', prefix: `${stem}/`, tag }
    : { kind: 'identity', prefix: `${stem}/`, tag };
}
