// Diagnostic (not committed): where does the tenant spend CPU per NuGet page?
import fs from 'node:fs';
import { PACKAGES_SEARCH_INDEX } from '@rookery/datagen';
import { nugetDataset } from './dataset.js';
import { GatewayClient } from './gateway-client.js';
import { NUGET_QUERIES } from './nuget-queries.js';
import { startStack } from './stack.js';

fs.mkdirSync('/tmp/prof', { recursive: true });
const stack = await startStack({
  tenantId: 'loadtest',
  keepData: false,
  env: { ROOKERY_TENANT_ENTRY: '/tmp/prof-wrapper.mjs', ROOKERY_SPARE_PROCESSES: '0' },
});
try {
  const c = new GatewayClient(stack.url, stack);
  await c.expect('PUT', '/admin/databases', { Name: 'nuget' }, [201]);
  const ds = await nugetDataset(1, 100_000);
  await c.bulkInsert('nuget', fs.createReadStream(ds.file), () => {});
  await c.call('PUT', '/databases/nuget/indexes', PACKAGES_SEARCH_INDEX);
  for (;;) {
    const s = await c.call('GET', '/databases/nuget/indexes/stats?name=Packages/Search');
    if ((s.body as { IsStale: boolean }).IsStale === false) break;
    await new Promise((r) => setTimeout(r, 1000));
  }
  const shapes: [keyof typeof NUGET_QUERIES, (i: number) => object][] = [
    ['listing', (i) => ({ skip: (i % 3) * 30 })],
    ['search', (i) => ({ q: ds.terms.common[i % 8], skip: 0 })],
    ['search', (i) => ({ q: ds.terms.rare[i % ds.terms.rare.length], skip: 0 })],
    ['narrow', (i) => ({ q: ds.terms.pairs[i % ds.terms.pairs.length]!.join(' ') })],
    ['facets', (i) => ({ q: ds.terms.common[i % 8] })],
    ['suggest', (i) => ({ q: ds.terms.misspelled[i % ds.terms.misspelled.length] })],
  ];
  for (const [name, params] of shapes) {
    const t = performance.now();
    let n = 0;
    for (; performance.now() - t < 4000; n++) {
      const a = await c.call('POST', '/databases/nuget/queries', {
        Query: NUGET_QUERIES[name],
        QueryParameters: params(n),
      });
      if (a.status !== 200) throw new Error(a.text);
    }
    console.log(name, n, 'in 4 s', ((performance.now() - t) / n).toFixed(2), 'ms each');
  }
  await c.close();
} finally {
  await stack.stop();
}
