import { type IndexDefinition, RookeryError } from '@rookery/protocol';
import type { DatabaseQueries } from '../indexing/tenant-indexing.js';
import type { RouteContext } from './context.js';

// Its own module because both Rookery's index routes (indexes.ts) and RavenDB's (ravendb/indexes.ts) store
// definitions through it, and indexes.ts hands RavenDB's wrapped bodies to ravendb/indexes.ts: kept in either,
// the two would import each other.

/** Creates or replaces a static index (names under `Auto/` belong to automatic indexes). */
export function defineStaticIndex(
  context: RouteContext,
  queries: DatabaseQueries,
  definition: IndexDefinition,
): Promise<{ created: boolean }> {
  if (definition.Name.toLowerCase().startsWith('auto/')) {
    throw new RookeryError(
      'InvalidIndexDefinition',
      'Names starting with "Auto/" are reserved for automatic indexes; pick another name',
    );
  }
  return context.indexing.defineIndex(queries.db, definition);
}
