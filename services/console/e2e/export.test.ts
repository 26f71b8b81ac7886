// Export streamed into a file the person picked, in headless Chromium against the real stack (as
// console.test.ts). The File System Access picker is a browser dialog headless Chromium cannot answer, so
// the page gets a picker (an init script, outside the page's CSP) whose file records what is written to
// it: 12,000 rows arrive as several writes, then one close — the page never wrote them as one string —
// and a stream the tenant refuses leaves the file aborted, never closed.
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { consoleE2e } from './pages.js';

const ROWS = 12_000;

/** The picker the page gets: its file's writes, closes and aborts, in window.exported. */
const PICKER = `
  window.exported = { writes: [], closed: 0, aborted: 0 };
  window.showSaveFilePicker = async () => ({
    createWritable: async () => ({
      write: async (data) => { window.exported.writes.push(data); },
      close: async () => { window.exported.closed++; },
      abort: async () => { window.exported.aborted++; },
    }),
  });
`;

interface Exported {
  writes: string[];
  closed: number;
  aborted: number;
}

const e2e = consoleE2e({
  seed: async (admin) => {
    for (let start = 0; start < ROWS; start += 2_000) {
      const Commands = Array.from({ length: 2_000 }, (_, i) => ({
        Type: 'PUT',
        Id: `items/${start + i + 1}`,
        Document: { N: start + i + 1, '@metadata': { '@collection': 'Items' } },
      }));
      expect((await admin.call('POST', '/databases/shop/bulk_docs', { Commands })).status).toBe(201);
    }
    // A small collection with an index to ask facets of: a query the page runs and the stream refuses.
    for (const [id, kind] of [
      ['tags/1', 'red'],
      ['tags/2', 'blue'],
    ] as const) {
      const put = await admin.call('PUT', `/databases/shop/docs?id=${id}`, {
        Kind: kind,
        '@metadata': { '@collection': 'Tags' },
      });
      expect(put.status).toBe(201);
    }
    const index = await admin.call('PUT', '/databases/shop/indexes', {
      Name: 'Tags/ByKind',
      Maps: [{ Collection: 'Tags', Fields: { Kind: 'Kind' } }],
    });
    expect(index.status).toBe(201);
  },
});
const { policyViolations } = e2e;
let page: Page;

beforeAll(async () => {
  ({ page } = await e2e.signedIn(await e2e.stack.person('Ada Lovelace', 'acme'), { initScript: PICKER }));
  await page.getByRole('link', { name: 'Query' }).click();
}, 180_000);

async function run(query: string): Promise<void> {
  await page.getByLabel(/Query \(RQL\)/).fill(query);
  const answered = page.waitForResponse((r) => r.url().endsWith('/databases/shop/queries'));
  await page.getByRole('button', { name: 'Run' }).click();
  expect((await answered).status()).toBe(200);
}

const exported = () => page.evaluate<Exported>('window.exported');

describe('export straight to a file', () => {
  it('writes the rows as they arrive, in parts, then closes the file', async () => {
    await run('from Items');
    await page.getByLabel(/Write straight to a file/).check();
    await page.getByRole('button', { name: 'Export as NDJSON' }).click();
    await page
      .getByRole('status')
      .filter({ hasText: `Written: ${ROWS} rows.` })
      .waitFor();
    const file = await exported();
    expect([file.closed, file.aborted]).toEqual([1, 0]);
    expect(file.writes.length).toBeGreaterThanOrEqual(3);
    const lines = file.writes.join('').split('\n').filter(Boolean);
    expect(lines).toHaveLength(ROWS);
    expect(new Set(lines.map((line) => (JSON.parse(line) as { N: number }).N)).size).toBe(ROWS);
  });

  it('aborts the file when the stream refuses the query, and keeps nothing', async () => {
    await page.evaluate('window.exported = { writes: [], closed: 0, aborted: 0 }');
    await page.getByLabel(/Wait until the index has caught up/).check();
    await run("from index 'Tags/ByKind' select facet(Kind)");
    await page.getByRole('table', { name: 'Facet Kind' }).waitFor();
    await page.getByRole('button', { name: 'Export as CSV' }).click();
    await page.getByRole('alert').filter({ hasText: 'InvalidQuery' }).waitFor();
    const file = await exported();
    expect([file.closed, file.aborted, file.writes.join('')]).toEqual([0, 1, '']);
  });

  it('needed nothing the Content-Security-Policy forbids', () => {
    expect(policyViolations).toEqual([]);
  });
});
