// An index's stats as the tenant serves them (`GET /databases/{db}/indexes/stats?name=` and the list): the
// answering index's own, with what else decides what queries on it say — a changed definition being built
// beside it (side by side, RavenDB's `ReplacementOf/<name>`), and a worker's build of either. Queries answer
// `IsStale: true` while a replacement builds (query-runner.ts), so the stats say so too, and show the
// replacement's own position inside the index it replaces: the user knows one name (docs/mirror.md).
import { awaitedBuildOf, indexStatsOf } from '@rookery/engine';
import type { IndexReplacementStats, IndexStats } from '@rookery/protocol';
import type { DatabaseQueries } from './tenant-indexing.js';
import type { WorkerBuilds } from './worker-builds.js';

/** Null when there is no index of that name. */
export function indexStatsWithBuilds(
  queries: DatabaseQueries,
  workerBuilds: WorkerBuilds,
  name: string,
): IndexStats | null {
  const reader = queries.indexes.reader(name);
  if (!reader) return null;
  const db = queries.db.name;
  // Each file carries its worker build's label: a build shows on the file it builds.
  const own = workerBuilds.statsWith(
    db,
    indexStatsOf(reader.connection, queries.db),
    awaitedBuildOf(reader.connection),
  );
  const replacement = queries.indexes.withReplacement(name, (file) =>
    workerBuilds.statsWith(db, indexStatsOf(file.connection, queries.db), awaitedBuildOf(file.connection)),
  );
  if (!replacement) return own;
  const Replacement: IndexReplacementStats = {
    LastIndexedEtag: replacement.LastIndexedEtag,
    Progress: replacement.Progress,
    EntriesCount: replacement.EntriesCount,
    ...(replacement.WorkerBuild && { WorkerBuild: replacement.WorkerBuild }),
  };
  return { ...own, IsStale: true, Replacement };
}
