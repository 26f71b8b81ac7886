// The console as a person uses it, in headless Chromium against the real stack (@rookery/gateway's
// stack.ts: control store, host, tenant processes, the gateway on HTTPS with mutual TLS) serving this
// package's production build (dist/, which `npm test` builds first). The browser presents a real client
// certificate; the person signs in with a TOTP code. Every step waits for an element or an answer, never
// for time. Screenshots of each page go to e2e/screenshots/ (ignored by git).
import { type Client, type Stack, startStack } from '@rookery/gateway/testing';
import { generate } from 'otplib';
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { launchChromium, personContext } from './browser.js';
import { DIST, shot, signIn, watchPolicy } from './pages.js';

let stack: Stack;
let admin: Client;
let person: { client: Client; secret: string };
let browser: Browser;
let context: BrowserContext;
let page: Page;
/** What the browser said about the Content-Security-Policy: the console must need nothing it forbids. */
const policyViolations: string[] = [];

beforeAll(async () => {
  stack = await startStack({ consoleDir: DIST });
  admin = await stack.tenantAdmin({ id: 'acme', name: 'Acme' }, 'ops');
  await stack.running('acme');
  expect((await admin.call('PUT', '/admin/databases', { Name: 'shop' })).status).toBe(201);
  for (const [id, doc] of [
    ['users/1', { Name: 'Ada', Age: 36, '@metadata': { '@collection': 'Users' } }],
    ['users/2', { Name: 'Grace', Age: 45, '@metadata': { '@collection': 'Users' } }],
    ['users/3', { Name: 'Linus', Age: 28, '@metadata': { '@collection': 'Users' } }],
    ['orders/1', { Total: 12.5, '@metadata': { '@collection': 'Orders' } }],
  ] as const) {
    expect((await admin.call('PUT', `/databases/shop/docs?id=${id}`, doc)).status).toBe(201);
  }
  person = await stack.person('Ada Lovelace', 'acme');
  browser = await launchChromium();
  context = await personContext(browser, stack.gateway.url, person.client);
  page = await context.newPage();
  watchPolicy(page, policyViolations);
}, 180_000);

afterAll(async () => {
  await context?.close();
  await browser?.close();
  await stack?.close();
});

/** A code the authenticator does not show now or in the neighbouring periods. */
async function wrongCode(): Promise<string> {
  const now = Math.floor(Date.now() / 1000);
  const valid = new Set<string>();
  for (let t = now - 90; t <= now + 90; t += 30)
    valid.add(await generate({ secret: person.secret, epoch: t }));
  for (let n = 111_111; ; n += 7919) {
    const code = String(n % 1_000_000).padStart(6, '0');
    if (!valid.has(code)) return code;
  }
}

async function stored(id: string): Promise<Record<string, unknown>> {
  const reply = await admin.call('GET', `/databases/shop/docs?id=${encodeURIComponent(id)}`);
  expect(reply.status).toBe(200);
  return (reply.json.Results as Record<string, unknown>[])[0]!;
}

