// Rookery's API described as OpenAPI 3.1, generated from the zod schemas the routes declare. A route declares its
// request parts (URL parameters, query string, body) as `RequestPart`s in fastify's `schema` route option; the
// services' fastify apps validate the `validated` ones with `requestPartValidator` (so a refusal is the same
// 400 InvalidRequest that names the field, as parseWith gave before) and `openApiPaths` turns every route's
// declaration into the document's paths with zod's own `z.toJSONSchema`. Nothing here depends on fastify: the
// compiler's argument is typed by what it reads, so that the services (which have fastify) and this package
// (zod only) stay apart.
import { readFileSync } from 'node:fs';
import { z } from 'zod';
import { invalidRequest, ProblemSchema } from './errors.js';

/** One part of a request as a route declares it: its schema, what the refusal calls it, and who checks it. */
export class RequestPart<T extends z.ZodType = z.ZodType> {
  constructor(
    readonly schema: T,
    /** What a refusal names: "The {what} is not valid. …" (invalidRequest). */
    readonly what: string,
    /** false: the handler parses it itself (the route says why); declared for the document only. */
    readonly validated: boolean,
    /** The body's media types (default application/json). */
    readonly mediaTypes: readonly string[] = ['application/json'],
  ) {}
}

/** A part fastify checks before the handler runs; the handler reads the parsed value (defaults, coercions applied). */
export function validated<T extends z.ZodType>(schema: T, what: string): RequestPart<T> {
  return new RequestPart(schema, what, true);
}

/**
 * A part the handler parses itself, declared so that the document describes it. For the routes whose checks
 * must come in a set order (the caller's rights before the shape of its body), that take two shapes (Rookery's
 * and RavenDB's on one path), or whose body is a stream.
 */
export function documented<T extends z.ZodType>(
  schema: T,
  options: { mediaTypes?: readonly string[] } = {},
): RequestPart<T> {
  return new RequestPart(schema, '', false, options.mediaTypes);
}

/** A response as a route declares it under `schema.response[status]`. */
export interface ResponseDeclaration {
  description: string;
  /** Its JSON body's schema, where one exists. */
  schema?: z.ZodType;
  /** Default application/json. */
  mediaType?: string;
}

/** What a route declares in fastify's `schema` option; every part optional, every route summarised. */
export interface RouteSchema {
  summary?: string;
  description?: string;
  tags?: readonly string[];
  params?: RequestPart;
  querystring?: RequestPart;
  body?: RequestPart;
  response?: Record<number, ResponseDeclaration>;
}

/** The validated value, as the route's handler reads it (`request.query as Parsed<typeof Query>`). */
export type Parsed<P> = P extends RequestPart<infer T> ? z.output<T> : never;

/**
 * Fastify's validatorCompiler for routes declared with RequestPart: a validated part answers the parsed value or
 * invalidRequest's RookeryError (the error handler sends it as it is); a documented part is not checked here.
 */
export function requestPartValidator({ schema, httpPart }: { schema: unknown; httpPart?: string }) {
  if (!(schema instanceof RequestPart)) {
    throw new Error(
      `A route's ${httpPart ?? 'request'} schema must be declared with validated() or documented() from @rookery/protocol`,
    );
  }
  if (!schema.validated) return () => true;
  const part = schema;
  return (data: unknown) => {
    // Fastify hands an absent body to the validator as null: to the schema it is absent, as parseWith saw it.
    const value = httpPart === 'body' && data === null ? undefined : data;
    const result = part.schema.safeParse(value);
    return result.success ? { value: result.data } : { error: invalidRequest(result.error, part.what) };
  };
}

/**
 * Fastify's serializerCompiler: answers are sent as JSON.stringify sends them, declared response schemas or not
 * (they are zod, for the document; fastify's own serializer would read them as JSON Schema).
 */
export function jsonSerializer() {
  return (data: unknown) => JSON.stringify(data);
}

/** A route as fastify's onRoute hook sees it. */
export interface DeclaredRoute {
  method: string | readonly string[];
  url: string;
  schema?: unknown;
}

type JsonSchema = Record<string, unknown>;
export interface OpenApiOperation {
  summary?: string;
  description?: string;
  tags?: string[];
  parameters?: JsonSchema[];
  requestBody?: JsonSchema;
  responses: Record<string, JsonSchema>;
}
export type OpenApiPaths = Record<string, Record<string, OpenApiOperation>>;

/** Paths and the schemas they share (the $defs of recursive schemas, hoisted into components). */
export interface OpenApiFragment {
  paths: OpenApiPaths;
  schemas: Record<string, JsonSchema>;
}

