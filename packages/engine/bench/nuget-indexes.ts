import path from 'node:path';
import { PACKAGES_SEARCH_INDEX } from '@rookery/datagen';
import type { IndexDefinition } from '@rookery/protocol';
import { DatabaseIndexer } from '../src/indexing/database-indexer.js';
import { INDEXES_DIRECTORY, indexFileName } from '../src/indexing/index-file.js';
import { log } from './stats.js';

/** The benchmarks' map index over NuGet-like package versions: five exact fields and one full-text field. */
export const BY_FIELDS_INDEX: IndexDefinition = {
  Name: 'Packages/ByFields',
  Maps: [
    {
      Collection: 'Packages',
      Fields: {
        PackageId: 'PackageId',
        IsPrerelease: 'IsPrerelease',
        DownloadCount: 'DownloadCount',
        Created: 'Created',
        Tags: 'Tags',
        Query: ['Tags', 'Title', 'PackageId'],
      },
    },
  ],
  Fields: { Query: { Indexing: 'Search' } },
};

/** The NuGet test's map/reduce index (background.md), grouped by (PackageId, IsPrerelease). */
export const SEARCH_INDEX: IndexDefinition = PACKAGES_SEARCH_INDEX;

/** Builds BY_FIELDS_INDEX over the documents in `dir` (the indexer on this thread), logging how long it took; returns its file. */
export function buildByFields(dir: string): string {
  const started = performance.now();
  const indexer = new DatabaseIndexer(dir);
  indexer.put(BY_FIELDS_INDEX);
  indexer.runUntilIdle();
  indexer.close();
  log(`rookery index built in ${((performance.now() - started) / 1000).toFixed(1)} s`);
  return path.join(dir, INDEXES_DIRECTORY, indexFileName(BY_FIELDS_INDEX.Name));
}
