// The gateway's own routes have one source of truth, GATEWAY_OWN_ROUTES (own-routes.ts): gateway.ts compares the
// request's path and method with its entries, and the OpenAPI document lists exactly its entries. The table is
// the main defence (a route dispatched from it is documented by construction, and the adversarial suite proves
// each entry is served); the source check below is the second: it fails when gateway.ts answers a path it names
// itself, which the document would not know.
import { readFileSync } from 'node:fs';
import { openApiPaths } from '@rookery/protocol';
import { describe, expect, it } from 'vitest';
import { GATEWAY_OWN_ROUTES, GATEWAY_ROUTES } from './own-routes.js';

const GATEWAY_SOURCE = readFileSync(new URL('./gateway.ts', import.meta.url), 'utf8');

describe("the gateway's own routes", () => {
  it('are documented from the table, every entry under its method and path', () => {
    const { paths } = openApiPaths(GATEWAY_ROUTES, 'Gateway');
    const documented = Object.entries(paths).flatMap(([path, operations]) =>
      Object.keys(operations).map((method) => `${method.toUpperCase()} ${path}`),
    );
    const table = Object.values(GATEWAY_OWN_ROUTES).map((route) => `${route.method} ${route.path}`);
    expect(documented.sort()).toEqual([...new Set(table)].sort());
    // The RavenDB clients' TCP info route is one of them (it was answered but not documented).
    expect(table).toContain('GET /info/remote-task/tcp');
  });

  it('are dispatched in gateway.ts from the table, never from a path written there', () => {
    // `path === '/x'`, `'/x' === path`, `path.startsWith('/x')`: a route the document does not know.
    const literalComparisons = [
      ...GATEWAY_SOURCE.matchAll(/\bpath\s*[!=]==?\s*['"`]|['"`]\s*[!=]==?\s*path\b|\bpath\.\w+\(\s*['"`]/g),
    ].map((m) => m[0]);
    expect(literalComparisons).toEqual([]);
    // Nor a route's path in a string anywhere in it (the bare '/' a URL defaults to is not a route; comments
    // quote paths in backticks, which the comparisons above catch in code).
    const spelledPaths = [...GATEWAY_SOURCE.matchAll(/['"](\/[A-Za-z][^'"]*)['"]/g)].map((m) => m[1]);
    expect(spelledPaths).toEqual([]);
  });
});
