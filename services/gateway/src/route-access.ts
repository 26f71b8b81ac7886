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
   * An NDJSON stream (`/databases/{db}/streams/…`): it holds one of the gateway's connections to the tenant
   * for as long as its reader reads, so it is held to the tenant's stream limit (live-limits.ts).
   */
  stream: boolean;
}

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
  if (path === '/admin/databases')
    return { explicitTenant, database: null, access: 'admin', upstreamPath, stream: false };
  if (path === '/databases')
    return { explicitTenant, database: null, access: 'read', upstreamPath, stream: false };
  const database = DATABASE.exec(path);
  if (!database) return null;
  const name = decodeSegment(database[1]!);
  const routed = routedPath(path);
  if (name === null || routed === null) return null;
  return {
    explicitTenant,
    database: name,
    access: accessOf(method, routed),
    upstreamPath,
    stream: STREAM.test(routed),
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
  if (method === 'GET' || method === 'HEAD') return 'read';
  if (method === 'POST' && READING_POST.test(path)) return 'read';
  return 'write';
}

function decodeSegment(segment: string): string | null {
  try {
    return decodeURIComponent(segment);
  } catch {
    return null;
  }
}
  if (HILO.test(path)) return 'write';
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

