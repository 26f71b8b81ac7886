// The tenant API's document says what its routes answer (openapi.test.ts checks each route declares it): here
// a real tenant server answers one request of every route that declares a 2xx schema, and each answer parses
// with the schema its route declares — the document cannot drift from what the handlers return. A route that
// declares a 2xx schema and is not called here fails the last check.
import type { RouteSchema } from '@rookery/protocol';
import { describe, expect, it } from 'vitest';
import type { Reply } from './test-fixtures/http-client.js';
import { sharedTenantServer } from './test-fixtures/tenant-server.js';

const tenant = sharedTenantServer({ database: 'shop' });

/** `METHOD /url` of every answer parsed so far. */
const parsed = new Set<string>();

/** Parses `reply` with what `method url` declares for its status, and remembers the route as covered. */
function expectDeclared(method: string, url: string, reply: Reply): void {
  const route = tenant.server.routes.find((r) => r.method === method && r.url === url);
  const declared = (route?.schema as RouteSchema | undefined)?.response?.[reply.status];
  expect(declared?.schema, `${method} ${url} answered ${reply.status}: ${reply.text}`).toBeDefined();
  const result = declared!.schema!.safeParse(reply.json);
  expect(result.error?.issues, `${method} ${url}`).toBeUndefined();
  parsed.add(`${method} ${url}`);
}

describe("the tenant API's answers are what its document declares", () => {
  it('databases, documents and batches', async () => {
    const { call } = tenant;
    expectDeclared('GET', '/databases', await call('GET', '/databases'));
    const put = await call('PUT', '/databases/shop/docs?id=users/1', {
      Name: 'Ada',
      Friend: 'users/2',
      '@metadata': { '@collection': 'Users', '@expires': '2099-01-01T00:00:00Z', mine: 1 },
    });
    expectDeclared('PUT', '/databases/:db/docs', put);
    const batch = await call('POST', '/databases/shop/bulk_docs', {
      Commands: [
        { Type: 'PUT', Id: 'users/2', Document: { Name: 'Grace', '@metadata': { '@collection': 'Users' } } },
        { Type: 'DELETE', Id: 'users/none' },
        { Type: 'PATCH', Id: 'users/2', Patch: { Operations: [{ Op: 'set', Path: 'Age', Value: 36 }] } },
      ],
    });
    expectDeclared('POST', '/databases/:db/bulk_docs', batch);
    const get = await call('GET', '/databases/shop/docs?id=users/1&id=users/none&include=Friend');
    expectDeclared('GET', '/databases/:db/docs', get);
    expect(get.json.Includes).toHaveProperty(['users/2']); // the included document parsed too
    expectDeclared('GET', '/databases/:db/stats', await call('GET', '/databases/shop/stats'));
    expectDeclared(
      'GET',
      '/databases/:db/hilo/next',
      await call('GET', '/databases/shop/hilo/next?tag=users'),
    );
  });

  it('indexes and queries', async () => {
    const { call } = tenant;
    const definition = { Name: 'Users/ByName', Maps: ["map('Users', u => ({ Name: u.Name }))"] };
    expectDeclared('PUT', '/databases/:db/indexes', await call('PUT', '/databases/shop/indexes', definition));
    expectDeclared('PUT', '/databases/:db/indexes', await call('PUT', '/databases/shop/indexes', definition));
    const name = 'name=Users%2FByName';
    for (const path of ['indexes/definition', 'indexes/stats'])
      expectDeclared('GET', `/databases/:db/${path}`, await call('GET', `/databases/shop/${path}?${name}`));
    expectDeclared('GET', '/databases/:db/indexes', await call('GET', '/databases/shop/indexes'));
    expectDeclared(
      'GET',
      '/databases/:db/indexes',
      await call('GET', '/databases/shop/indexes?namesOnly=true'),
    );
    const query = {
      Query: "from index 'Users/ByName' where Name = $name include explanations()",
      QueryParameters: { name: 'Ada' },
      WaitForNonStaleResults: true,
    };
    const posted = await call('POST', '/databases/shop/queries', query);
    expectDeclared('POST', '/databases/:db/queries', posted);
    expect(posted.json.TotalResults).toBe(1);
    const text = encodeURIComponent('from Users where Name = "Grace"');
    expectDeclared(
      'GET',
      '/databases/:db/queries',
      await call('GET', `/databases/shop/queries?query=${text}`),
    );
    const reset = await call('POST', `/databases/shop/indexes/reset?${name}`);
    expectDeclared('POST', '/databases/:db/indexes/reset', reset);
  });

  it('covered every route that declares a 2xx schema', () => {
    const declaring = tenant.server.routes
      .filter((route) => route.method !== 'HEAD') // fastify's, beside every GET
      .filter((route) =>
        Object.entries((route.schema as RouteSchema | undefined)?.response ?? {}).some(
          ([status, response]) => status.startsWith('2') && response.schema,
        ),
      )
      .map((route) => `${route.method} ${route.url}`);
    expect([...parsed].sort()).toEqual([...new Set(declaring)].sort());
  });
});