/** `/databases/:db/docs` → `/databases/{db}/docs` */
export function openApiPath(url: string): string {
  return url.replace(/:([A-Za-z0-9_]+)/g, '{$1}');
}

/** The path parameters of a fastify URL, in order. */
function pathParameters(url: string): string[] {
  return [...url.matchAll(/:([A-Za-z0-9_]+)/g)].map((m) => m[1]!);
}

/**
 * The paths of `routes` (HEAD, which fastify adds beside every GET, left out). `prefix` names the hoisted
 * components so that fragments of several apps merge without collisions.
 */
export function openApiPaths(routes: readonly DeclaredRoute[], prefix: string): OpenApiFragment {
  const fragment: OpenApiFragment = { paths: {}, schemas: {} };
  const jsonSchemaOf = (schema: z.ZodType, io: 'input' | 'output') =>
    hoist(toJsonSchema(schema, io), fragment, prefix);
  for (const route of routes) {
    const schema = (route.schema ?? {}) as RouteSchema;
    for (const method of [route.method].flat()) {
      if (method === 'HEAD') continue;
      const path = openApiPath(route.url);
      const operation: OpenApiOperation = { responses: {} };
      if (schema.summary) operation.summary = schema.summary;
      if (schema.description) operation.description = schema.description;
      if (schema.tags) operation.tags = [...schema.tags];
      const parameters: JsonSchema[] = [];
      const paramsSchema = schema.params ? jsonSchemaOf(schema.params.schema, 'input') : undefined;
      for (const name of pathParameters(route.url)) {
        const property = (paramsSchema?.properties as Record<string, JsonSchema> | undefined)?.[name];
        parameters.push({ name, in: 'path', required: true, schema: property ?? { type: 'string' } });
      }
      if (schema.querystring)
        parameters.push(...queryParameters(jsonSchemaOf(schema.querystring.schema, 'input')));
      if (parameters.length > 0) operation.parameters = parameters;
      if (schema.body) {
        const body = jsonSchemaOf(schema.body.schema, 'input');
        operation.requestBody = {
          required: !schema.body.schema.safeParse(undefined).success,
          content: Object.fromEntries(schema.body.mediaTypes.map((type) => [type, { schema: body }])),
        };
      }
      for (const [status, response] of Object.entries(schema.response ?? {})) {
        operation.responses[status] = {
          description: response.description,
          ...(response.schema && {
            content: {
              [response.mediaType ?? 'application/json']: { schema: jsonSchemaOf(response.schema, 'output') },
            },
          }),
        };
      }
      operation.responses.default = {
        description: 'A refusal or a failure, as problem+json with a stable `code`',
        content: { 'application/problem+json': { schema: { $ref: '#/components/schemas/Problem' } } },
      };
      fragment.paths[path] ??= {};
      fragment.paths[path][method.toLowerCase()] = operation;
    }
  }
  return fragment;
}

/** What a route must declare to be documented; the CI check behind every app's openapi test. */
export interface CoverageRules {
  /** `METHOD /url` → why it stays out of the document. */
  undocumented?: ReadonlyMap<string, string>;
  /** `METHOD /url` of writes (POST, PUT, PATCH) that take no body, each for its reason. */
  bodyless?: ReadonlySet<string>;
  /**
   * Every route declares its success answer: a 2xx with its body's zod schema, or a 204 (no body). `except`:
   * `METHOD /url` → why a route declares none (an app whose answers are not all described yet leaves it out).
   */
  responses?: { except: ReadonlyMap<string, string> };
}

/**
 * What is wrong with the declarations of `routes` against `fragment` (empty: nothing): a route not in the
 * document, without a summary, without its URL parameters' schema, or a write without its body's schema.
 */
export function undocumentedRoutes(
  routes: readonly DeclaredRoute[],
  fragment: OpenApiFragment,
  rules: CoverageRules = {},
): string[] {
  const problems: string[] = [];
  for (const route of routes) {
    for (const method of [route.method].flat()) {
      const key = `${method} ${route.url}`;
      if (method === 'HEAD' || rules.undocumented?.has(key)) continue;
      const schema = (route.schema ?? {}) as RouteSchema;
      if (!fragment.paths[openApiPath(route.url)]?.[method.toLowerCase()])
        problems.push(`${key}: not in the document`);
      if (!schema.summary) problems.push(`${key}: no schema.summary`);
      if (route.url.includes(':') && !schema.params) problems.push(`${key}: no schema.params`);
      if (['POST', 'PUT', 'PATCH'].includes(method) && !schema.body && !rules.bodyless?.has(key))
        problems.push(`${key}: no schema.body (or list it among the bodyless writes, saying why)`);
      if (rules.responses && !rules.responses.except.has(key) && !declaresSuccess(schema))
        problems.push(`${key}: no 2xx schema.response with its schema, nor a 204 (or list it, saying why)`);
    }
  }
  return problems;
}

