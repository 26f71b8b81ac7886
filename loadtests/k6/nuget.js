// The NuGet performance test (background.md), through the gateway with a
// client certificate: Browsing (listing pages 0–2), Searching (a common term,
// a rare term, a narrowing search with two terms, facets on Tags, a misspelling
// that gets "did you mean" suggestions) and BrowseAndSearch, drawn per
// iteration by the mix, with think time after every page.
import http from 'k6/http';
import { baseOptions, config, page, pick, pickTest, runTest } from './lib.js';

export { handleSummary } from './lib.js';

export const options = baseOptions();

const url = `${config.baseUrl}/databases/${config.database}/queries`;
const params = { headers: { 'content-type': 'application/json' } };
const { queries, terms } = config.nuget;

/** One page: `pageName` in the report, `queryName` one of the runner's queries. */
function query(pageName, queryName, test, parameters, ok) {
  const body = JSON.stringify({ Query: queries[queryName], QueryParameters: parameters });
  return page(pageName, test, () => http.post(url, body, { ...params, tags: { name: pageName } }), ok);
}

// Cheap checks on the text: parsing every answer would make k6 the bottleneck at thousands of users.
const hasResults = (res) => res.status === 200 && res.body.indexOf('"Results":[{') !== -1;
const hasFacets = (res) => res.status === 200 && res.body.indexOf('"Values":[{') !== -1;
const hasSuggestions = (res) => res.status === 200 && res.body.indexOf('"Suggestions":["') !== -1;

const listing = (test, n) => () => query(`listing-${n}`, 'listing', test, { skip: n * 30 }, hasResults);

const tests = {
  browsing: () => [listing('browsing', 0), listing('browsing', 1), listing('browsing', 2)],
  searching: () => {
    const common = pick(terms.common);
    const t = 'searching';
    return [
      () => query('search-common', 'search', t, { q: common, skip: 0 }, hasResults),
      () => query('search-rare', 'search', t, { q: pick(terms.rare), skip: 0 }, hasResults),
      () => query('search-narrow', 'narrow', t, { q: pick(terms.pairs).join(' ') }, hasResults),
      () => query('facets-tags', 'facets', t, { q: common }, hasFacets),
      () => query('did-you-mean', 'suggest', t, { q: pick(terms.misspelled) }, hasSuggestions),
    ];
  },
  'browse-and-search': () => {
    const common = pick(terms.common);
    const t = 'browse-and-search';
    return [
      listing(t, 0),
      () => query('search-common', 'search', t, { q: common, skip: 0 }, hasResults),
      () => query('search-page-1', 'search', t, { q: common, skip: 30 }, hasResults),
      listing(t, 1),
    ];
  },
};

export default function () {
  const test = pickTest(config.nuget.mix);
  runTest(test, tests[test]());
}
