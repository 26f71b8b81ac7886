// The Indexes page and what a role may see, in headless Chromium against the real stack (as
// console.test.ts): a JavaScript index refused by the tenant then saved, its progress followed live from
// the changes feed, declarative validation, reset and delete with confirmation; a read-only person who
// sees no change buttons and whose change the gateway still refuses; axe-core on every page.
import { type Client, type Stack, startStack } from '@rookery/gateway/testing';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, personContext } from './browser.js';
import { accessibilityViolations, DIST, shot, signIn, watchPolicy } from './pages.js';

let stack: Stack;
let admin: Client;
let browser: Browser;
let context: BrowserContext;
let page: Page;
const policyViolations: string[] = [];

beforeAll(async () => {
  stack = await startStack({ consoleDir: DIST });
  admin = await stack.tenantAdmin({ id: 'acme', name: 'Acme' }, 'ops');
  await stack.running('acme');
  expect((await admin.call('PUT', '/admin/databases', { Name: 'shop' })).status).toBe(201);
  for (const [id, name, age] of [
    ['users/1', 'Ada', 36],
    ['users/2', 'Grace', 45],
    ['users/3', 'Linus', 28],
  ] as const) {
    const put = await admin.call('PUT', `/databases/shop/docs?id=${id}`, {
      Name: name,
      Age: age,
      '@metadata': { '@collection': 'Users' },
    });
    expect(put.status).toBe(201);
  }
  const person = await stack.person('Ada Lovelace', 'acme');
  browser = await launchChromium();
  context = await personContext(browser, stack.gateway.url, person.client);
  page = await context.newPage();
  watchPolicy(page, policyViolations);
  await page.goto(stack.gateway.url);
  await signIn(page, person.secret);
}, 180_000);

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await stack?.close();
});

async function indexNames(): Promise<string[]> {
  const reply = await admin.call('GET', '/databases/shop/indexes?namesOnly=true');
  expect(reply.status).toBe(200);
  return reply.json.Results as string[];
}