/** Whether a route declares its success answer: a 2xx whose body has a schema, or a 204 (which has none). */
function declaresSuccess(schema: RouteSchema): boolean {
  return Object.entries(schema.response ?? {}).some(
    ([status, response]) => status === '204' || (/^2\d\d$/.test(status) && response.schema !== undefined),
  );
}

/** A whole document: the fragments' paths and components, with Rookery's problem+json shape. */
export function openApiDocument(
  info: { title: string; version: string; description?: string },
  fragments: readonly OpenApiFragment[],
) {
  const paths: OpenApiPaths = {};
  const schemas: Record<string, JsonSchema> = { Problem: toJsonSchema(ProblemSchema, 'output') };
  for (const fragment of fragments) {
    for (const [path, operations] of Object.entries(fragment.paths))
      paths[path] = { ...paths[path], ...operations };
    Object.assign(schemas, fragment.schemas);
  }
  return { openapi: '3.1.0', info, paths, components: { schemas } };
}

/** The tenant API's fragment, generated at build time from the tenant's routes (services/tenant: `pnpm openapi`). */
export function tenantOpenApiFragment(): OpenApiFragment {
  // Beside src/ and dist/ alike, so the same relative URL finds it from the sources and from the build.
  return JSON.parse(
    readFileSync(new URL('../openapi/tenant.json', import.meta.url), 'utf8'),
  ) as OpenApiFragment;
}

function toJsonSchema(schema: z.ZodType, io: 'input' | 'output'): JsonSchema {
  // 'any' for what JSON Schema cannot say (a custom check, a transform's output): the refusal names it anyway.
  const { $schema: _draft, ...json } = z.toJSONSchema(schema, { io, unrepresentable: 'any' }) as JsonSchema;
  return json;
}

/** A query string's schema as one parameter per property (OpenAPI has no "object of query parameters" of its own). */
function queryParameters(schema: JsonSchema): JsonSchema[] {
  const properties = schema.properties as Record<string, JsonSchema> | undefined;
  if (!properties) return [{ name: 'query', in: 'query', style: 'form', explode: true, schema }];
  const required = new Set((schema.required as string[] | undefined) ?? []);
  return Object.entries(properties).map(([name, property]) => ({
    name,
    in: 'query',
    required: required.has(name),
    schema: property,
  }));
}

/** Each fragment's hoisted components by the text of the $def they came from: one component per recursive schema. */
const hoisted = new WeakMap<OpenApiFragment, Map<string, string>>();

/** Moves a schema's $defs (recursive schemas) into the fragment's components, rewriting its $refs to them. */
function hoist(schema: JsonSchema, fragment: OpenApiFragment, prefix: string): JsonSchema {
  const defs = (schema.$defs ?? {}) as Record<string, JsonSchema>;
  delete schema.$defs;
  const known = hoisted.get(fragment) ?? new Map<string, string>();
  hoisted.set(fragment, known);
  const names = new Map<string, string>();
  const added: string[] = [];
  for (const [name, def] of Object.entries(defs)) {
    const text = JSON.stringify(def);
    let target = known.get(text);
    if (!target) {
      target = `${prefix}${known.size}_${name.replace(/[^A-Za-z0-9_]/g, '')}`;
      known.set(text, target);
      fragment.schemas[target] = def;
      added.push(target);
    }
    names.set(`#/$defs/${name}`, `#/components/schemas/${target}`);
  }
  const rewrite = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(rewrite);
    if (value === null || typeof value !== 'object') return value;
    return Object.fromEntries(
      Object.entries(value).map(([key, inner]) => [
        key,
        key === '$ref' && typeof inner === 'string' ? (names.get(inner) ?? inner) : rewrite(inner),
      ]),
    );
  };
  // A schema recursive at its root refers to itself as "#", which in the document would be the document.
  const selfReferring = JSON.stringify(schema).includes('"$ref":"#"');
  let root: string | undefined;
  if (selfReferring) {
    root = `${prefix}${known.size}_root`;
    known.set(`root:${root}`, root);
    names.set('#', `#/components/schemas/${root}`);
  }
  for (const target of added) fragment.schemas[target] = rewrite(fragment.schemas[target]) as JsonSchema;
  const rewritten = rewrite(schema) as JsonSchema;
  if (!root) return rewritten;
  fragment.schemas[root] = rewritten;
  return { $ref: `#/components/schemas/${root}` };
}
