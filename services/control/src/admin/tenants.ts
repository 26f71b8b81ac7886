// A new tenant, optionally with its first administrator, so that the people
// who asked for the tenant can reach it at once (issue the admin a certificate
// next). The store has no cross-method transaction: if the admin cannot be
// created, the tenant is removed again rather than left without anyone in it.
import type { ControlStore, CreateTenantInput } from '../store/control-store.js';
import type { Principal, PrincipalKind, Tenant } from '../store/types.js';

export interface ProvisionTenantInput extends CreateTenantInput {
  /** A first principal with the tenant-admin role. */
  admin?: { name: string; kind: PrincipalKind };
}

export async function provisionTenant(
  store: ControlStore,
  input: ProvisionTenantInput,
): Promise<{ tenant: Tenant; admin: Principal | null }> {
  const { admin, ...tenantInput } = input;
  const tenant = await store.createTenant(tenantInput);
  if (!admin) return { tenant, admin: null };
  try {
    const principal = await store.createPrincipal({
      tenantId: tenant.id,
      kind: admin.kind,
      name: admin.name,
      role: { kind: 'tenant-admin' },
    });
    return { tenant, admin: principal };
  } catch (error) {
    await store.deleteTenant(tenant.id).catch(() => undefined); // the admin's error is the one to report
    throw error;
  }
}
