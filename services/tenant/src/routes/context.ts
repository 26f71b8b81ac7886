import type { Database, DatabaseCatalog } from '@rookery/engine';
import { invalidRequest } from '@rookery/protocol';
import type { FastifyRequest } from 'fastify';
import type { z } from 'zod';
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
