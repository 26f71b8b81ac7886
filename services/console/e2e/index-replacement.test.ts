// The Indexes page during a side-by-side replacement (docs/mirror.md, "Worker-built indexes"), in headless
// Chromium against the real stack: a changed definition of an index over a database above the worker
// threshold is built by a worker beside the old one, which answers (stale) meanwhile. The stack starts
// with no worker, so the build waits in the job queue and the replacement is held mid-build
// deterministically; starting the worker lets it build, the tenant adopt it and promote it.
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { consoleE2e, shot } from './pages.js';

const THRESHOLD = 5;
const USERS = 12;
const OLD_MAP = "map('Users', u => ({ Name: u.Name }))";
const NEW_MAP = "map('Users', u => ({ Name: u.Name, Age: u.Age }))";

const e2e = consoleE2e({
  indexWorkerThreshold: THRESHOLD,
  seed: async (admin) => {
    const users = (from: number, to: number) =>
      Array.from({ length: to - from }, (_, i) => ({
        Type: 'PUT',
        Id: `users/${from + i + 1}`,
        Document: {
          Name: `User ${from + i + 1}`,
          Age: 20 + from + i,
          '@metadata': { '@collection': 'Users' },
        },
      }));
    // Below the threshold the tenant builds the first definition itself; it keeps up with what follows.
    expect((await admin.call('POST', '/databases/shop/bulk_docs', { Commands: users(0, 3) })).status).toBe(
      201,
    );
    const made = await admin.call('PUT', '/databases/shop/indexes', {
      Name: 'Users/ByName',
      Maps: [OLD_MAP],
    });
    expect(made.status).toBe(201);
    expect(
      (await admin.call('POST', '/databases/shop/bulk_docs', { Commands: users(3, USERS) })).status,
    ).toBe(201);
    const caughtUp = await admin.call('POST', '/databases/shop/queries', {
      Query: "from index 'Users/ByName'",
      WaitForNonStaleResults: true,
    });
    expect(caughtUp.json.TotalResults).toBe(USERS);
  },
});
const { policyViolations } = e2e;
let page: Page;

beforeAll(async () => {
  ({ page } = await e2e.signedIn(await e2e.stack.person('Ada Lovelace', 'acme')));
}, 180_000);

describe('an index whose definition changes above the worker threshold', () => {
  it('says the previous definition answers while the new one builds, with its progress, then is promoted', async () => {
    await page.getByRole('link', { name: 'Indexes' }).click();
    await page.getByText('Live: progress updates as the indexer works.').waitFor();
    const row = page.locator('tr[data-index="Users/ByName"]');
    await row.getByText('Normal · up to date').waitFor();
    await expect(row.getByTestId('entries').textContent()).resolves.toBe(String(USERS));

    await page.getByRole('button', { name: 'Replace Users/ByName' }).click();
    const map = page.getByLabel('Map (JavaScript)');
    await expect.poll(() => map.inputValue()).toBe(OLD_MAP);
    await map.fill(NEW_MAP);
    await page.getByRole('button', { name: 'Save index' }).click();
    await page.getByText('Saved Users/ByName.').waitFor();

    // Held: the build waits in the queue for a worker, and the page says so in words (not colour only).
    const replacement = row.getByTestId('replacement');
    await replacement
      .getByText('Replacing: the previous definition answers until the new one has caught up.')
      .waitFor();
    await replacement.getByText(`New definition: 0 of ${USERS} documents`).waitFor();
    await replacement.getByText('Worker build: queued, waiting for a free worker').waitFor();
    await expect(
      replacement
        .getByRole('progressbar', { name: `Users/ByName's new definition: 0 of ${USERS} documents` })
        .count(),
    ).resolves.toBe(1);
    await row.getByText('Normal · stale: being replaced').waitFor();
    await expect(row.getByTestId('entries').textContent()).resolves.toBe(String(USERS));
    // What the page says is what queries get: the old definition answers, stale, and knows no Age.
    const old = await e2e.admin.call('POST', '/databases/shop/queries', {
      Query: "from index 'Users/ByName'",
    });
    expect({ total: old.json.TotalResults, stale: old.json.IsStale }).toEqual({ total: USERS, stale: true });

    // A new index above the threshold waits for a worker too: its own build is shown the same way.
    const added = await e2e.admin.call('PUT', '/databases/shop/indexes', {
      Name: 'Users/ByAge',
      Maps: ["map('Users', u => ({ Age: u.Age }))"],
    });
    expect(added.status).toBe(201);
    const addedRow = page.locator('tr[data-index="Users/ByAge"]');
    await addedRow.getByText('Worker build: queued, waiting for a free worker').waitFor();
    await shot(page, 'index-replacement');

    // The worker builds both; the tenant adopts them and the replacement takes the old one's place.
    await e2e.stack.startWorker();
    await row.getByText('Normal · up to date').waitFor({ timeout: 120_000 });
    await expect(row.getByTestId('replacement').count()).resolves.toBe(0);
    await expect(row.getByTestId('entries').textContent()).resolves.toBe(String(USERS));
    await addedRow.getByText('Normal · up to date').waitFor({ timeout: 120_000 });
    await expect(addedRow.getByText(/Worker build/).count()).resolves.toBe(0);
    const promoted = await e2e.admin.call('POST', '/databases/shop/queries', {
      Query: "from index 'Users/ByName' where Age = 20",
    });
    const names = (promoted.json.Results as { Name: string }[]).map((r) => r.Name);
    expect({ names, stale: promoted.json.IsStale }).toEqual({ names: ['User 1'], stale: false });
    expect(policyViolations).toEqual([]);
  });
});
