// The two caches between a request and the control plane or the host: what a tenant is allowed (its
// record and quota) and how much it stores. Both are read on every tenant request, so neither may put a
// round trip on the request path more than once per TTL.
import type { TenantRouter } from './tenant-router.js';

/** Values loaded by key and trusted for `ttlMs`; concurrent misses of one key share one load. */
export class TtlCache<V> {
  private readonly known = new Map<string, { value: Promise<V>; at: number }>();

  constructor(
    private readonly load: (key: string) => Promise<V>,
    private readonly ttlMs: number,
    private readonly now: () => number,
  ) {}

  get(key: string): Promise<V> {
    const cached = this.known.get(key);
    if (cached && cached.at + this.ttlMs > this.now()) return cached.value;
    const value = this.load(key);
    this.known.set(key, { value, at: this.now() });
    value.catch(() => this.known.delete(key)); // a failed load is not remembered
    return value;
  }
}

/** Bytes a tenant stores, asked of the host at most every `ttlMs` per tenant. */
export class StorageCache {
  private readonly known = new Map<string, { bytes: number | null; at: number }>();

  constructor(
    private readonly hosts: Pick<TenantRouter, 'storageOf'>,
    private readonly ttlMs: number,
    private readonly now: () => number,
  ) {}

  async bytesOf(tenantId: string): Promise<number | null> {
    const cached = this.known.get(tenantId);
    if (cached && cached.at + this.ttlMs > this.now()) return cached.bytes;
    const bytes = (await this.hosts.storageOf(tenantId).catch(() => null))?.bytes ?? null;
    this.known.set(tenantId, { bytes, at: this.now() });
    return bytes;
  }
}
