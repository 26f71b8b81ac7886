import {
  isRavenDatabaseRecord,
  RavenDatabaseRecordSchema,
  RavenDeleteDatabasesSchema,
  RookeryError,
} from '@rookery/protocol';
import type { FastifyRequest } from 'fastify';
import { z } from 'zod';
import { parseWith, type RouteContext } from '../context.js';
import { createDatabase, deleteDatabase } from '../database-admin.js';

export { isRavenDatabaseRecord };

export const CreateQuerySchema = z.object({
  name: z.string().optional(),
  replicationFactor: z.coerce
    .number()
    .int()
    .refine((factor) => factor === 1, {
      message: "a Rookery database is served by one node (its copy in the mirror is the platform's): send 1",
    })
    .optional(),
});

/**
 * `PUT /admin/databases?name=&replicationFactor=` with a DatabaseRecord (RavenDB's CreateDatabaseOperation):
 * Rookery's create, answered with what the client reads (`Name`, `RaftCommandIndex`: 0, Rookery has no Raft
 * log) and Rookery's own `DatabaseId`.
 */
export function createRavenDatabase(context: RouteContext, request: FastifyRequest) {
  const record = parseWith(RavenDatabaseRecordSchema, request.body, 'database record');
  const { name } = parseWith(CreateQuerySchema, request.query, 'query string');
  if (name !== undefined && name !== record.DatabaseName) {
    throw new RookeryError(
      'InvalidRequest',
      `The query string names database ${name} and the record ${record.DatabaseName}: send the same name in both`,
    );
  }
  const created = createDatabase(context, record.DatabaseName);
  return { ...created, RaftCommandIndex: 0, NodesAddedTo: [] as string[] };
}

/**
 * `DELETE /admin/databases` with `{DatabaseNames, HardDelete: true}` (RavenDB's DeleteDatabasesOperation).
 * Every name is checked before any database is deleted, so a batch naming one that does not exist deletes
 * nothing.
 */
export async function deleteRavenDatabases(context: RouteContext, request: FastifyRequest) {
  const { DatabaseNames } = parseWith(RavenDeleteDatabasesSchema, request.body, 'databases to delete');
  for (const name of DatabaseNames) context.catalog.get(name); // 404 DatabaseNotFound
  for (const name of DatabaseNames) await deleteDatabase(context, name);
  return { RaftCommandIndex: 0, PendingDeletes: [] as string[] };
}
