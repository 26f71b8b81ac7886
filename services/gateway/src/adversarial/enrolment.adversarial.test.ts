// Attacks on an enrolment a tenant admin started for a person to collect (POST /auth/enrolment, which the
// console's sign-in page calls): other principals' certificates, another site's page, and a burst of
// collections by the person themselves. The secret goes to the person's own certificate, once (README.md
// beside this file).
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Client, type Stack, startStack } from '../test-fixtures/stack.js';

let stack: Stack;
let admin: Client;

beforeAll(async () => {
  stack = await startStack();
  admin = await stack.tenantAdmin({ id: 'acme', name: 'Acme' }, 'acme-admin');
  await stack.store.createTenant({ id: 'globex', name: 'Globex' });
}, 120_000);
afterAll(async () => stack?.close());

const newPerson = (name: string, tenantId: string) =>
  stack.client({ tenantId, kind: 'person', name, role: { kind: 'tenant-admin' } });

async function startFor(person: Client): Promise<void> {
  const started = await admin.call('POST', `/control/principals/${person.principal.id}/totp`, {
    deliverTo: 'person',
  });
  expect(started.status).toBe(201);
}

describe("a person's started enrolment", () => {
  it('is not handed to any other certificate, nor to a page of another site', async () => {
    const ada = await newPerson('Ada', 'acme');
    await startFor(ada);
    const grace = await newPerson('Grace', 'acme');
    const outsider = await newPerson('Hans', 'globex');
    const enrolled = await stack.person('Linus', 'acme');

    for (const other of [grace, outsider, enrolled.client]) {
      const taken = await other.call('POST', '/auth/enrolment');
      expect([taken.status, taken.json.code]).toEqual([404, 'TwoFactorEnrolmentNotPending']);
      expect(taken.text).not.toMatch(/otpauth|Secret/);
    }
    const program = await admin.call('POST', '/auth/enrolment');
    expect([program.status, program.json.code]).toEqual([400, 'InvalidRequest']);

    // Ada's own certificate, but the request sent by another site's page (the browser presents it anyway).
    const crossSiteHeaders: Record<string, string>[] = [
      { origin: 'https://evil.example' },
      { 'sec-fetch-site': 'cross-site' },
    ];
    for (const headers of crossSiteHeaders) {
      const crossSite = await ada.call('POST', '/auth/enrolment', undefined, headers);
      expect([crossSite.status, crossSite.json.code]).toEqual([403, 'CrossSiteRequest']);
    }
    // Still Ada's to collect.
    expect(await stack.store.hasTotpDelivery(ada.principal.id)).toBe(true);
    expect((await ada.call('POST', '/auth/enrolment')).status).toBe(201);
  });

  it('is answered once to a burst of collections', async () => {
    const ada = await newPerson('Ada Burst', 'acme');
    await startFor(ada);
    const replies = await Promise.all(Array.from({ length: 10 }, () => ada.call('POST', '/auth/enrolment')));
    expect(replies.map((r) => r.status).sort()).toEqual([201, ...Array(9).fill(404)]);
    expect(replies.filter((r) => r.text.includes('otpauth'))).toHaveLength(1);
  });
});
