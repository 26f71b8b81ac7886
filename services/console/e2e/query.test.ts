// The query page's extras in headless Chromium against the real stack (as console.test.ts): facets and
// suggestions shown as such, timings as a chart and the plan as a tree, and the export of every result as
// NDJSON and CSV through the stream API (a query the stream refuses shows why).
import fs from 'node:fs';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { consoleE2e, shot } from './pages.js';

const e2e = consoleE2e({
  seed: async (admin) => {
    for (const [id, name, city, age] of [
      ['users/1', 'Ada', 'London', 36],
      ['users/2', 'Grace', 'Paris', 45],
      ['users/3', 'Linus, "the" Finn', 'Paris', 28],
    ] as const) {
      const put = await admin.call('PUT', `/databases/shop/docs?id=${id}`, {
        Name: name,
        City: city,
        Age: age,
        '@metadata': { '@collection': 'Users' },
      });
      expect(put.status).toBe(201);
    }
    const index = await admin.call('PUT', '/databases/shop/indexes', {
      Name: 'Users/Search',
      Maps: [{ Collection: 'Users', Fields: { Text: ['Name', 'City'], City: 'City' } }],
      Fields: { Text: { Indexing: 'Search' } },
    });
    expect(index.status).toBe(201);
  },
});
const { policyViolations } = e2e;
let page: Page;

beforeAll(async () => {
  ({ page } = await e2e.signedIn(await e2e.stack.person('Ada Lovelace', 'acme')));
  await page.getByRole('link', { name: 'Query' }).click();
  await page.getByLabel(/Wait until the index has caught up/).check();
}, 180_000);

async function run(query: string): Promise<void> {
  await page.getByLabel(/Query \(RQL\)/).fill(query);
  const answered = page.waitForResponse((r) => r.url().endsWith('/databases/shop/queries'));
  await page.getByRole('button', { name: 'Run' }).click();
  expect((await answered).status()).toBe(200);
}

async function saved(format: 'NDJSON' | 'CSV'): Promise<string> {
  await page.getByRole('button', { name: `Export as ${format}` }).click();
  const link = page.getByRole('link', {
    name: new RegExp(`^Save results\\.${format.toLowerCase()} \\(\\d+ rows\\)$`),
  });
  const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
  return fs.readFileSync(await download.path(), 'utf8');
}

describe('the query page', () => {
  it('colours RQL in the editor as one types', async () => {
    await page
      .getByLabel(/Query \(RQL\)/)
      .fill("from Users where Name = 'Ada' and Age > $min // adults\nlimit 10");
    const copy = page.locator('.rql-highlight');
    await expect(copy.locator('.rql-keyword').allTextContents()).resolves.toEqual([
      'from',
      'where',
      'and',
      'limit',
    ]);
    await expect(copy.locator('.rql-string').allTextContents()).resolves.toEqual(["'Ada'"]);
    await expect(copy.locator('.rql-parameter').allTextContents()).resolves.toEqual(['$min']);
    await expect(copy.locator('.rql-comment').allTextContents()).resolves.toEqual(['// adults']);
    await expect(copy.locator('.rql-number').allTextContents()).resolves.toEqual(['10']);
    // The copy is the text exactly, under the textarea the person types in (hidden from screen readers).
    await expect(copy.textContent()).resolves.toBe(
      "from Users where Name = 'Ada' and Age > $min // adults\nlimit 10\n",
    );
    await expect(copy.getAttribute('aria-hidden')).resolves.toBe('true');
  });

  it('shows facets and suggestions as such', async () => {
    await run("from index 'Users/Search' select facet(City)");
    const facet = page.getByRole('table', { name: 'Facet City' });
    await facet.waitFor();
    await expect(facet.getByRole('row', { name: 'paris 2' }).count()).resolves.toBe(1);
    await expect(facet.getByRole('row', { name: 'london 1' }).count()).resolves.toBe(1);
    await shot(page, 'query-facets');

    await run("from index 'Users/Search' select suggest(Text, 'lndon')");
    const suggestions = page.getByRole('region', { name: 'Suggestions for Text' });
    await suggestions.waitFor();
    await expect(suggestions.getByRole('listitem').allTextContents()).resolves.toEqual(['london']);
  });

  it('charts the timings and shows the plan as a tree', async () => {
    await run("from Users where Name = 'Ada' include timings()");
    await page.getByRole('img', { name: /^Timings: .*query \d+(\.\d+)? ms/ }).waitFor();
    await run("from Users where Name = 'Ada' include explanations()");
    const plan = page.getByRole('list', { name: 'Query plan' });
    await plan.waitFor();
    await expect(plan.getByRole('listitem').first().textContent()).resolves.toMatch(/^Query/);
    await shot(page, 'query-plan');
  });

  it('exports every result as NDJSON and CSV through the stream API', async () => {
    await run('from Users order by Age');
    // The page shows this query's rows before Export is pressed, so Export streams this query.
    await page.getByRole('table', { name: '3 rows on this page' }).waitFor();
    const ndjson = (await saved('NDJSON'))
      .trimEnd()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(ndjson.map((row) => row.Name)).toEqual(['Linus, "the" Finn', 'Ada', 'Grace']);
    expect(ndjson[0]['@metadata']['@id']).toBe('users/3');

    const csv = await saved('CSV');
    expect(csv.split('\r\n')).toEqual([
      '"Name","City","Age"',
      '"Linus, ""the"" Finn","Paris","28"',
      '"Ada","London","36"',
      '"Grace","Paris","45"',
      '',
    ]);

    // Facets are not streamed: the stream's refusal is shown.
    await run("from index 'Users/Search' select facet(City)");
    await page.getByRole('table', { name: 'Facet City' }).waitFor();
    await page.getByRole('button', { name: 'Export as CSV' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toMatch(/^InvalidQuery: /);
    expect(policyViolations).toEqual([]);
  });
});
