// The pages of the NuGet test as RQL on `Packages/Search` (background.md): the
// package listing (not prerelease, most downloaded first, then oldest, 30 per
// page), searches on the full-text Query field with the same filter and
// order, facets on Tags over a search, and "did you mean" suggestions. Defined
// once here: the runner checks each shape answers something before the test,
// and hands the same text to the k6 scripts in their config file.

export const PAGE_SIZE = 30;
export const INDEX = 'Packages/Search';

const ORDER = 'order by DownloadCount desc, Created';

export const NUGET_QUERIES = {
  /** $skip: page × 30. */
  listing: `from index '${INDEX}' where IsPrerelease = false ${ORDER} limit ${PAGE_SIZE} offset $skip`,
  /** $q: one term (or several, any of them). */
  search: `from index '${INDEX}' where IsPrerelease = false and search(Query, $q) ${ORDER} limit ${PAGE_SIZE} offset $skip`,
  /** $q: two terms, both required: the narrowing search. */
  narrow: `from index '${INDEX}' where IsPrerelease = false and search(Query, $q, and) ${ORDER} limit ${PAGE_SIZE}`,
  /** Tag counts over a search's matches. */
  facets: `from index '${INDEX}' where IsPrerelease = false and search(Query, $q) select facet(Tags)`,
  /** $q: a misspelt term. */
  suggest: `from index '${INDEX}' select suggest(Query, $q)`,
} as const;

export type NugetQueryName = keyof typeof NUGET_QUERIES;
