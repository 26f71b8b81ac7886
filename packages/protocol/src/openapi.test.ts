import { describe, expect, it } from 'vitest';
import { z } from 'zod';
import { RookeryError } from './errors.js';
import {
  documented,
  openApiDocument,
  openApiPaths,
  requestPartValidator,
  undocumentedRoutes,
  validated,
} from './openapi.js';

describe('requestPartValidator', () => {
  const Query = validated(z.object({ n: z.coerce.number().int() }), 'query string');

  it("answers the parsed value, or invalidRequest's error naming the part and the field", () => {
    const check = requestPartValidator({ schema: Query, httpPart: 'querystring' });
    expect(check({ n: '3' })).toEqual({ value: { n: 3 } });
    const { error } = check({ n: 'x' }) as { error: RookeryError };
    expect(error).toBeInstanceOf(RookeryError);
    expect(error.code).toBe('InvalidRequest');
    expect(error.message).toMatch(/^The query string is not valid\. n: /);
  });

  it('reads an absent body (fastify hands it over as null) as absent', () => {
    const check = requestPartValidator({
      schema: validated(z.object({}).optional(), 'sweep'),
      httpPart: 'body',
    });
    expect(check(null)).toEqual({ value: undefined });
  });

  it('leaves a documented part to its handler, and refuses a schema declared otherwise', () => {
    expect(requestPartValidator({ schema: documented(z.never()), httpPart: 'body' })('anything')).toBe(true);
    expect(() => requestPartValidator({ schema: z.object({}), httpPart: 'body' })).toThrow(
      /validated\(\) or documented\(\)/,
    );
  });
});

describe('openApiPaths', () => {
  const Json: z.ZodType = z.lazy(() => z.union([z.string(), z.array(Json)]));
  const routes = [
    {
      method: 'GET',
      url: '/databases/:db/things',
      schema: {
        summary: 'Things',
        params: validated(z.object({ db: z.string().min(1) }), 'URL'),
        querystring: validated(
          z.object({ start: z.coerce.number().default(0), name: z.string() }),
          'query string',
        ),
      },
    },
    { method: 'HEAD', url: '/databases/:db/things', schema: { summary: 'Things' } },
    {
      method: ['PUT'],
      url: '/databases/:db/things',
      schema: { summary: 'Store', params: documented(z.object({ db: z.string() })), body: documented(Json) },
    },
  ];

  it('has OpenAPI paths, one parameter per query property, and no HEAD', () => {
    const { paths } = openApiPaths(routes, 'T');
    expect(Object.keys(paths)).toEqual(['/databases/{db}/things']);
    expect(Object.keys(paths['/databases/{db}/things']!)).toEqual(['get', 'put']);
    expect(paths['/databases/{db}/things']!.get!.parameters).toEqual([
      { name: 'db', in: 'path', required: true, schema: { type: 'string', minLength: 1 } },
      { name: 'start', in: 'query', required: false, schema: { type: 'number', default: 0 } },
      { name: 'name', in: 'query', required: true, schema: { type: 'string' } },
    ]);
  });

  it("moves a recursive schema's $defs into the components and points its $refs there", () => {
    const fragment = openApiPaths(routes, 'T');
    const text = JSON.stringify(fragment);
    expect(text).not.toContain('#/$defs/');
    // Problem is the document's own (openApiDocument), every other component the fragment's.
    const refs = [...text.matchAll(/"\$ref":"#\/components\/schemas\/([^"]+)"/g)]
      .map((m) => m[1])
      .filter((ref) => ref !== 'Problem');
    expect(refs.length).toBeGreaterThan(0);
    for (const ref of refs) expect(fragment.schemas).toHaveProperty([ref!]);
    const document = openApiDocument({ title: 't', version: '1' }, [fragment]);
    expect(document.openapi).toBe('3.1.0');
    expect(document.components.schemas).toHaveProperty('Problem');
  });
});

describe('undocumentedRoutes', () => {
  it('names a route missing from the document, and one without its summary, parameters or body', () => {
    const declared = {
      method: 'GET',
      url: '/a/:id',
      schema: { summary: 'A', params: documented(z.object({})) },
    };
    const fragment = openApiPaths([declared], 'T');
    expect(undocumentedRoutes([declared], fragment)).toEqual([]);
    const added = [
      declared,
      { method: 'GET', url: '/b' },
      { method: 'POST', url: '/c/:id', schema: { summary: 'C' } },
      { method: 'POST', url: '/d', schema: { summary: 'D' } },
    ];
    expect(
      undocumentedRoutes(added, openApiPaths(added, 'T'), {
        undocumented: new Map([['POST /d', 'a probe']]),
      }),
    ).toEqual([
      'GET /b: no schema.summary',
      'POST /c/:id: no schema.params',
      'POST /c/:id: no schema.body (or list it among the bodyless writes, saying why)',
    ]);
    expect(undocumentedRoutes(added, fragment).slice(0, 1)).toEqual(['GET /b: not in the document']);
  });

  it('asks, when told to, for every success answer: a 2xx with its schema or a 204, unless excepted', () => {
    const routes = [
      {
        method: 'GET',
        url: '/ok',
        schema: { summary: 'A', response: { 200: { description: 'x', schema: z.object({}) } } },
      },
      {
        method: 'DELETE',
        url: '/gone',
        schema: { summary: 'B', response: { 204: { description: 'gone' } } },
      },
      {
        method: 'GET',
        url: '/bare',
        schema: { summary: 'C', response: { 200: { description: 'no schema' } } },
      },
      { method: 'GET', url: '/none', schema: { summary: 'D' } },
      {
        method: 'GET',
        url: '/refusal-only',
        schema: { summary: 'E', response: { 404: { description: 'x', schema: z.object({}) } } },
      },
      { method: 'GET', url: '/excepted', schema: { summary: 'F' } },
    ];
    const fragment = openApiPaths(routes, 'T');
    expect(undocumentedRoutes(routes, fragment)).toEqual([]); // not asked: as before
    const responses = { except: new Map([['GET /excepted', 'a stream']]) };
    expect(undocumentedRoutes(routes, fragment, { responses })).toEqual(
      ['GET /bare', 'GET /none', 'GET /refusal-only'].map(
        (key) => `${key}: no 2xx schema.response with its schema, nor a 204 (or list it, saying why)`,
      ),
    );
  });
});
