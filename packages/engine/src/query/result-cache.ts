// Recent query answers by result etag. The etag already covers the query text,
// its parameters, the index's etag and the database's (it is what lets a client
// get 304 without the query running): while it is unchanged the answer is the
// same, so a repeated query — the same listing page, the same popular search
// asked by many users — is answered from memory instead of running again.
// Bounded in bytes, least recently used first out. Entries also remember which
// index reader produced them: a replaced index file (same name, etag counting
// up again) never answers from the old one's entries.

export class ResultCache<T> {
  private readonly entries = new Map<string, { owner: object; value: T; bytes: number }>();
  private bytes = 0;

  /** `maxBytes` 0 turns the cache off. One entry may take at most an eighth of it. */
  constructor(private readonly maxBytes: number) {}

  get(etag: string, owner: object): T | undefined {
    const entry = this.entries.get(etag);
    if (entry === undefined || entry.owner !== owner) return undefined;
    // Map order is insertion order: re-inserting makes it the most recently used.
    this.entries.delete(etag);
    this.entries.set(etag, entry);
    return entry.value;
  }

  set(etag: string, owner: object, value: T, bytes: number): void {
    if (bytes > this.maxBytes / 8) return;
    const previous = this.entries.get(etag);
    if (previous) {
      this.entries.delete(etag);
      this.bytes -= previous.bytes;
    }
    this.entries.set(etag, { owner, value, bytes });
    this.bytes += bytes;
    for (const [key, entry] of this.entries) {
      if (this.bytes <= this.maxBytes) break;
      this.entries.delete(key);
      this.bytes -= entry.bytes;
    }
  }

  get size(): number {
    return this.entries.size;
  }

  get totalBytes(): number {
    return this.bytes;
  }
}
