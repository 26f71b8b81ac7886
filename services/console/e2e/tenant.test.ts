// The Tenant page in headless Chromium against the real stack (as console.test.ts): usage charts, a
// certificate issued (the PKCS#12 downloaded) and revoked, two-factor enrolment's QR code, a backup and a
// restore queued with their jobs listed; a person who is not a tenant admin has no Tenant page and the
// control API refuses them all the same; an operator picks the tenant the pages act on. A real worker
// process runs with the stack, so the page shows the backup and the restore completing.
import fs from 'node:fs';
import type { Page } from 'playwright-core';
import { beforeAll, describe, expect, it } from 'vitest';
import { personContext } from './browser.js';
import { consoleE2e, shot, signIn, watchPolicy } from './pages.js';

const SHOP_DOCUMENTS = {
  'orders/1': { Total: 12.5, '@metadata': { '@collection': 'Orders' } },
  'orders/2': { Total: 40, '@metadata': { '@collection': 'Orders' } },
};
let bob: { id: string };
const e2e = consoleE2e({
  worker: true,
  seed: async (admin) => {
    for (const [id, doc] of Object.entries(SHOP_DOCUMENTS)) {
      expect((await admin.call('PUT', `/databases/shop/docs?id=${id}`, doc)).status).toBe(201);
    }
    const created = await admin.call('POST', '/control/principals', {
      name: 'Bob Builder',
      kind: 'person',
      role: { kind: 'database', access: { shop: 'read-write' } },
    });
    expect(created.status).toBe(201);
    bob = created.json as { id: string };
  },
});
const { policyViolations } = e2e;
let page: Page;

beforeAll(async () => {
  ({ page } = await e2e.signedIn(await e2e.stack.person('Ada Lovelace', 'acme')));
}, 180_000);

async function certificatesOf(principalId: string): Promise<{ serial: string; revokedAt: number | null }[]> {
  const reply = await e2e.admin.call('GET', `/control/principals/${principalId}/certificates`);
  expect(reply.status).toBe(200);
  return reply.json.certificates as { serial: string; revokedAt: number | null }[];
}