describe('the Indexes page', () => {
  it('creates a JavaScript index (the tenant refuses a broken map first) and follows it live', async () => {
    await page.getByRole('link', { name: 'Indexes' }).click();
    // The watch is confirmed before the list is read, so no batch completes unseen.
    await page.getByText('Live: progress updates as the indexer works.').waitFor();
    await page.getByText('No index yet.', { exact: false }).waitFor();
    expect(await accessibilityViolations(page)).toEqual([]);

    await page.getByRole('button', { name: 'New index' }).click();
    await page.getByLabel('Name').fill('Users/ByAge');
    const map = page.getByLabel('Map (JavaScript)');
    await map.fill("map('Users', u => ({ Age: u.Age )");
    await page.getByRole('button', { name: 'Save index' }).click();
    const refusal = page.getByRole('alert');
    await expect(refusal.textContent()).resolves.toMatch(/^InvalidIndexDefinition: /);
    expect(await indexNames()).toEqual([]);

    await map.fill("map('Users', u => ({ Age: u.Age, Name: u.Name }))");
    await page.getByRole('button', { name: 'Save index' }).click();
    await page.getByText('Saved Users/ByAge.').waitFor();
    const row = page.locator('tr[data-index="Users/ByAge"]');
    await row.getByText('Normal · up to date').waitFor();
    await expect(row.getByTestId('entries').textContent()).resolves.toBe('3');
    expect(await indexNames()).toEqual(['Users/ByAge']);

    // A write elsewhere: the row follows from the changes feed, without a reload.
    const put = await admin.call('PUT', '/databases/shop/docs?id=users/4', {
      Name: 'Barbara',
      Age: 52,
      '@metadata': { '@collection': 'Users' },
    });
    expect(put.status).toBe(201);
    await row.getByTestId('entries').getByText('4', { exact: true }).waitFor();
    await shot(page, 'indexes');
  });

  it('checks a declarative definition as one types and shows what the tenant refuses', async () => {
    await page.getByRole('button', { name: 'New index' }).click();
    await page.getByLabel('Name').fill('Users/ByName');
    await page.getByRole('radio', { name: 'Declarative (JSON)' }).check();
    const json = page.getByLabel('Maps, Reduce and Fields (JSON)');
    await json.fill('{"Maps": [');
    await expect(page.locator('#index-validation').textContent()).resolves.toContain('Not valid JSON');
    await expect(page.getByRole('button', { name: 'Save index' }).isDisabled()).resolves.toBe(true);

    // Well-formed JSON the tenant's schema refuses: a map without fields.
    await json.fill('{"Maps": [{"Collection": "Users", "Fields": {}}]}');
    await page.getByRole('button', { name: 'Save index' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('a map needs at least one field');

    await json.fill('{"Maps": [{"Collection": "Users", "Fields": {"Name": "Name"}}]}');
    await page.getByRole('button', { name: 'Save index' }).click();
    await page.getByText('Saved Users/ByName.').waitFor();
    await page.locator('tr[data-index="Users/ByName"]').getByText('Normal · up to date').waitFor();
  });

  it('resets and deletes an index after a confirmation', async () => {
    await page.getByRole('button', { name: 'Reset Users/ByName' }).click();
    await page.getByRole('button', { name: 'Reset Users/ByName for good' }).click();
    await page.getByText('Reset Users/ByName: it is built again from the first document.').waitFor();

    await page.getByRole('button', { name: 'Delete Users/ByName' }).click();
    // Cancelling keeps it.
    await page.getByRole('button', { name: 'Cancel' }).click();
    expect(await indexNames()).toContain('Users/ByName');
    await page.getByRole('button', { name: 'Delete Users/ByName' }).click();
    await page.getByRole('button', { name: 'Delete Users/ByName for good' }).click();
    await page.getByText('Deleted Users/ByName.').waitFor();
    await expect(page.locator('tr[data-index="Users/ByName"]').count()).resolves.toBe(0);
    expect(await indexNames()).toEqual(['Users/ByAge']);
    expect(policyViolations).toEqual([]);
  });
});

describe('a read-only person', () => {
  it('sees no change buttons, and the gateway refuses the change all the same', async () => {
    const reader = await stack.person('Rita Reader', 'acme', {
      kind: 'database',
      access: { shop: 'read-only' },
    });
    const readerContext = await personContext(browser, stack.gateway.url, reader.client);
    try {
      const readerPage = await readerContext.newPage();
      watchPolicy(readerPage, policyViolations);
      await readerPage.goto(stack.gateway.url);
      await signIn(readerPage, reader.secret);

      await readerPage.getByRole('button', { name: /^Users\s*4$/ }).click();
      await readerPage.getByRole('button', { name: 'users/3', exact: true }).click();
      const editor = readerPage.getByLabel('Document (JSON)');
      await expect.poll(() => editor.inputValue()).toContain('"Linus"');
      await readerPage.getByText('This certificate may only read database shop.').waitFor();
      await expect(editor.getAttribute('readonly')).resolves.not.toBeNull();
      for (const name of ['Save', 'Delete', 'New document']) {
        await expect(readerPage.getByRole('button', { name, exact: true }).count()).resolves.toBe(0);
      }
      expect(await accessibilityViolations(readerPage)).toEqual([]);

      await readerPage.getByRole('link', { name: 'Indexes' }).click();
      const row = readerPage.locator('tr[data-index="Users/ByAge"]');
      await row.waitFor();
      await expect(readerPage.getByRole('button', { name: 'New index' }).count()).resolves.toBe(0);
      await expect(row.getByRole('button').count()).resolves.toBe(0);
      await shot(readerPage, 'indexes-read-only');

      // What the page hides, the gateway refuses: the same session, its CSRF token, sent by hand.
      const [saveStatus, indexStatus] = await readerPage.evaluate<[string, string]>(`(async () => {
        const session = await fetch('/auth/session').then((r) => r.json());
        const send = async (method, path, body) => {
          const r = await fetch(path, { method, headers: { 'content-type': 'application/json',
            'x-rookery-csrf': session.CsrfToken }, body: JSON.stringify(body) });
          return r.status + ' ' + (await r.json()).detail;
        };
        return [
          await send('PUT', '/databases/shop/docs?id=users/3', { Name: 'Rewritten by a reader' }),
          await send('PUT', '/databases/shop/indexes', { Name: 'Users/ByAge', Maps: ["map('Users', u => ({ X: 1 }))"] }),
        ];
      })()`);
      expect(saveStatus).toBe('403 This certificate may only read database shop.');
      expect(indexStatus).toBe('403 This certificate may only read database shop.');
      const stored = await admin.call('GET', '/databases/shop/docs?id=users/3');
      expect((stored.json.Results as unknown[])[0]).toMatchObject({ Name: 'Linus' });
    } finally {
      await readerContext.close();
    }
    expect(policyViolations).toEqual([]);
  });
});
