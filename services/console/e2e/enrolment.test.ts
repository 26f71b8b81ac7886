// Two-factor enrolment collected by the person on their own sign-in page, in headless Chromium against the
// real stack (as console.test.ts): a tenant admin lets Bob collect it (and never sees its secret); Bob's
// browser, with his certificate and no session, is offered the QR code once, shows it, and signs in with a
// code of that secret; a reload offers nothing, and the gateway answers the secret no second time.
import { generate } from 'otplib';
import { describe, expect, it } from 'vitest';
import { personContext } from './browser.js';
import { consoleE2e, shot, signIn, watchPolicy } from './pages.js';

const e2e = consoleE2e();
const { policyViolations } = e2e;

describe("enrolment on the person's own sign-in page", () => {
  it('is started by a tenant admin, shown to the person once, and its codes sign them in', async () => {
    const bob = await e2e.stack.client({
      tenantId: 'acme',
      kind: 'person',
      name: 'Bob Builder',
      role: { kind: 'database', access: { shop: 'read-write' } },
    });
    const ada = await e2e.stack.person('Ada Lovelace', 'acme');
    const adaContext = await personContext(e2e.browser, e2e.stack.gateway.url, ada.client);
    const bobContext = await personContext(e2e.browser, e2e.stack.gateway.url, bob);
    try {
      // Bob before anything was started: the sign-in page offers no QR code.
      const bobPage = await bobContext.newPage();
      watchPolicy(bobPage, policyViolations);
      await bobPage.goto(e2e.stack.gateway.url);
      await bobPage.getByLabel('Code from your authenticator app').waitFor();
      expect(await bobPage.getByRole('button', { name: 'Show my QR code' }).count()).toBe(0);

      // Ada, a tenant admin, leaves the enrolment for Bob to collect.
      const adaPage = await adaContext.newPage();
      watchPolicy(adaPage, policyViolations);
      await adaPage.goto(e2e.stack.gateway.url);
      await signIn(adaPage, ada.secret);
      await adaPage.getByRole('link', { name: 'Tenant' }).click();
      const card = adaPage.getByRole('article', { name: /^Bob Builder/ });
      await card.getByRole('button', { name: 'Let Bob Builder collect the enrolment at sign-in' }).click();
      await card.getByRole('status').filter({ hasText: 'Enrolment started' }).waitFor();
      expect(await card.getByRole('img', { name: /QR code/ }).count()).toBe(0);

      // Bob signs in: offered the QR code, shown once.
      await bobPage.reload();
      await bobPage.getByRole('button', { name: 'Show my QR code' }).click();
      await bobPage.getByRole('img', { name: 'Authenticator QR code for you' }).waitFor();
      const secret = ((await bobPage.locator('figcaption code').textContent()) ?? '').trim();
      expect(secret).toMatch(/^[A-Z2-7]{16,}$/);
      await shot(bobPage, 'enrolment-sign-in');
      await bobPage.getByLabel('Code from your authenticator app').fill(await generate({ secret }));
      await bobPage.getByRole('button', { name: 'Sign in' }).click();
      await bobPage.getByRole('heading', { name: 'Collections' }).waitFor();

      // Once: another page of Bob's browser is offered nothing, and the gateway answers it no more.
      const again = await bobContext.newPage();
      await again.goto(e2e.stack.gateway.url);
      await again.getByRole('heading', { name: 'Collections' }).waitFor();
      const asked = await again.evaluate(async () => {
        const pending = await (await fetch('/auth/enrolment')).json();
        const session = (await (await fetch('/auth/session')).json()) as { CsrfToken: string };
        const collect = await fetch('/auth/enrolment', {
          method: 'POST',
          headers: { 'x-rookery-csrf': session.CsrfToken },
        });
        return { pending, status: collect.status, body: await collect.text() };
      });
      expect(asked.pending).toEqual({ Pending: false });
      expect(asked.status).toBe(404);
      expect(JSON.parse(asked.body).code).toBe('TwoFactorEnrolmentNotPending');
      expect(asked.body).not.toContain(secret);
    } finally {
      await adaContext.close();
      await bobContext.close();
    }
  });

  it('needed nothing the Content-Security-Policy forbids', () => {
    expect(policyViolations).toEqual([]);
  });
});
