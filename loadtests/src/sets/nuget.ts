// The NuGet set (and the CI smoke, the same pages on a small dataset): the
// dataset imported through bulk_insert, `Packages/Search` put and built, every
// page shape checked to answer something (a load test of empty answers
// measures nothing), then k6/nuget.js.
import fs from 'node:fs';
import { PACKAGES_SEARCH_INDEX } from '@rookery/datagen';
import { IndexDefinitionSchema } from '@rookery/protocol';
import { z } from 'zod';
import { nugetDataset, type SearchTerms } from '../dataset.js';
import type { GatewayClient } from '../gateway-client.js';
import { log, ProgressBar } from '../log.js';
import { INDEX, NUGET_QUERIES, type NugetQueryName } from '../nuget-queries.js';
import type { ScenarioSetDefinition } from './types.js';

const DATABASE = 'nuget';
/** Equal shares: background.md names the three tests of the seed but not their weights. */
const MIX = { browsing: 1, searching: 1, 'browse-and-search': 1 };

/** The seed's published figures (background.md), for the users counts it was run at. */
const SEED: Record<number, string> = {
  300: 'seed (2012, 8-core laptop with an SSD, server and load generator together): 300 users: 77 pages/s, 6.2 ms average page time, 0 failures',
  3000: 'seed (2012, 8-core laptop with an SSD, server and load generator together): 3,000 users stepping up by 50: 741 pages/s, 370 ms average page time, 0 failures',
};

const IndexStatsSchema = z.object({
  IsStale: z.boolean(),
  LastIndexedEtag: z.number(),
  ErrorsCount: z.number(),
});
const StatsSchema = z.object({ LastDocEtag: z.number(), CountOfDocuments: z.number() });
const QueryAnswerSchema = z.object({ Results: z.array(z.unknown()), TotalResults: z.number().optional() });

export const nugetSet: ScenarioSetDefinition = {
  script: 'nuget.js',
  database: DATABASE,
  async prepare(_stack, client, options) {
    const dataset = await nugetDataset(options.seed, options.docs);
    await importDataset(client, dataset.file, dataset.documents);
    await buildIndex(client);
    await checkPages(client, dataset.terms);
    return {
      config: { nuget: { queries: NUGET_QUERIES, terms: dataset.terms, mix: MIX } },
      seedLine: SEED[options.users] ?? null,
      description: `${options.docs.toLocaleString('en')} package versions (seed ${options.seed})`,
    };
  },
};

async function importDataset(client: GatewayClient, file: string, documents: number): Promise<void> {
  const bar = new ProgressBar('bulk insert', documents, 'documents');
  const started = performance.now();
  const stored = await client.bulkInsert(DATABASE, fs.createReadStream(file), (n) => bar.update(n));
  bar.done();
  if (stored !== documents) throw new Error(`bulk_insert stored ${stored} documents of ${documents}`);
  const seconds = (performance.now() - started) / 1000;
  log(`imported ${documents.toLocaleString('en')} documents in ${seconds.toFixed(1)} s`);
}

async function buildIndex(client: GatewayClient): Promise<void> {
  const definition = IndexDefinitionSchema.parse(PACKAGES_SEARCH_INDEX);
  await client.expect('PUT', `/databases/${DATABASE}/indexes`, definition, [200, 201]);
  const stats = StatsSchema.parse(
    (await client.expect('GET', `/databases/${DATABASE}/stats`, undefined, [200])).body,
  );
  const bar = new ProgressBar(`indexing ${INDEX}`, stats.LastDocEtag, 'etags');
  for (;;) {
    const answer = await client.expect(
      'GET',
      `/databases/${DATABASE}/indexes/stats?name=${encodeURIComponent(INDEX)}`,
      undefined,
      [200],
    );
    const index = IndexStatsSchema.parse(answer.body);
    if (index.ErrorsCount > 0)
      throw new Error(`${INDEX} has ${index.ErrorsCount} indexing errors: ${answer.text}`);
    bar.update(index.LastIndexedEtag);
    if (!index.IsStale) break;
    await new Promise((resolve) => setTimeout(resolve, 1000));
  }
  bar.done();
}

/** Every page shape once, through the gateway: each must answer 200 with something in it. */
async function checkPages(client: GatewayClient, terms: SearchTerms): Promise<void> {
  const run = async (name: NugetQueryName, parameters: Record<string, unknown>) => {
    const answer = await client.expect(
      'POST',
      `/databases/${DATABASE}/queries`,
      { Query: NUGET_QUERIES[name], QueryParameters: parameters },
      [200],
    );
    const results = QueryAnswerSchema.parse(answer.body).Results;
    if (results.length === 0) throw new Error(`the ${name} page (${JSON.stringify(parameters)}) is empty`);
    return answer.text;
  };
  await run('listing', { skip: 60 });
  for (const q of [...terms.common, ...terms.rare]) await run('search', { q, skip: 0 });
  for (const pair of terms.pairs) await run('narrow', { q: pair.join(' ') });
  await run('facets', { q: terms.common[0] });
  for (const q of terms.misspelled) {
    const text = await run('suggest', { q });
    if (!text.includes('"Suggestions":["'))
      throw new Error(`no suggestion for "${q}": ${text.slice(0, 300)}`);
  }
  log('every page shape answers (listing, searches, narrowing, facets, suggestions)');
}
