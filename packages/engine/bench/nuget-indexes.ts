import { PACKAGES_SEARCH_INDEX } from '@rookery/datagen';
import type { IndexDefinition } from '@rookery/protocol';

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
