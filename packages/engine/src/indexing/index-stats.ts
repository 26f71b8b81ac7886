// An index's stats as its file and the documents say them: what the indexer reports, the tenant's routes
// answer and queries judge staleness by (the collections an index reads, from its definition alone).
import type { IndexBuildProgress, IndexDefinition, IndexStats } from '@rookery/protocol';
import type BetterSqlite3 from 'better-sqlite3';
import type { ProgressOptions } from './index-progress.js';

/** What index stats read of a database's documents: `Database` in the tenant, `DocumentSource` in the indexer. */
export interface IndexedDocuments {
  hasChangesAfter(collections: readonly string[] | null, etag: number): boolean;
  progressAfter(
    collections: readonly string[] | null,
    etag: number,
    options: ProgressOptions,
  ): IndexBuildProgress;
}

/** Index stats read from the index file (by the indexer or by a reader). */
export function indexStatsOf(db: BetterSqlite3.Database, documents: IndexedDocuments): IndexStats {
  const meta = new Map(
    (db.prepare('SELECT key, value FROM meta').all() as { key: string; value: string | number }[]).map(
      (r) => [r.key, r.value],
    ),
  );
  const definition = JSON.parse(String(meta.get('definition'))) as IndexDefinition;
  const lastEtag = Number(meta.get('last_etag') ?? 0);
  const collections = collectionsOf(definition);
  const stale = documents.hasChangesAfter(collections, lastEtag);
  const errors = db.prepare('SELECT at, document, error FROM errors ORDER BY id DESC LIMIT 20').all() as {
    at: number;
    document: string | null;
    error: string;
  }[];
  const errorsCount = (db.prepare('SELECT count(*) AS n FROM errors').get() as { n: number }).n;
  return {
    Name: definition.Name,
    Type: definition.Name.startsWith('Auto/') ? 'AutoMap' : definition.Reduce ? 'MapReduce' : 'Map',
    Collections: collections ?? ['@all_docs'],
    LastIndexedEtag: lastEtag,
    IsStale: stale,
    Progress: stale
      ? documents.progressAfter(collections, lastEtag, {
          includeArchived: definition.IncludeArchived === true,
        })
      : null,
    EntriesCount: Number(meta.get('entries') ?? 0),
    ErrorsCount: errorsCount,
    Errors: errors.map((e) => ({ Document: e.document, Error: e.error, At: new Date(e.at).toISOString() })),
    State: errorsCount > 0 && Number(meta.get('entries') ?? 0) === 0 ? 'Error' : 'Normal',
  };
}

/**
 * Collections an index reads, from its definition alone (JavaScript maps are
 * read for their `map('Collection', …)` calls): readers must know them
 * without running tenant code.
 */
export function collectionsOf(definition: IndexDefinition): string[] | null {
  const names: string[] = [];
  for (const map of definition.Maps) {
    if (typeof map === 'string') {
      for (const match of map.matchAll(/\bmap\s*\(\s*(['"])((?:(?!\1).)+)\1/g)) names.push(match[2] ?? '');
    } else names.push(map.Collection);
  }
  if (names.includes('@all_docs')) return null;
  return [...new Map(names.map((n) => [n.toLowerCase(), n])).values()];
}