describe('the Tenant page', () => {
  it('charts usage per minute', async () => {
    await page.getByRole('link', { name: 'Tenant' }).click();
    await page.getByRole('heading', { name: 'Usage in the last hour, per minute' }).waitFor();
    // The console's own requests are counted (the gateway flushes what it counted before answering).
    await page.getByRole('img', { name: /^Requests: [1-9]\d* requests in the last 60 minutes/ }).waitFor();
    await page.getByRole('img', { name: /^Work units: / }).waitFor();
    // Storage against the quota (the default quota, 1 GiB), as the host measures it: the database is on disk.
    await page
      .getByRole('img', {
        name: /^Storage: [1-9][\d,]* bytes of 1,073,741,824 bytes \(\d+(\.\d)?% of the quota\)$/,
      })
      .waitFor();
  });

  it('issues a certificate whose PKCS#12 downloads, then revokes it', async () => {
    const card = page.getByRole('article', { name: /^Bob Builder/ });
    await card.getByLabel('Password for the PKCS#12 file of a new certificate').fill('a long password 1');
    await card.getByRole('button', { name: 'Issue a certificate for Bob Builder' }).click();
    const link = card.getByRole('link', { name: /^Download the PKCS#12 file of [0-9a-f]+$/ });
    await link.waitFor();
    const [issued] = await certificatesOf(bob.id);
    expect(issued).toMatchObject({ revokedAt: null });
    const [download] = await Promise.all([page.waitForEvent('download'), link.click()]);
    expect(download.suggestedFilename()).toBe(`Bob-Builder-${issued!.serial}.p12`);
    const file = await download.path();
    // A DER SEQUENCE: PKCS#12 files begin with 0x30.
    expect(fs.readFileSync(file)[0]).toBe(0x30);

    await card.getByRole('button', { name: `Revoke certificate ${issued!.serial}` }).click();
    await card.getByRole('cell', { name: 'revoked' }).waitFor();
    expect((await certificatesOf(bob.id))[0]!.revokedAt).not.toBeNull();
  });

  it('starts two-factor enrolment and shows its QR code once', async () => {
    const card = page.getByRole('article', { name: /^Bob Builder/ });
    await card.getByRole('button', { name: 'Start two-factor enrolment for Bob Builder' }).click();
    const qr = card.getByRole('img', { name: 'Authenticator QR code for Bob Builder' });
    await qr.waitFor();
    await expect(qr.getAttribute('src')).resolves.toMatch(/^data:image\/png;base64,/);
    await expect(card.getByRole('button', { name: /Start two-factor enrolment/ }).count()).resolves.toBe(0);
    // The control plane enrolled him: a second start is refused.
    const again = await e2e.admin.call('POST', `/control/principals/${bob.id}/totp`);
    expect([again.status, again.json.code]).toEqual([409, 'TwoFactorAlreadyEnrolled']);
    await shot(page, 'tenant');
  });

  it('queues a backup and a restore and shows their jobs completing', async () => {
    const jobs = page.getByRole('table', { name: 'Jobs of this tenant, newest first' });
    /** Waits until the page shows job `id` (read from the notice) as completed, with its type. */
    async function completes(notice: RegExp, type: string): Promise<void> {
      const text = page.getByText(notice);
      await text.waitFor();
      const id = notice.exec((await text.textContent()) ?? '')![1]!;
      const row = jobs.getByRole('row').filter({ has: page.getByRole('cell', { name: id, exact: true }) });
      await row.getByRole('cell', { name: type, exact: true }).waitFor();
      // The page polls while a job is queued or active; the worker's progress ends in `completed`.
      await row.getByRole('cell', { name: 'completed', exact: true }).waitFor({ timeout: 120_000 });
    }

    await page.getByRole('button', { name: 'Back up shop' }).click();
    await completes(/^Backup of shop: job (\S+) is queued\.$/, 'backup');
    // The restore takes the latest complete backup: it is queued once the backup has completed.
    await page.getByLabel('Restore the latest backup of shop into a new database named').fill('shop-copy');
    await page.getByRole('button', { name: 'Restore', exact: true }).click();
    await completes(/^Restore into shop-copy: job (\S+) is queued\.$/, 'restore');

    const listed = await e2e.admin.call('GET', '/control/jobs');
    expect(
      (listed.json.jobs as { type: string; state: string }[]).map((job) => [job.type, job.state]).sort(),
    ).toEqual([
      ['backup', 'completed'],
      ['restore', 'completed'],
    ]);
    // The restored database serves the documents backed up.
    for (const [id, doc] of Object.entries(SHOP_DOCUMENTS)) {
      const reply = await e2e.admin.call('GET', `/databases/shop-copy/docs?id=${encodeURIComponent(id)}`);
      expect(reply.status).toBe(200);
      expect((reply.json.Results as Record<string, unknown>[])[0]).toMatchObject({ Total: doc.Total });
    }
    expect(policyViolations).toEqual([]);
  }, 180_000);
});

describe('a person who is not a tenant admin', () => {
  it('has no Tenant page, and the control API refuses them', async () => {
    const reader = await e2e.stack.person('Rita Reader', 'acme', {
      kind: 'database',
      access: { shop: 'read-only' },
    });
    const readerContext = await personContext(e2e.browser, e2e.stack.gateway.url, reader.client);
    try {
      const readerPage = await readerContext.newPage();
      await readerPage.goto(e2e.stack.gateway.url);
      await signIn(readerPage, reader.secret);
      await expect(readerPage.getByRole('link', { name: 'Tenant' }).count()).resolves.toBe(0);
      const status = await readerPage.evaluate<number>("fetch('/control/principals').then((r) => r.status)");
      expect(status).toBe(403);
    } finally {
      await readerContext.close();
    }
  });
});

describe('an operator', () => {
  it('picks a tenant, works in it through /tenants/{id}/… paths, then picks another', async () => {
    await e2e.stack.store.createTenant({ id: 'zeta', name: 'Zeta' });
    const operator = await e2e.stack.person('Olga Operator', null, { kind: 'operator' });
    const operatorContext = await personContext(e2e.browser, e2e.stack.gateway.url, operator.client);
    try {
      const on = await operatorContext.newPage();
      watchPolicy(on, policyViolations);
      await on.goto(e2e.stack.gateway.url);
      await signIn(on, operator.secret);
      const tenant = on.getByRole('combobox', { name: /^Tenant/ });
      await expect(tenant.inputValue()).resolves.toBe('acme');
      await expect(on.getByRole('combobox', { name: /^Database/ }).inputValue()).resolves.toBe('shop');

      // acme's indexes, with the changes feed opened under /tenants/acme/…
      await on.getByRole('link', { name: 'Indexes' }).click();
      await on.getByText('Live: progress updates as the indexer works.').waitFor();
      // acme's control plane: its principals.
      await on.getByRole('link', { name: 'Tenant' }).click();
      await on.getByRole('article', { name: /^Bob Builder/ }).waitFor();
      await shot(on, 'tenant-operator');

      await tenant.selectOption('zeta');
      // zeta's own workspace: no database, and none of acme's principals.
      await on.getByRole('link', { name: 'Documents' }).click();
      await on.getByText('This tenant has no database yet', { exact: false }).waitFor();
      await on.getByRole('link', { name: 'Tenant' }).click();
      await on.getByRole('heading', { name: 'Principals and certificates' }).waitFor();
      await expect(on.getByRole('article', { name: /^Bob Builder/ }).count()).resolves.toBe(0);
      await expect(on.getByRole('alert').count()).resolves.toBe(0);
      // Without a tenant in the path the gateway cannot tell which: the console always names it.
      const bare = await on.evaluate<number>("fetch('/databases').then((r) => r.status)");
      expect(bare).toBe(400);
    } finally {
      await operatorContext.close();
    }
    expect(policyViolations).toEqual([]);
  });
});

describe('a tenant with more principals than one page', () => {
  it('pages the principals with Next and Previous', async () => {
    // 25 a page (Principals.tsx's PRINCIPALS_PER_PAGE): 30 more than acme had make a second page.
    for (let i = 1; i <= 30; i++) {
      const made = await e2e.admin.call('POST', '/control/principals', {
        name: `robot-${String(i).padStart(2, '0')}`,
        kind: 'program',
        role: { kind: 'database', access: { shop: 'read-only' } },
      });
      expect(made.status).toBe(201);
    }
    const listed = await e2e.admin.call('GET', '/control/principals?pageSize=1');
    const total = listed.json.total as number;
    expect(total).toBeGreaterThan(30);
    // The page reads the principals when it opens.
    await page.getByRole('link', { name: 'Documents' }).click();
    await page.getByRole('link', { name: 'Tenant' }).click();
    const pages = page.getByRole('navigation', { name: 'Pages of principals' });
    await pages.getByText(`Principals 1–25 of ${total}`).waitFor();
    await page.getByRole('article', { name: /^Bob Builder/ }).waitFor();
    await expect(pages.getByRole('button', { name: 'Previous principals' }).isDisabled()).resolves.toBe(true);

    await pages.getByRole('button', { name: 'Next principals' }).click();
    await pages.getByText(`Principals 26–${total} of ${total}`).waitFor();
    // Creation order: the last one made is on the last page, Bob (made first) is not.
    await page.getByRole('article', { name: /^robot-30/ }).waitFor();
    await expect(page.getByRole('article', { name: /^Bob Builder/ }).count()).resolves.toBe(0);
    await expect(page.getByRole('article').count()).resolves.toBe(total - 25);
    await expect(pages.getByRole('button', { name: 'Next principals' }).isDisabled()).resolves.toBe(true);
    await shot(page, 'tenant-principals-page-2');

    await pages.getByRole('button', { name: 'Previous principals' }).click();
    await pages.getByText(`Principals 1–25 of ${total}`).waitFor();
    await page.getByRole('article', { name: /^Bob Builder/ }).waitFor();
    expect(policyViolations).toEqual([]);
  });
});
