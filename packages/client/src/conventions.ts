// How the client maps entities to documents and how hard it tries. Every field has a default that suits
// one program talking to one database; DocumentStore takes overrides for any of them.
import { DEFAULT_RETRY_OPTIONS, type RetryOptions } from './http/retry-policy.js';

export interface DocumentConventions extends RetryOptions {
  /**
   * The collection of an entity stored without an explicit `@metadata.@collection`: by default its class
   * name in the plural (`User` → `Users`); null for plain objects, which then need an id or a collection.
   */
  findCollectionName(entity: object): string | null;
  /** The id prefix and HiLo tag of a collection: `Users` → `users` (ids `users/1-A`). */
  transformCollectionToPrefix(collection: string): string;
  /** The entity property that holds its id (set on store and load, never stored in the document); null for none. */
  identityProperty: string | null;
  /** Send the loaded change vector with every save, so a concurrent change fails it (ConcurrencyConflictError). */
  useOptimisticConcurrency: boolean;
  /** A session that needs more requests than this is probably in an N+1 loop: it throws instead. */
  maxNumberOfRequestsPerSession: number;
  /** The HTTP cache's budget in bytes (bodies as held in memory). */
  maxHttpCacheBytes: number;
  /** Queries whose URL would be longer than this go as POST (still cached, keyed by their body). */
  maxQueryUrlLength: number;
  /** Reconnection backoff of changes connections and subscription workers. */
  reconnectMinDelayMs: number;
  reconnectMaxDelayMs: number;
}

/** `User` → `Users`, `Category` → `Categories`, `Box` → `Boxes`. */
export function pluralize(name: string): string {
  if (/[^aeiou]y$/i.test(name)) return `${name.slice(0, -1)}ies`;
  if (/(s|x|z|ch|sh)$/i.test(name)) return `${name}es`;
  return `${name}s`;
}

export function defaultFindCollectionName(entity: object): string | null {
  const type = Object.getPrototypeOf(entity)?.constructor as { name?: unknown } | undefined;
  if (type === undefined || type === Object || typeof type.name !== 'string') return null;
  return type.name === '' ? null : pluralize(type.name);
}

export const DEFAULT_CONVENTIONS: DocumentConventions = {
  ...DEFAULT_RETRY_OPTIONS,
  findCollectionName: defaultFindCollectionName,
  transformCollectionToPrefix: (collection) => collection.toLowerCase(),
  identityProperty: 'id',
  useOptimisticConcurrency: false,
  maxNumberOfRequestsPerSession: 30,
  maxHttpCacheBytes: 64 * 1024 * 1024,
  maxQueryUrlLength: 2_048,
  reconnectMinDelayMs: 100,
  reconnectMaxDelayMs: 5_000,
};
