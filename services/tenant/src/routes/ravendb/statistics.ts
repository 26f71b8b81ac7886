import { indexStatsOf } from '@rookery/engine';
import type { RouteContext } from '../context.js';

/**
 * One index as RavenDB's `DatabaseStatistics.Indexes` lists it: its clients wait for indexing by polling these
 * until none is stale (`IsStale`), and fail the wait on `State: "Error"`. Lock mode and priority are not
 * Rookery notions: every index answers RavenDB's defaults.
 */
export interface RavenIndexInformation {
  Name: string;
  IsStale: boolean;
  State: 'Normal' | 'Error';
  LockMode: 'Unlock';
  Priority: 'Normal';
  Type: string;
  SourceType: 'Documents';
  LastIndexingTime: null;
}

/** Every index of database `name` (automatic ones too), as RavenIndexInformation. */
export async function ravenIndexesOf(context: RouteContext, name: string): Promise<RavenIndexInformation[]> {
  const queries = await context.indexing.forDatabase(name);
  const listed: RavenIndexInformation[] = [];
  for (const definition of queries.indexes.definitions()) {
    const reader = queries.indexes.reader(definition.Name);
    if (!reader) continue; // dropped since the list was read
    const stats = indexStatsOf(reader.connection, queries.db);
    listed.push({
      Name: stats.Name,
      IsStale: stats.IsStale,
      State: stats.State,
      LockMode: 'Unlock',
      Priority: 'Normal',
      Type: stats.Type,
      SourceType: 'Documents',
      LastIndexingTime: null,
    });
  }
  return listed;
}
