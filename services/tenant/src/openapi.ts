// The tenant API's part of Rookery's OpenAPI document, generated from the schemas its routes declare. The gateway
// serves the document but may not import a service's code, so the fragment is generated here at build time into
// @rookery/protocol's openapi/tenant.json (committed); openapi.test.ts fails while that file is out of date.
import { type DeclaredRoute, type OpenApiFragment, openApiPaths } from '@rookery/protocol';

/**
 * Routes kept out of the document, each for its reason. Everything else a tenant serves must be in it, with a
 * summary and its request parts (openapi.test.ts).
 */
export const UNDOCUMENTED_TENANT_ROUTES: ReadonlyMap<string, string> = new Map([
  ['GET /health', "the host's liveness probe: the gateway never forwards it"],
]);

/** The tenant's routes as the document describes them (HEAD, which fastify adds beside each GET, is left out). */
export function tenantOpenApi(routes: readonly (DeclaredRoute & { method: string })[]): OpenApiFragment {
  return openApiPaths(
    routes.filter((route) => !UNDOCUMENTED_TENANT_ROUTES.has(`${route.method} ${route.url}`)),
    'Tenant',
  );
}
