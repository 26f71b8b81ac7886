// The client's HTTP cache: ETag + body per request, least recently used first out, bounded by bytes.
//
// Each entry remembers the cache generation it was stored (or last revalidated) in. A change notification
// bumps the generation (markSuspect): entries from before it may be stale, so aggressive caching
// revalidates them with If-None-Match instead of serving them blindly. Bodies are kept as text: each
// session parses its own copy, so two sessions never share (and mutate) one object.

export interface CachedResponse {
  readonly etag: string;
  readonly body: string;
  /** What this entry counts against the budget. */
  readonly bytes: number;
  /** When it was stored or last confirmed by a 304 (ms, the cache's clock). */
  validatedAt: number;
  /** The generation it was validated in; older than `HttpCache.generation` means suspect. */
  generation: number;
}

/** Per entry beyond its strings: the Map slot and the entry object. A rough figure, so small bodies count. */
const ENTRY_OVERHEAD_BYTES = 96;

/** JavaScript strings are UTF-16 in memory: two bytes per code unit is what the cache really holds. */
export function entryBytes(key: string, etag: string, body: string): number {
  return 2 * (key.length + etag.length + body.length) + ENTRY_OVERHEAD_BYTES;
}

export class HttpCache {
  // A Map iterates in insertion order: deleting and re-inserting on use keeps the least recent first.
  private readonly entries = new Map<string, CachedResponse>();
  private totalBytes = 0;
  private currentGeneration = 0;

  constructor(
    readonly maxBytes: number,
    private readonly clock: () => number = () => performance.now(),
  ) {}

  get bytes(): number {
    return this.totalBytes;
  }

  get size(): number {
    return this.entries.size;
  }

  get generation(): number {
    return this.currentGeneration;
  }

  now(): number {
    return this.clock();
  }

  /** The entry for a key, marked as the most recently used. */
  get(key: string): CachedResponse | undefined {
    const entry = this.entries.get(key);
    if (entry === undefined) return undefined;
    this.entries.delete(key);
    this.entries.set(key, entry);
    return entry;
  }

  /**
   * Stores an answer validated in `generation` (read before the request left, so a notification that
   * arrives while it is in flight leaves it suspect). Bodies larger than the whole budget are not kept.
   */
  set(key: string, etag: string, body: string, generation: number): void {
    this.delete(key);
    const bytes = entryBytes(key, etag, body);
    if (bytes > this.maxBytes) return;
    this.entries.set(key, { etag, body, bytes, validatedAt: this.clock(), generation });
    this.totalBytes += bytes;
    this.evict();
  }

  /** A 304 confirmed the entry: it is fresh again as of now, in the generation read before the request. */
  confirm(entry: CachedResponse, generation: number): void {
    entry.validatedAt = this.clock();
    entry.generation = Math.max(entry.generation, generation);
  }

  /** Whether the entry was validated in the current generation and less than `maxAgeMs` ago. */
  isFresh(entry: CachedResponse, maxAgeMs: number): boolean {
    return entry.generation === this.currentGeneration && this.clock() - entry.validatedAt < maxAgeMs;
  }

  delete(key: string): void {
    const entry = this.entries.get(key);
    if (entry === undefined) return;
    this.entries.delete(key);
    this.totalBytes -= entry.bytes;
  }

  /** Something changed on the server: every entry validated before now is suspect. */
  markSuspect(): void {
    this.currentGeneration += 1;
  }

  /** Forget everything (the changes connection was lost: we cannot know what changed meanwhile). */
  clear(): void {
    this.entries.clear();
    this.totalBytes = 0;
    this.currentGeneration += 1;
  }

  private evict(): void {
    for (const [key, entry] of this.entries) {
      if (this.totalBytes <= this.maxBytes) return;
      this.entries.delete(key);
      this.totalBytes -= entry.bytes;
    }
  }
}
