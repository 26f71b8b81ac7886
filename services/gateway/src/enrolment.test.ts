// A person collects the enrolment a tenant admin started for them (POST …/principals/{id}/totp
// {"deliverTo":"person"}) with their own certificate and no two-factor session yet: GET /auth/enrolment says
// whether one waits, POST /auth/enrolment answers its secret once; its codes then open a session.
import { generate } from 'otplib';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Client, type Stack, startStack } from './test-fixtures/stack.js';

let stack: Stack;
let admin: Client;

beforeAll(async () => {
  stack = await startStack();
  admin = await stack.tenantAdmin({ id: 'acme', name: 'Acme' }, 'acme-admin');
}, 120_000);
afterAll(async () => stack?.close());

describe('/auth/enrolment', () => {
  it("answers the person's started enrolment once, and its codes open a session", async () => {
    const ada = await stack.client({
      tenantId: 'acme',
      kind: 'person',
      name: 'Ada',
      role: { kind: 'tenant-admin' },
    });
    const none = await ada.call('GET', '/auth/enrolment');
    expect([none.status, none.json]).toEqual([200, { Pending: false }]);
    const early = await ada.call('POST', '/auth/enrolment');
    expect([early.status, early.json.code]).toEqual([404, 'TwoFactorEnrolmentNotPending']);

    const started = await admin.call('POST', `/control/principals/${ada.principal.id}/totp`, {
      deliverTo: 'person',
    });
    expect(started.status).toBe(201);
    expect((await ada.call('GET', '/auth/enrolment')).json).toEqual({ Pending: true });

    const collected = await ada.call('POST', '/auth/enrolment');
    expect(collected.status).toBe(201);
    expect(collected.headers['cache-control']).toBe('no-store');
    const secret = String(collected.json.Secret);
    expect(new URL(String(collected.json.Uri)).searchParams.get('secret')).toBe(secret);

    // Once: a second collection, and the pending flag, say it is gone.
    const twice = await ada.call('POST', '/auth/enrolment');
    expect([twice.status, twice.json.code]).toEqual([404, 'TwoFactorEnrolmentNotPending']);
    expect(twice.text).not.toContain(secret);
    expect((await ada.call('GET', '/auth/enrolment')).json).toEqual({ Pending: false });

    // The secret is the person's authenticator: its code opens a session.
    const opened = await ada.call('POST', '/auth/2fa', {
      code: await generate({ secret }),
      minutes: 5,
      binding: 'certificate',
    });
    expect(opened.status).toBe(201);
  });

  it('is for people: a program is refused', async () => {
    for (const method of ['GET', 'POST']) {
      const reply = await admin.call(method, '/auth/enrolment');
      expect([reply.status, reply.json.code]).toEqual([400, 'InvalidRequest']);
    }
  });
});
