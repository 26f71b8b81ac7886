// What a request to the gateway asks for: which tenant, which database, and
// whether it reads, writes or administers. The gateway decides access from
// this alone, before any byte reaches a tenant container.

export type Access = 'read' | 'write' | 'admin';

export interface TenantRoute {
  /** The tenant named in the path (`/tenants/{id}/…`), or null when it comes from the certificate. */
  explicitTenant: string | null;
  /** The database the request touches; null for tenant-wide routes such as the database list. */
  database: string | null;
  access: Access;
  /** The path (with query string) the tenant container serves. */
  upstreamPath: string;
  /**
   * The slow class the request belongs to, held to its own limit of requests in flight per tenant
   * (live-limits.ts), so that no one class can take every connection the gateway holds to the tenant: an
   * NDJSON stream (`…/streams/…`, in flight for as long as its reader reads), a query (`…/queries`, which may
   * wait for an index or answer megabytes), a bulk insert or a sweep (`…/bulk_insert`, `…/admin/sweep`).
   * Null for everything else (point reads and writes, batches, index and database administration), which
   * gets the connections these classes leave.
   */
  holds: SlowClass | null;
  /** What the request may do to the tenant's stored bytes: decides what a tenant at its storage quota may still send. */
  storage: StorageEffect;
}

export type SlowClass = 'stream' | 'query' | 'bulk';

/**
 * - `none`: reads.
 * - `frees`: deletes (documents, indexes, databases, subscriptions), index resets and sweeps (expiration
 *   deletes): never refused for storage, or a tenant at its quota could never get under it again.
 * - `batch`: `bulk_docs`, which frees or grows by its commands, read by the tenant only: forwarded with the
 *   quota, and the tenant refuses a batch at the quota unless it only deletes.
 * - `grows`: everything else that writes; refused at the quota.
 */
export type StorageEffect = 'none' | 'frees' | 'batch' | 'grows';

/**
 * The control plane's API (tenants, principals, certificates, TOTP, database
 * records): served by the control API the gateway hosts, which decides access
 * itself from the caller's principal.
 */
export function isControlPath(path: string): boolean {
  return path === '/control' || path.startsWith('/control/');
}

const EXPLICIT = /^\/tenants\/([^/?]+)(\/[^?]*)?(\?.*)?$/;
const DATABASE = /^\/databases\/([^/?]+)/;

/** Classifies a tenant-bound request; null if the path is not one a tenant container serves. */
export function classifyTenantRoute(method: string, url: string): TenantRoute | null {
  let explicitTenant: string | null = null;
  let upstreamPath = url;
  const explicit = EXPLICIT.exec(url);
  if (explicit) {
    explicitTenant = decodeSegment(explicit[1]!);
    if (explicitTenant === null) return null;
    upstreamPath = (explicit[2] ?? '/') + (explicit[3] ?? '');
  }
  const path = upstreamPath.split('?', 1)[0]!;
  if (path === '/admin/databases') {
    const storage = method === 'DELETE' ? 'frees' : 'grows';
    return { explicitTenant, database: null, access: 'admin', upstreamPath, holds: null, storage };
  }
  if (path === '/databases')
    return { explicitTenant, database: null, access: 'read', upstreamPath, holds: null, storage: 'none' };
  const database = DATABASE.exec(path);
  if (!database) return null;
  const name = decodeSegment(database[1]!);
  const routed = routedPath(path);
  if (name === null || routed === null) return null;
  const access = accessOf(method, routed);
  return {
    explicitTenant,
    database: name,
    access,
    upstreamPath,
    holds: slowClassOf(routed),
    storage: access === 'read' ? 'none' : storageEffectOf(method, routed),
  };
}

/**
 * The path as the tenant's router matches it: percent-decoded, except an encoded slash, which stays inside
 * its segment. Access and streams are decided on it, not on the path as sent, because the router also takes
 * `admin` spelt `%61dmin`: decided on the raw path, that would be a write reaching an administration route
 * (and `%73treams` a stream that escapes the stream limit). Null
 * when it does not decode (the router refuses it too). The path is still forwarded as it was sent.
 */
function routedPath(path: string): string | null {
  if (!path.includes('%')) return path;
  try {
    return decodeURIComponent(path.replace(/%2f/gi, '%252F'));
  } catch {
    return null;
  }
}

const STREAM = /^\/databases\/[^/]+\/streams\//;
const QUERY = /^\/databases\/[^/]+\/queries$/;
const BULK = /^\/databases\/[^/]+\/(bulk_insert|admin\/sweep)$/;

function slowClassOf(path: string): SlowClass | null {
  if (STREAM.test(path)) return 'stream';
  if (QUERY.test(path)) return 'query';
  if (BULK.test(path)) return 'bulk';
  return null;
}

const FREEING_POST = /^\/databases\/[^/]+\/(indexes\/reset|admin\/sweep)$/;
const BATCH = /^\/databases\/[^/]+\/bulk_docs$/;

/** For a request that writes: see StorageEffect. */
function storageEffectOf(method: string, path: string): StorageEffect {
  if (method === 'DELETE') return 'frees';
  if (method === 'POST' && FREEING_POST.test(path)) return 'frees';
  if (method === 'POST' && BATCH.test(path)) return 'batch';
  return 'grows';
}

/** POSTs that only read: a query, and a query streamed as NDJSON (RQL updates are not supported). */
const READING_POST = /^\/databases\/[^/]+\/(queries|streams\/queries)$/;

/**
 * Reads never change data: every GET and HEAD, which includes the live routes (the changes feed and
 * a subscription's connect are GET upgrades; streams and subscription listings are GETs), and the
 * POSTs of READING_POST. Creating and deleting a subscription (PUT, DELETE) are writes: they change
 * what the database stores. `/databases/{db}/admin/…` (the lifecycle sweep, whose `now` can expire
 * documents early) is administration whatever the method.
 */
function accessOf(method: string, path: string): Access {
  if (/^\/databases\/[^/]+\/admin(\/|$)/.test(path)) return 'admin';
  if (HILO.test(path)) return 'write';
  if (method === 'GET' || method === 'HEAD') return 'read';
  if (method === 'POST' && READING_POST.test(path)) return 'read';
  return 'write';
}

/**
 * `GET /databases/{db}/hilo/next` is a GET in RavenDB's protocol, but each call reserves a range of ids (it
 * moves the database's next id for the tag, by up to a million): a write, whatever the method.
 */
const HILO = /^\/databases\/[^/]+\/hilo(\/|$)/;

/** True for a HiLo request (as the tenant's router reads its path): its 403 says why it is a write. */
export function reservesIds(route: TenantRoute): boolean {
  const path = routedPath(route.upstreamPath.split('?', 1)[0]!);
  return path !== null && HILO.test(path);
}

function decodeSegment(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}
