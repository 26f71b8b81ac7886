// The Hosts page in headless Chromium against the real stack (as console.test.ts): an operator sees that
// one machine has no fleet, then the hosts the control store records once they take leases (address,
// state, lease, tenants); a tenant admin has no Hosts link, and the gateway refuses them the route itself.
import { describe, expect, it } from 'vitest';
import { personContext } from './browser.js';
import { consoleE2e, shot, signIn, watchPolicy } from './pages.js';

const e2e = consoleE2e();
const { policyViolations } = e2e;

describe('the Hosts page', () => {
  it('tells an operator there is no fleet on one machine, then lists the hosts that took leases', async () => {
    const operator = await e2e.stack.person('Olga Operator', null, { kind: 'operator' });
    const context = await personContext(e2e.browser, e2e.stack.gateway.url, operator.client);
    try {
      const on = await context.newPage();
      watchPolicy(on, policyViolations);
      await on.goto(e2e.stack.gateway.url);
      await signIn(on, operator.secret);
      await on.getByRole('link', { name: 'Hosts' }).click();
      await on.getByText('No fleet: this gateway serves one machine', { exact: false }).waitFor();

      // Two hosts take leases (as hosts in fleet mode do), acme is placed, and the other host drains.
      await e2e.stack.store.acquireLease('host-a', 'https://10.0.0.1:7443', 50, 600_000);
      await e2e.stack.store.acquireLease('host-b', 'https://10.0.0.2:7443', 20, 600_000);
      const acmeHost = (await e2e.stack.store.placeTenant('acme')).hostId;
      const other = acmeHost === 'host-a' ? 'host-b' : 'host-a';
      await e2e.stack.store.drainHost(other);

      // The page reads the hosts when it opens: open it again.
      await on.getByRole('link', { name: 'Documents' }).click();
      await on.getByRole('heading', { name: 'Collections' }).waitFor();
      await on.getByRole('link', { name: 'Hosts' }).click();
      const table = on.getByRole('table', { name: /^Hosts of the fleet/ });
      await table.waitFor();
      const rowOf = (id: string) => on.locator(`tr[data-host="${id}"]`);
      const cells = async (id: string) =>
        (await rowOf(id).locator('th, td').allInnerTexts()).map((t) => t.trim());
      const a = await cells('host-a');
      const b = await cells('host-b');
      expect([a[0], a[1], a[3], b[0], b[1], b[3]]).toEqual([
        'host-a',
        'https://10.0.0.1:7443',
        'live',
        'host-b',
        'https://10.0.0.2:7443',
        'live',
      ]);
      expect((await cells(acmeHost))[2]).toBe('active');
      expect((await cells(other))[2]).toBe('draining');
      expect((await cells(acmeHost))[6]).toBe(acmeHost === 'host-a' ? '1 of 50' : '1 of 20');
      expect((await cells(other))[6]).toBe(other === 'host-a' ? '0 of 50' : '0 of 20');
      await shot(on, 'hosts');
    } finally {
      await context.close();
    }
  });

  it('has no Hosts link for a tenant admin, and the gateway refuses them the route', async () => {
    const person = await e2e.stack.person('Ada Lovelace', 'acme');
    const context = await personContext(e2e.browser, e2e.stack.gateway.url, person.client);
    try {
      const on = await context.newPage();
      watchPolicy(on, policyViolations);
      await on.goto(e2e.stack.gateway.url);
      await signIn(on, person.secret);
      await on.getByRole('link', { name: 'Tenant' }).waitFor();
      expect(await on.getByRole('link', { name: 'Hosts' }).count()).toBe(0);
      const refused = await on.evaluate(async () => {
        const response = await fetch('/control/hosts', { headers: { accept: 'application/json' } });
        return { status: response.status, body: await response.text() };
      });
      expect(refused.status).toBe(403);
      expect(JSON.parse(refused.body).code).toBe('Forbidden');
      expect(refused.body).not.toContain('10.0.0.1');
    } finally {
      await context.close();
    }
  });

  it('needed nothing the Content-Security-Policy forbids', () => {
    expect(policyViolations).toEqual([]);
  });
});
