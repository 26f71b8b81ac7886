// The Indexes page and what a role may see, in headless Chromium against the real stack (as
// console.test.ts): a JavaScript index refused by the tenant then saved, its progress followed live from
// the changes feed, declarative validation, reset and delete with confirmation; a read-only person who
// sees no change buttons and whose change the gateway still refuses; axe-core on every page.
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { personContext } from './browser.js';
import { accessibilityViolations, consoleE2e, shot, signIn, watchPolicy } from './pages.js';

const e2e = consoleE2e({
  seed: async (admin) => {
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
  },
});
const { policyViolations } = e2e;
let page: Page;

beforeAll(async () => {
  ({ page } = await e2e.signedIn(await e2e.stack.person('Ada Lovelace', 'acme')));
}, 180_000);

async function indexNames(): Promise<string[]> {
  const reply = await e2e.admin.call('GET', '/databases/shop/indexes?namesOnly=true');
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
    const put = await e2e.admin.call('PUT', '/databases/shop/docs?id=users/4', {
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

describe('replacing an index made elsewhere', () => {
  it('loads its definition from the tenant, and the edited one is live once saved', async () => {
    const made = await e2e.admin.call('PUT', '/databases/shop/indexes', {
      Name: 'Users/Decades',
      Maps: ["map('Users', u => ({ Name: u.Name }))"],
    });
    expect(made.status).toBe(201);
    // Made by the API, not this page (its IndexAdded reloads the list if the page is open).
    await page.getByRole('link', { name: 'Indexes' }).click();
    await page.locator('tr[data-index="Users/Decades"]').waitFor();
    await page.getByRole('button', { name: 'Replace Users/Decades' }).click();
    const map = page.getByLabel('Map (JavaScript)');
    await expect.poll(() => map.inputValue()).toBe("map('Users', u => ({ Name: u.Name }))");
    await expect(page.getByLabel('Reduce (JavaScript, optional)').inputValue()).resolves.toBe('');
    await map.fill("map('Users', u => ({ Name: u.Name, Decade: Math.floor(u.Age / 10) * 10 }))");
    await page.getByRole('button', { name: 'Save index' }).click();
    await page.getByText('Saved Users/Decades.').waitFor();

    const definition = await e2e.admin.call('GET', '/databases/shop/indexes/definition?name=Users/Decades');
    expect(definition.json).toEqual({
      Name: 'Users/Decades',
      Maps: ["map('Users', u => ({ Name: u.Name, Decade: Math.floor(u.Age / 10) * 10 }))"],
    });
    const query = await e2e.admin.call('POST', '/databases/shop/queries', {
      Query: "from index 'Users/Decades' where Decade = 40",
      WaitForNonStaleResults: true,
    });
    expect((query.json.Results as { Name: string }[]).map((r) => r.Name)).toEqual(['Grace']);
  });

  it('opens a definition the JavaScript form cannot hold (Fields) as JSON, whole', async () => {
    const sent = {
      Maps: [{ Collection: 'Users', Fields: { Name: 'Name' } }],
      Fields: { Name: { Indexing: 'Exact' } },
      IncludeArchived: true,
    };
    expect(
      (await e2e.admin.call('PUT', '/databases/shop/indexes', { Name: 'Users/Exact', ...sent })).status,
    ).toBe(201);
    await page.locator('tr[data-index="Users/Exact"]').waitFor();
    await page.getByRole('button', { name: 'Replace Users/Exact' }).click();
    const json = page.getByLabel('Maps, Reduce and Fields (JSON)');
    await expect.poll(async () => JSON.parse(await json.inputValue()) as unknown).toEqual(sent);
    await expect(page.getByRole('radio', { name: 'Declarative (JSON)' }).isChecked()).resolves.toBe(true);
    await page.getByRole('button', { name: 'Cancel' }).click();
    expect(policyViolations).toEqual([]);
  });
});

describe('a read-only person', () => {
  it('sees no change buttons, and the gateway refuses the change all the same', async () => {
    const reader = await e2e.stack.person('Rita Reader', 'acme', {
      kind: 'database',
      access: { shop: 'read-only' },
    });
    const readerContext = await personContext(e2e.browser, e2e.stack.gateway.url, reader.client);
    try {
      const readerPage = await readerContext.newPage();
      watchPolicy(readerPage, policyViolations);
      await readerPage.goto(e2e.stack.gateway.url);
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
      const stored = await e2e.admin.call('GET', '/databases/shop/docs?id=users/3');
      expect((stored.json.Results as unknown[])[0]).toMatchObject({ Name: 'Linus' });
    } finally {
      await readerContext.close();
    }
    expect(policyViolations).toEqual([]);
  });
});
