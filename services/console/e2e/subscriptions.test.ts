// The Subscriptions page in headless Chromium against the real stack (as console.test.ts): a subscription
// created from the page is listed with its query, no consumer and its progress against the database's last
// etag; delete asks for a confirmation (cancel keeps it); a read-only person has no create or delete.
import { describe, expect, it } from 'vitest';
import { personContext } from './browser.js';
import { consoleE2e, shot, signIn, watchPolicy } from './pages.js';

const e2e = consoleE2e({
  seed: async (admin) => {
    for (const [id, total] of [
      ['orders/1', 50],
      ['orders/2', 150],
      ['orders/3', 250],
    ] as const) {
      const put = await admin.call('PUT', `/databases/shop/docs?id=${id}`, {
        Total: total,
        '@metadata': { '@collection': 'Orders' },
      });
      expect(put.status).toBe(201);
    }
  },
});
const { policyViolations } = e2e;

async function subscriptionNames(): Promise<string[]> {
  const listed = await e2e.admin.call('GET', '/databases/shop/subscriptions');
  expect(listed.status).toBe(200);
  return (listed.json.Results as { Name: string }[]).map((s) => s.Name);
}

describe('the Subscriptions page', () => {
  it('creates a subscription, shows its progress, and deletes it after a confirmation', async () => {
    const ada = await e2e.stack.person('Ada Lovelace', 'acme');
    const context = await personContext(e2e.browser, e2e.stack.gateway.url, ada.client);
    try {
      const on = await context.newPage();
      watchPolicy(on, policyViolations);
      await on.goto(e2e.stack.gateway.url);
      await signIn(on, ada.secret);
      await on.getByRole('link', { name: 'Subscriptions' }).click();
      await on.getByText('No subscriptions in shop.').waitFor();

      await on.getByLabel('Name').fill('big-orders');
      await on.getByLabel(/^Query/).fill('from Orders where Total > 100');
      await on.getByRole('button', { name: 'Create subscription' }).click();
      const row = on.locator('tr[data-subscription="big-orders"]');
      await row.waitFor();
      expect(await subscriptionNames()).toEqual(['big-orders']);
      const stats = await e2e.admin.call('GET', '/databases/shop/stats');
      const lastEtag = Number(stats.json.LastDocEtag);
      await expect(row.getByRole('cell').nth(0).textContent()).resolves.toBe('from Orders where Total > 100');
      await expect(row.getByRole('cell').nth(1).textContent()).resolves.toBe('none connected');
      await expect(row.getByTestId('acknowledged').textContent()).resolves.toBe(
        `up to etag 0 of ${lastEtag}, nothing acknowledged yet`,
      );
      await expect(
        row.getByRole('progressbar', { name: 'Progress of big-orders' }).getAttribute('max'),
      ).resolves.toBe(String(lastEtag));
      await shot(on, 'subscriptions');

      // Delete: cancel keeps it; the confirmed delete removes it.
      await row.getByRole('button', { name: 'Delete big-orders' }).click();
      await row.getByRole('button', { name: 'Cancel' }).click();
      expect(await subscriptionNames()).toEqual(['big-orders']);
      await row.getByRole('button', { name: 'Delete big-orders' }).click();
      await row.getByRole('button', { name: 'Delete big-orders for good' }).click();
      await on.getByText('No subscriptions in shop.').waitFor();
      expect(await subscriptionNames()).toEqual([]);
    } finally {
      await context.close();
    }
  });

  it('shows a read-only person the list without create or delete', async () => {
    expect(
      (await e2e.admin.call('PUT', '/databases/shop/subscriptions', { Name: 'audit', Query: 'from Orders' }))
        .status,
    ).toBe(201);
    const reader = await e2e.stack.person('Rita Reader', 'acme', {
      kind: 'database',
      access: { shop: 'read-only' },
    });
    const context = await personContext(e2e.browser, e2e.stack.gateway.url, reader.client);
    try {
      const on = await context.newPage();
      watchPolicy(on, policyViolations);
      await on.goto(e2e.stack.gateway.url);
      await signIn(on, reader.secret);
      await on.getByRole('link', { name: 'Subscriptions' }).click();
      await on.locator('tr[data-subscription="audit"]').waitFor();
      expect(await on.getByRole('button', { name: 'Create subscription' }).count()).toBe(0);
      expect(await on.getByRole('button', { name: 'Delete audit' }).count()).toBe(0);
    } finally {
      await context.close();
    }
  });

  it('needed nothing the Content-Security-Policy forbids', () => {
    expect(policyViolations).toEqual([]);
  });
});