describe('the console in Chromium', () => {
  it('signs in with the client certificate and a TOTP code; a wrong code is refused', async () => {
    await page.goto(stack.gateway.url);
    await page.getByRole('heading', { name: 'Sign in to Rookery' }).waitFor();
    // The page explains how to import the certificate, with the CLI's exact command.
    await expect(
      page.getByText('--format pkcs12 --password-file p12-password.txt').isVisible(),
    ).resolves.toBe(true);
    await shot(page, 'sign-in');

    const code = page.getByLabel('Code from your authenticator app');
    await code.fill(await wrongCode());
    await page.getByRole('button', { name: 'Sign in' }).click();
    await expect(page.getByRole('alert').textContent()).resolves.toContain('InvalidTwoFactorCode');

    const used = await signIn(page, person.secret);
    const [cookie] = await context.cookies(stack.gateway.url);
    expect(cookie).toMatchObject({ name: 'rookery_2fa', httpOnly: true, secure: true, sameSite: 'Strict' });

    // The same code in another browser with the same certificate, right after (it is still within its
    // period): a replay, refused.
    const other = await personContext(browser, stack.gateway.url, person.client);
    try {
      const otherPage = await other.newPage();
      await otherPage.goto(stack.gateway.url);
      await otherPage.getByLabel('Code from your authenticator app').fill(used);
      await otherPage.getByRole('button', { name: 'Sign in' }).click();
      await expect(otherPage.getByRole('alert').textContent()).resolves.toContain('TwoFactorCodeReused');
    } finally {
      await other.close();
    }
  });

  it('lists collections with counts, creates, edits and deletes a document', async () => {
    const users = page.getByRole('button', { name: /^Users\s*3$/ });
    await users.waitFor();
    await expect(page.getByRole('button', { name: /^Orders\s*1$/ }).isVisible()).resolves.toBe(true);
    await users.click();
    await page.getByRole('button', { name: 'users/1', exact: true }).click();
    const editor = page.getByLabel('Document (JSON)');
    await expect.poll(() => editor.inputValue()).toContain('"Ada"');
    // Metadata is shown apart from the body.
    await expect(editor.inputValue()).resolves.not.toContain('@metadata');
    await expect(page.getByRole('region', { name: 'Metadata' }).textContent()).resolves.toContain('Users');
    await shot(page, 'documents');

    // Validation as one types: invalid JSON cannot be saved.
    await editor.fill('{"Name": "Ada",');
    await expect(page.locator('#document-validation').textContent()).resolves.toContain('Not valid JSON');
    await expect(page.getByRole('button', { name: 'Save' }).isDisabled()).resolves.toBe(true);

    await editor.fill('{"Name": "Ada Lovelace", "Age": 36}');
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved users/1.').waitFor();
    expect(await stored('users/1')).toMatchObject({ Name: 'Ada Lovelace', Age: 36 });

    // A new document: the server gives it its id.
    await page.getByRole('button', { name: 'New document' }).click();
    await page.getByRole('heading', { name: 'New document in Users' }).waitFor();
    await editor.fill('{"Name": "Barbara", "Age": 52}');
    await page.getByRole('button', { name: 'Save' }).click();
    const saved = await page.getByText(/^Saved users\/\S+\.$/).textContent();
    const newId = saved!.replace(/^Saved /, '').replace(/\.$/, '');
    expect(newId).not.toBe('users/');
    expect(await stored(newId)).toMatchObject({ Name: 'Barbara', '@metadata': { '@collection': 'Users' } });
    await page.getByRole('button', { name: /^Users\s*4$/ }).waitFor();

    // Delete asks to confirm, then the document is gone.
    await page.getByRole('button', { name: newId, exact: true }).click();
    await page.getByRole('heading', { name: newId }).waitFor();
    await page.getByRole('button', { name: 'Delete', exact: true }).click();
    await page.getByRole('button', { name: `Delete ${newId} for good` }).click();
    await page.getByRole('button', { name: /^Users\s*3$/ }).waitFor();
    const gone = await admin.call('GET', `/databases/shop/docs?id=${encodeURIComponent(newId)}`);
    expect(gone.status).toBe(404);
  });

  it('shows both versions when someone else saved the document meanwhile', async () => {
    await page.getByRole('button', { name: 'users/2', exact: true }).click();
    const editor = page.getByLabel('Document (JSON)');
    await expect.poll(() => editor.inputValue()).toContain('"Grace"');
    // Another writer changes it after the console read it.
    const elsewhere = await admin.call('PUT', '/databases/shop/docs?id=users/2', {
      Name: 'Grace Hopper (changed elsewhere)',
      Age: 45,
      '@metadata': { '@collection': 'Users' },
    });
    expect(elsewhere.status).toBe(201);

    await editor.fill('{"Name": "Grace Hopper", "Age": 46}');
    await page.getByRole('button', { name: 'Save' }).click();
    const conflict = page.getByRole('alert').filter({ hasText: 'Someone else changed this document' });
    await conflict.waitFor();
    await expect(page.getByRole('figure', { name: 'Your version' }).textContent()).resolves.toContain(
      '"Age": 46',
    );
    await expect(page.getByRole('figure', { name: 'On the server now' }).textContent()).resolves.toContain(
      'changed elsewhere',
    );
    await shot(page, 'conflict');
    // Nothing was overwritten by the refused save.
    expect(await stored('users/2')).toMatchObject({ Name: 'Grace Hopper (changed elsewhere)' });

    await page.getByRole('button', { name: 'Keep mine' }).click();
    await page.getByRole('button', { name: 'Save' }).click();
    await page.getByText('Saved users/2.').waitFor();
    expect(await stored('users/2')).toMatchObject({ Name: 'Grace Hopper', Age: 46 });
  });

  it('shows a query error at its line and column, then a good query with its results', async () => {
    await page.getByRole('link', { name: 'Query' }).click();
    const rql = page.getByLabel(/Query \(RQL\)/);
    await rql.fill('from Users\nwhere Age >');
    await page.getByRole('button', { name: 'Run' }).click();
    const error = page.locator('#query-error');
    await error.waitFor();
    await expect(error.textContent()).resolves.toMatch(/Line 2, column \d+:/);
    await expect(error.textContent()).resolves.toContain('InvalidQuery');
    await expect(rql.getAttribute('aria-invalid')).resolves.toBe('true');
    await shot(page, 'query-error');

    await rql.fill('from Users where Age > $min order by Age');
    await page.getByLabel(/Parameters/).fill('{"min": 30}');
    // The automatic index this query creates is built in the background: wait for it, as a person would.
    await page.getByLabel(/Wait until the index has caught up/).check();
    await rql.press('Control+Enter');
    await page.getByRole('heading', { name: 'Results' }).waitFor();
    await expect(page.getByTestId('total-results').textContent()).resolves.toBe('2');
    await expect(page.getByTestId('is-stale').textContent()).resolves.toBe('false');
    await expect(page.getByTestId('index-name').textContent()).resolves.toMatch(/^Auto\/Users\//);
    const table = page.getByRole('table');
    await expect(table.textContent()).resolves.toContain('Ada Lovelace');
    await expect(table.textContent()).resolves.toContain('Grace Hopper');
    await shot(page, 'query-results');
    await page.getByRole('radio', { name: 'JSON' }).check();
    await expect(page.getByRole('figure', { name: 'Results as JSON' }).textContent()).resolves.toContain(
      '"Age": 46',
    );
  });

  it('fits a phone-width screen', async () => {
    await page.setViewportSize({ width: 390, height: 844 });
    await page.getByRole('link', { name: 'Documents' }).click();
    await page.getByRole('heading', { name: 'Collections' }).waitFor();
    // One column: nothing wider than the screen.
    const overflow = await page.evaluate<number>('document.documentElement.scrollWidth - window.innerWidth');
    expect(overflow).toBeLessThanOrEqual(0);
    await shot(page, 'documents-phone');
    await page.setViewportSize({ width: 1280, height: 800 });
  });

  it("cannot reach another tenant's data from the console's session", async () => {
    await stack.store.createTenant({ id: 'globex', name: 'Globex' });
    const status = await page.evaluate<number>(
      "fetch('/tenants/globex/databases', { credentials: 'same-origin' }).then((r) => r.status)",
    );
    expect(status).toBe(403);
  });

  it('signs out: the session ends on the server, and the page asks for a code again', async () => {
    const [cookie] = await context.cookies(stack.gateway.url);
    await page.getByRole('button', { name: 'Sign out' }).click();
    await page.getByRole('heading', { name: 'Sign in to Rookery' }).waitFor();
    // The old cookie opens nothing any more, even presented again with the certificate.
    const after = await person.client.call('GET', '/databases', undefined, {
      cookie: `rookery_2fa=${cookie!.value}`,
    });
    expect([after.status, after.json.code]).toEqual([401, 'TwoFactorRequired']);
    await page.reload();
    await page.getByRole('heading', { name: 'Sign in to Rookery' }).waitFor();
    expect(policyViolations).toEqual([]);
  });
});
