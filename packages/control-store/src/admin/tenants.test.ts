import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type EmbeddedControl, openEmbeddedControl } from '../test-fixtures/embedded.js';
import { provisionTenant } from './tenants.js';

let control: EmbeddedControl;
beforeEach(async () => {
  control = await openEmbeddedControl();
});
afterEach(async () => control.close());

describe('provisionTenant', () => {
  it('creates the tenant and its first admin', async () => {
    const { tenant, admin } = await provisionTenant(control.store, {
      id: 'acme',
      name: 'Acme',
      quota: { requestsPerSecond: 50 },
      admin: { name: 'ops', kind: 'program' },
    });
    expect(tenant).toMatchObject({ id: 'acme', name: 'Acme', quota: { requestsPerSecond: 50 } });
    expect(admin).toMatchObject({
      tenantId: 'acme',
      kind: 'program',
      name: 'ops',
      role: { kind: 'tenant-admin' },
    });
    expect(await control.store.listPrincipals('acme')).toEqual([admin]);
  });

  it('creates a tenant alone when no admin is asked for', async () => {
    const { admin } = await provisionTenant(control.store, { id: 'solo', name: 'Solo' });
    expect(admin).toBeNull();
    expect(await control.store.getTenant('solo')).not.toBeNull();
  });

  it('leaves no tenant behind when its admin cannot be created', async () => {
    await expect(
      provisionTenant(control.store, { id: 'broken', name: 'Broken', admin: { name: '  ', kind: 'person' } }),
    ).rejects.toMatchObject({ code: 'InvalidRequest' });
    expect(await control.store.getTenant('broken')).toBeNull();
  });

  it('refuses an existing tenant id without touching it', async () => {
    await provisionTenant(control.store, {
      id: 'acme',
      name: 'Acme',
      admin: { name: 'first', kind: 'program' },
    });
    await expect(
      provisionTenant(control.store, {
        id: 'acme',
        name: 'Other',
        admin: { name: 'second', kind: 'program' },
      }),
    ).rejects.toMatchObject({ code: 'TenantAlreadyExists' });
    expect((await control.store.listPrincipals('acme')).map((p) => p.name)).toEqual(['first']);
  });
});
