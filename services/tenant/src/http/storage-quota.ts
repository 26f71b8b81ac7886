// The tenant's side of its storage quota. The gateway refuses at the quota what it can judge from the route
// alone (a PUT, a new index or database) from the bytes the host last measured; it forwards the quota
// (STORAGE_QUOTA_HEADER) with what only the tenant can judge: a bulk insert, which may store gigabytes in
// one request and is held to the quota chunk by chunk, and a batch, which frees space when it only deletes.
// Bytes are measured as the host measures them (@rookery/engine's bytesUnder over the tenant's directory),
// so both sides agree on what "at the quota" means.

import type { IncomingHttpHeaders } from 'node:http';
import { bytesUnder } from '@rookery/engine';
import { RookeryError, STORAGE_QUOTA_HEADER, StorageQuotaHeaderSchema } from '@rookery/protocol';
import type { FastifyInstance } from 'fastify';

/** The quota forwarded with the request, or null: none forwarded (a worker's sweep, a direct call). */
export function storageQuotaOf(headers: IncomingHttpHeaders): number | null {
  const raw = headers[STORAGE_QUOTA_HEADER];
  if (raw === undefined) return null;
  const quota = StorageQuotaHeaderSchema.safeParse(raw);
  if (!quota.success) {
    // Only the gateway sets it (it drops every x-rookery-… field a client sends): a bug of ours, said as such.
    throw new RookeryError(
      'InvalidRequest',
      `${STORAGE_QUOTA_HEADER} must be whole bytes, not ${String(raw)}`,
    );
  }
  return quota.data;
}

export function storageQuotaExceeded(quota: number, message: string): RookeryError {
  return new RookeryError(
    'StorageQuotaExceeded',
    `${message}; delete data (deletes, batches of deletes, index drops and resets are still accepted) or raise the quota of ${quota} bytes.`,
    { limit: 'storageBytes', value: quota },
  );
}

/** Routes that hold a request to the quota themselves, by what it carries (bulk-insert.ts, batch.ts). */
const HELD_BY_THE_ROUTE = new Set(['/databases/:db/bulk_insert', '/databases/:db/bulk_docs']);

/**
 * Any other request that comes with the quota is refused with 507 while the tenant is at it. The gateway
 * refuses them first, but from stored bytes it caches for 10 s: without this, a tenant that just filled its
 * quota could still add a large document per request for that long. Bytes here are at most a second old.
 */
export function refuseWritesAtQuota(app: FastifyInstance, storage: StorageMeter): void {
  // `done` hooks, not async ones: a request without the quota header (any not from the gateway) then costs
  // no promise here (docs/benchmarks.md, CPU per PUT).
  app.addHook('preHandler', (request, _reply, done) => {
    const quota = storageQuotaOf(request.headers);
    if (quota === null || HELD_BY_THE_ROUTE.has(request.routeOptions.url ?? '')) return done();
    storage.recent().then((bytes) => {
      if (bytes >= quota) done(storageQuotaExceeded(quota, `The tenant stores ${bytes} bytes, at its quota`));
      else done();
    }, done);
  });
  // A write accepted since the last measurement is counted by its body until the next one: a figure up to a
  // second old would otherwise miss what was just stored (a tenant's first writes, measured as an empty
  // directory, stayed at 0 bytes for that second whatever they stored).
  app.addHook('onResponse', (request, reply, done) => {
    if (reply.statusCode < 400 && storageQuotaOf(request.headers) !== null)
      storage.wrote(Number(request.headers['content-length'] ?? 0) || 0);
    done();
  });
}

/** The bytes under the tenant's directory, measured at most once per `maxAgeMs` unless asked fresh. */
export class StorageMeter {
  private last: { bytes: Promise<number>; at: number } | null = null;

  constructor(
    private readonly dataDir: string,
    private readonly maxAgeMs = 1_000,
    private readonly now: () => number = Date.now,
  ) {}

  /** Fresh: for a long write deciding whether its next chunk fits. */
  measure(): Promise<number> {
    const bytes = bytesUnder(this.dataDir);
    this.last = { bytes, at: this.now() };
    return bytes;
  }

  /** Counts `bytes` just written into the figure `recent()` gives until the next measurement. */
  wrote(bytes: number): void {
    if (this.last === null || bytes <= 0) return;
    const before = this.last.bytes;
    this.last = { bytes: before.then((measured) => measured + bytes), at: this.last.at };
  }

  /**
   * At most `maxAgeMs` old, plus the bodies written since (`wrote`): for a batch, on the write path of every
   * session, where a walk of the directory each time would cost.
   */
  recent(): Promise<number> {
    if (this.last && this.last.at + this.maxAgeMs > this.now()) return this.last.bytes;
    return this.measure();
  }
}
