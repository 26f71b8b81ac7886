// The control API's OpenAPI fragment (the gateway serves it within /openapi.json): every route the app registers
// is in it, with a summary and the schemas of its URL parameters and body; a new route without them fails here.
import { undocumentedRoutes } from '@rookery/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type ControlApiHarness, startControlApi } from '../test-fixtures/control-api.js';

/** Writes that take no body: what they act on is in their URL. */
const BODYLESS_WRITES = new Set([
  'POST /control/certificates/:serial/revoke',
  'POST /control/tenants/:tenantId/certificates/:serial/revoke',
]);

let h: ControlApiHarness;
beforeAll(async () => {
  h = await startControlApi();
});
afterAll(async () => h.close());

describe("the control API's OpenAPI fragment", () => {
  it('documents every route, under both prefixes of the tenant-scoped ones', () => {
    const { routes, openApi } = h.api;
    expect(undocumentedRoutes(routes, openApi, { bodyless: BODYLESS_WRITES })).toEqual([]);
    expect(Object.keys(openApi.paths)).toEqual(
      expect.arrayContaining([
        '/control/tenants',
        '/control/tenants/{tenantId}/quota',
        '/control/principals',
        '/control/tenants/{tenantId}/principals',
        '/control/backups',
        '/control/hosts',
      ]),
    );
  });

  it('describes bodies from the schemas the handlers parse with', () => {
    const create = h.api.openApi.paths['/control/tenants']!.post!.requestBody as {
      content: { 'application/json': { schema: { properties: Record<string, unknown> } } };
    };
    expect(Object.keys(create.content['application/json'].schema.properties)).toContain('id');
  });
});
