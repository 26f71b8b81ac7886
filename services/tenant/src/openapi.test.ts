// The tenant API's OpenAPI fragment: every route a real tenant server registers is in it with its schemas, and
// the committed copy the gateway serves (packages/protocol/openapi/tenant.json) is the one these routes give.
// After changing a route: ROOKERY_WRITE_OPENAPI=1 npx vitest run src/openapi.test.ts, and commit the file.
import { readFileSync, writeFileSync } from 'node:fs';
import { undocumentedRoutes } from '@rookery/protocol';
import { makeTempDir } from '@rookery/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { loadConfig } from './config.js';
import { tenantOpenApi, UNDOCUMENTED_TENANT_ROUTES } from './openapi.js';
import { buildTenantServer, type TenantServer } from './server.js';

const COMMITTED = new URL('../../../packages/protocol/openapi/tenant.json', import.meta.url);

/**
 * Writes that take no body: what they act on is in their URL. Any other POST, PUT or PATCH must declare its body.
 */
const BODYLESS_WRITES = new Set([
  // The index is named in the query string.
  'POST /databases/:db/indexes/reset',
  // RavenDB's client hands back its range in the query string.
  'PUT /databases/:db/hilo/return',
]);

/**
 * Routes whose success answer the document does not describe yet, each for its reason. Every other route declares
 * a 2xx with its zod schema (from @rookery/protocol, the type its handler answers) or a 204.
 */
const WITHOUT_RESPONSE_SCHEMA = new Map([
  // NDJSON streams: each line's shape is in docs/api.md; a JSON Schema of one body does not fit a stream of lines.
  ['GET /databases/:db/streams/docs', 'an NDJSON stream'],
  ['GET /databases/:db/streams/queries', 'an NDJSON stream'],
  ['POST /databases/:db/streams/queries', 'an NDJSON stream'],
  ['POST /databases/:db/bulk_insert', 'an NDJSON stream of progress lines'],
  // WebSockets: their messages are in docs/live-data.md.
  ['GET /databases/:db/changes', 'a WebSocket'],
  ['GET /databases/:db/subscriptions/:name/connect', 'a WebSocket'],
  // RavenDB-compatible routes answer RavenDB's shapes, which its clients read (not yet described here).
  ['PUT /databases/:db/admin/indexes', "RavenDB's PutIndexesResponse"],
  ['PUT /databases/:db/hilo/return', "RavenDB's client ignores the answer"],
  ['GET /databases/:db/operations/next-operation-id', "RavenDB's shape"],
  ['GET /databases/:db/operations/state', "RavenDB's operation state"],
  ['PUT /admin/databases', "Rookery's or RavenDB's shape, as the request was"],
  ['DELETE /admin/databases', "Rookery's or RavenDB's shape, as the request was"],
  // Not described yet (what is left of issue [11]).
  ['POST /databases/:db/admin/sweep', 'not described yet'],
  ['GET /databases/:db/subscriptions', 'not described yet'],
  ['PUT /databases/:db/subscriptions', 'not described yet'],
  ['GET /databases/:db/subscriptions/:name', 'not described yet'],
  ['DELETE /databases/:db/subscriptions/:name', 'not described yet'],
]);

let tmp: ReturnType<typeof makeTempDir>;
let server: TenantServer;
beforeAll(async () => {
  tmp = makeTempDir();
  server = buildTenantServer(loadConfig({}, { dataDir: tmp.dir, port: 0, logLevel: 'silent' }));
  await server.app.ready(); // the WebSocket routes are declared in plugins, registered at ready
});
afterAll(async () => {
  await server.close();
  tmp.cleanup();
});

describe("the tenant API's OpenAPI fragment", () => {
  it('documents every route the server registers, with a summary, its URL parameters, body and answer', () => {
    const fragment = tenantOpenApi(server.routes);
    const rules = {
      undocumented: UNDOCUMENTED_TENANT_ROUTES,
      bodyless: BODYLESS_WRITES,
      responses: { except: WITHOUT_RESPONSE_SCHEMA },
    };
    expect(undocumentedRoutes(server.routes, fragment, rules)).toEqual([]);
    // Routes that must be there, as a floor that a broken route listing cannot pass by being empty.
    expect(Object.keys(fragment.paths)).toEqual(
      expect.arrayContaining([
        '/databases/{db}/docs',
        '/databases/{db}/queries',
        '/databases/{db}/bulk_insert',
        '/databases/{db}/changes',
        '/databases/{db}/subscriptions/{name}/connect',
        '/admin/databases',
      ]),
    );
  });

  it('describes query strings and bodies from their zod schemas', () => {
    const { paths } = tenantOpenApi(server.routes);
    const getDocs = paths['/databases/{db}/docs']!.get!;
    expect(getDocs.parameters).toEqual(
      expect.arrayContaining([
        expect.objectContaining({ name: 'db', in: 'path', required: true }),
        expect.objectContaining({ name: 'id', in: 'query', required: true }),
        expect.objectContaining({ name: 'include', in: 'query', required: false }),
      ]),
    );
    const query = paths['/databases/{db}/queries']!.post!.requestBody as {
      required: boolean;
      content: Record<string, { schema: { properties: Record<string, unknown>; required: string[] } }>;
    };
    expect(query.required).toBe(true);
    expect(query.content['application/json']!.schema.required).toEqual(['Query']);
    expect(Object.keys(query.content['application/json']!.schema.properties)).toContain('QueryParameters');
    const bulk = paths['/databases/{db}/bulk_insert']!.post!.requestBody as { content: object };
    expect(Object.keys(bulk.content)).toEqual(['application/x-ndjson', 'application/json']);
  });

  it('is the committed packages/protocol/openapi/tenant.json (regenerate with ROOKERY_WRITE_OPENAPI=1)', () => {
    const generated = `${JSON.stringify(tenantOpenApi(server.routes), null, 2)}\n`;
    if (process.env.ROOKERY_WRITE_OPENAPI === '1') writeFileSync(COMMITTED, generated);
    expect(readFileSync(COMMITTED, 'utf8')).toBe(generated);
  });
});
