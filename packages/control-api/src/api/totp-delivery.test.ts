// POST …/principals/{id}/totp {"deliverTo": "person"}: the enrolment is started for the person to collect
// (the gateway's POST /auth/enrolment); the administrator's answer carries no secret.
import type { Principal } from '@rookery/control-store';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ControlApiHarness, startControlApi } from '../test-fixtures/control-api.js';

let h: ControlApiHarness;
let admin: Principal;
let ada: Principal;

beforeEach(async () => {
  h = await startControlApi();
  await h.store.createTenant({ id: 'acme', name: 'Acme' });
  admin = await h.store.createPrincipal({
    tenantId: 'acme',
    kind: 'program',
    name: 'acme-admin',
    role: { kind: 'tenant-admin' },
  });
  ada = await h.store.createPrincipal({
    tenantId: 'acme',
    kind: 'person',
    name: 'Ada',
    role: { kind: 'database', access: { shop: 'read-write' } },
  });
});
afterEach(async () => h.close());

describe('an enrolment started for the person', () => {
  it('answers no secret to the admin and leaves it for the person to collect once', async () => {
    const started = await h.call(admin, 'POST', `/control/principals/${ada.id}/totp`, {
      deliverTo: 'person',
    });
    expect(started.status).toBe(201);
    expect(started.json).toMatchObject({ principal: { id: ada.id }, pending: true });
    expect(JSON.stringify(started.json)).not.toMatch(/secret|otpauth/i);
    expect(await h.store.hasTotpDelivery(ada.id)).toBe(true);
    // Started twice: the person already has a secret (collected or not).
    const again = await h.call(admin, 'POST', `/control/principals/${ada.id}/totp`, { deliverTo: 'person' });
    expect([again.status, again.json.code]).toEqual([409, 'TwoFactorAlreadyEnrolled']);
  });

  it('keeps the admin-shown enrolment as before, and refuses other deliveries', async () => {
    const shown = await h.call(admin, 'POST', `/control/principals/${ada.id}/totp`, { deliverTo: 'admin' });
    expect(shown.status).toBe(201);
    expect(typeof shown.json.secret).toBe('string');
    expect(await h.store.hasTotpDelivery(ada.id)).toBe(false);
    for (const body of [{ deliverTo: 'everyone' }, { deliverTo: null }, { deliverTo: 'person', extra: 1 }]) {
      const refused = await h.call(admin, 'POST', `/control/principals/${ada.id}/totp`, body);
      expect([refused.status, refused.json.code]).toEqual([400, 'InvalidRequest']);
    }
  });
});
