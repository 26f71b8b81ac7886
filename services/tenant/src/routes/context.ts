import type { Database, DatabaseCatalog } from '@rookery/engine';
import { invalidRequest, type RequestPart, validated } from '@rookery/protocol';
import type { FastifyRequest, FastifyTypeProvider } from 'fastify';
import { z } from 'zod';
import type { TenantConfig } from '../config.js';
import type { StorageMeter } from '../http/storage-quota.js';
import type { TenantIndexing } from '../indexing/tenant-indexing.js';

/** What every route plugin gets: the tenant's databases, their indexing and the service configuration. */
export interface RouteContext {
  catalog: DatabaseCatalog;
  indexing: TenantIndexing;
  config: TenantConfig;
  /** What the tenant stores, for its storage quota (http/storage-quota.ts). */
  storage: StorageMeter;
}

/** The database named in the URL, opened on first use; 404 `DatabaseNotFound` when it was never created. */
export function databaseOf(context: RouteContext, request: FastifyRequest): Database {
  const { db } = request.params as { db: string };
  return context.catalog.get(db);
}

/** Parses part of a request with a zod schema, turning failures into a 400 that names the field. */
export function parseWith<T extends z.ZodType>(schema: T, value: unknown, what: string): z.infer<T> {
  const result = schema.safeParse(value);
  if (!result.success) throw invalidRequest(result.error, what);
  return result.data;
}

/**
 * Routes declare their request parts in fastify's `schema` option with `validated()`/`documented()` (protocol's
 * openapi.ts): fastify checks them before the handler (server.ts sets the compiler) and the OpenAPI document is
 * generated from them. With this provider (`app.withTypeProvider<RequestParts>()`) a handler reads the parsed
 * value with its type.
 */
export interface RequestParts extends FastifyTypeProvider {
  validator: this['schema'] extends RequestPart<infer T> ? z.output<T> : unknown;
  serializer: unknown;
}

/** `{db}` in a database's routes: any text; the catalog answers 404 DatabaseNotFound (or 400) for a bad name. */
export const DatabaseParams = validated(z.object({ db: z.string() }), 'URL');
