import type { RouteContext } from './context.js';

// Creating and deleting a database, shared by Rookery's routes (databases.ts) and RavenDB's (ravendb/databases.ts).

/** Creates database `name` (409 DatabaseAlreadyExists if it exists, in any case). */
export function createDatabase(context: RouteContext, name: string): { Name: string; DatabaseId: string } {
  const db = context.catalog.create(name);
  return { Name: db.name, DatabaseId: db.databaseId };
}

/** Deletes database `name` with its files and indexes; 404 DatabaseNotFound before touching anything. */
export async function deleteDatabase(context: RouteContext, name: string): Promise<void> {
  context.catalog.get(name); // 404 before touching the indexer
  await context.indexing.forget(name);
  await context.catalog.delete(name);
}
