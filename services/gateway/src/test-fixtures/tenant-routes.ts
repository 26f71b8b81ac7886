// Every route a tenant container serves, as the gateway exposes them, with a
// body that passes the tenant's own validation: the isolation test walks all
// of them. Read from the tenant server itself, so a new route is never missed.
import { buildTenantServer, loadConfig } from '@rookery/tenant';
import { makeTempDir } from '@rookery/testkit';

export interface TenantRouteCase {
  method: string;
  path: string;
  body?: unknown;
}

const BODIES: Record<string, unknown> = {
  'PUT /admin/databases': { Name: 'stolen' },
  'PUT /databases/:db/docs': { Name: 'x', '@metadata': { '@collection': 'Users' } },
  'POST /databases/:db/bulk_docs': { Commands: [] },
  'POST /databases/:db/bulk_insert': '',
  'POST /databases/:db/queries': { Query: 'from Users' },
  'PUT /databases/:db/indexes': { Name: 'I', Maps: [{ Collection: 'Users', Fields: { Name: 'Name' } }] },
  'POST /databases/:db/admin/sweep': {},
  'POST /databases/:db/streams/queries': { Query: 'from Users' },
  'PUT /databases/:db/subscriptions': { Name: 'stolen', Query: 'from Users' },
};

/** Read once the server is ready: WebSocket routes (changes, subscription connect) are registered in a plugin. */
export async function tenantRoutes(): Promise<TenantRouteCase[]> {
  const tmp = makeTempDir();
  try {
    const server = buildTenantServer(loadConfig({}, { dataDir: tmp.dir, port: 0, logLevel: 'silent' }));
    await server.app.ready();
    const cases = server.routes
      .filter((r) => r.url !== '/health' && r.method !== 'HEAD' && r.method !== 'OPTIONS')
      .map((r) => ({
        method: r.method,
        path: `${r.url.replace(':db', 'shop').replace(':name', 'orders')}${r.url.endsWith('/docs') ? '?id=users/1' : ''}`,
        body: BODIES[`${r.method} ${r.url}`],
      }));
    await server.close();
    return cases;
  } finally {
    tmp.cleanup();
  }
}
