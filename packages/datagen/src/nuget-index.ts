// The `Packages/Search` index of the NuGet performance test (background.md), as
// an index definition for `PUT /databases/{db}/indexes`: one entry per package
// version mapped to {PackageId, IsPrerelease, DownloadCount, Created, Tags,
// Query = Tags + Title + PackageId}, reduced by (PackageId, IsPrerelease) to
// the sum of downloads, the earliest Created and the distinct Tags and Query
// terms; Query is full text with suggestions. Shared here, beside the
// documents it indexes, so the engine's query benchmark and the k6 load tests
// measure the same index. A plain object: this package has no dependencies, and
// the shape is checked where it is used (IndexDefinitionSchema in @rookery/protocol).
export const PACKAGES_SEARCH_INDEX = {
  Name: 'Packages/Search',
  Maps: [
    {
      Collection: 'Packages',
      Fields: {
        PackageId: 'PackageId',
        IsPrerelease: 'IsPrerelease',
        DownloadCount: 'VersionDownloadCount',
        Created: 'Created',
        Tags: 'Tags',
        Query: ['Tags', 'Title', 'PackageId'],
      },
    },
  ],
  Reduce: {
    GroupBy: ['PackageId', 'IsPrerelease'],
    Aggregate: {
      DownloadCount: { Sum: 'DownloadCount' },
      Created: { Min: 'Created' },
      Tags: { Distinct: 'Tags' },
      Query: { Distinct: 'Query' },
    },
  },
  Fields: { Query: { Indexing: 'Search' as const, Suggestions: true } },
};
