// Lookups for admin operations that must find what they were told about: a
// missing tenant or principal is a *NotFound error with a hint on how to find
// the right id, not a null for every caller to check again.
import { RookeryError } from '@rookery/protocol';
import type { ControlStore } from '../store/control-store.js';
import type { Principal, Tenant } from '../store/types.js';

export async function requireTenant(store: ControlStore, tenantId: string): Promise<Tenant> {
  const tenant = await store.getTenant(tenantId);
  if (!tenant) {
    throw new RookeryError(
      'TenantNotFound',
      `There is no tenant "${tenantId}"; list them with \`rookery tenant list\`.`,
    );
  }
  return tenant;
}

export async function requirePrincipal(store: ControlStore, principalId: string): Promise<Principal> {
  const principal = await store.getPrincipal(principalId);
  if (!principal) {
    throw new RookeryError(
      'PrincipalNotFound',
      `There is no principal "${principalId}"; list them with \`rookery principal list --tenant <id>\`.`,
    );
  }
  return principal;
}
