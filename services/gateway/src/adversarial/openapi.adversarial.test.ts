// GET /openapi.json through the real gateway over mutual TLS: the whole API (tenant, control, gateway's own) as
// OpenAPI 3.1, readable by every admitted certificate and holding nothing of any tenant's. And the gateway's own
// routes (own-routes.ts's table, which gateway.ts dispatches on) are routes it serves (README.md beside this file).
import { openApiPaths, type RouteSchema, undocumentedRoutes } from '@rookery/protocol';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { GATEWAY_BODYLESS_WRITES, GATEWAY_ROUTES } from '../own-routes.js';
import { type Client, type Stack, startStack } from '../test-fixtures/stack.js';

let stack: Stack;
let admin: Client;

beforeAll(async () => {
  stack = await startStack();
  admin = await stack.tenantAdmin({ id: 'acme', name: 'Acme' }, 'acme-admin');
}, 120_000);
afterAll(async () => stack?.close());

interface Document {
  openapi: string;
  paths: Record<string, Record<string, { summary?: string }>>;
  components: { schemas: Record<string, unknown> };
}

describe('GET /openapi.json', () => {
  it("describes the tenant's, the control API's and the gateway's routes, every operation summarised", async () => {
    const reply = await admin.call('GET', '/openapi.json');
    expect(reply.status).toBe(200);
    expect(reply.headers['content-type']).toMatch(/^application\/json/);
    const document = reply.json as unknown as Document;
    expect(document.openapi).toBe('3.1.0');
    expect(Object.keys(document.paths)).toEqual(
      expect.arrayContaining([
        '/databases/{db}/docs',
        '/databases/{db}/queries',
        '/control/tenants',
        '/control/tenants/{tenantId}/principals',
        '/auth/2fa',
        '/openapi.json',
      ]),
    );
    for (const [path, operations] of Object.entries(document.paths))
      for (const [method, operation] of Object.entries(operations))
        expect(operation.summary, `${method} ${path}`).toBeTruthy();
    // Every $ref points at a component the document has.
    for (const [, name] of reply.text.matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g))
      expect(document.components.schemas, name).toHaveProperty([name!]);
  });

  it('is readable by a read-only program and by a person before the second factor, and holds no tenant data', async () => {
    const reader = await stack.program('acme-reader', 'acme', {
      kind: 'database',
      access: { shop: 'read-only' },
    });
    const { client: person } = await stack.person('Ada', 'acme');
    const byAdmin = await admin.call('GET', '/openapi.json');
    for (const caller of [reader, person]) {
      const reply = await caller.call('GET', '/openapi.json');
      expect(reply.status).toBe(200);
      expect(reply.text).toBe(byAdmin.text); // the same document for everyone
    }
    expect(byAdmin.text).not.toMatch(/acme|Ada|BEGIN (CERTIFICATE|PRIVATE KEY)/);
  });

  it('is only read: another method is 404 RouteNotFound', async () => {
    for (const method of ['POST', 'PUT', 'DELETE']) {
      const reply = await admin.call(method, '/openapi.json', {});
      expect([method, reply.status, reply.json.code]).toEqual([method, 404, 'RouteNotFound']);
    }
  });
});

describe("the gateway's own routes in the document", () => {
  it('are declared with their summaries and bodies', () => {
    const fragment = openApiPaths(GATEWAY_ROUTES, 'Gateway');
    expect(undocumentedRoutes(GATEWAY_ROUTES, fragment, { bodyless: GATEWAY_BODYLESS_WRITES })).toEqual([]);
  });

  it('are each served by the gateway (none answers 404 RouteNotFound), as the document describes', async () => {
    const parsed: string[] = [];
    for (const route of GATEWAY_ROUTES) {
      const reply = await admin.call(
        String(route.method),
        route.url,
        route.method === 'POST' ? {} : undefined,
      );
      // A program's certificate: 400 for the routes of people, 403 for the operators', never 404.
      expect(reply.status, `${route.method} ${route.url}`).not.toBe(404);
      // What it answers is what the document says it answers (the ones a program may call: its session, usage).
      const declared = (route.schema as RouteSchema).response?.[reply.status]?.schema;
      if (declared && reply.status < 300) {
        expect(() => declared.parse(reply.json), `${route.method} ${route.url}`).not.toThrow();
        parsed.push(`${route.method} ${route.url}`);
      }
    }
    expect(parsed).toEqual(['GET /openapi.json', 'GET /auth/session', 'GET /usage']);
  });
});
