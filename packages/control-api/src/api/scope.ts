// Who may do what through the control API. Operators reach every tenant and
// are the only ones who manage tenants; a tenant admin reaches its own tenant;
// every other principal (per-database roles) reaches nothing here.
//
// Two rules keep one tenant from learning about another, whatever it asks:
// - a tenant the caller cannot reach answers 403 Forbidden, whether it exists
//   or not (as the gateway does for data routes);
// - a principal or certificate outside the tenant a request addresses answers
//   404 exactly as a missing one does, with the same message.

import {
  type CertificateRecord,
  CertificateSerialSchema,
  type ControlStore,
  type Principal,
  parseInput,
  type Tenant,
} from '@rookery/control-store';
import { RookeryError } from '@rookery/protocol';

const ADMINS_ONLY =
  'The control API takes a tenant-admin or operator certificate; this one has a per-database role.';

/** `what` names the act in the refusal ("Managing tenants takes an operator certificate."). */
export function requireOperator(caller: Principal, what = 'Managing tenants'): void {
  if (caller.role.kind !== 'operator') {
    throw new RookeryError('Forbidden', `${what} takes an operator certificate.`);
  }
}

/**
 * The tenant a tenant-scoped request acts on: the one named in
 * `/control/tenants/{id}/…`, or the caller's own for `/control/…`.
 */
export async function tenantInScope(
  store: ControlStore,
  caller: Principal,
  named: string | undefined,
): Promise<Tenant> {
  if (caller.role.kind === 'operator') {
    if (named === undefined) {
      throw new RookeryError(
        'TenantRequired',
        'Operator certificates reach every tenant, so name one: /control/tenants/{tenantId}/…',
      );
    }
    const tenant = await store.getTenant(named);
    if (!tenant) {
      throw new RookeryError(
        'TenantNotFound',
        `There is no tenant "${named}"; list them with GET /control/tenants.`,
      );
    }
    return tenant;
  }
  if (caller.role.kind !== 'tenant-admin' || caller.tenantId === null) {
    throw new RookeryError('Forbidden', ADMINS_ONLY);
  }
  if (named !== undefined && named !== caller.tenantId) {
    throw new RookeryError(
      'Forbidden',
      `This certificate belongs to tenant ${caller.tenantId} and cannot reach another tenant.`,
    );
  }
  const own = await store.getTenant(caller.tenantId);
  // The caller's tenant was deleted after its certificate was looked up: nothing left to manage.
  if (!own) throw new RookeryError('Forbidden', `Tenant ${caller.tenantId} no longer exists.`);
  return own;
}

export async function principalInTenant(
  store: ControlStore,
  tenant: Tenant,
  principalId: string,
): Promise<Principal> {
  const principal = await store.getPrincipal(principalId);
  if (!principal || principal.tenantId !== tenant.id) {
    throw new RookeryError(
      'PrincipalNotFound',
      `Tenant ${tenant.id} has no principal "${principalId}"; list them with GET /control/principals.`,
    );
  }
  return principal;
}

/** A certificate issued to a principal of the tenant (certificates of deleted principals are no one's). */
export async function certificateInTenant(
  store: ControlStore,
  tenant: Tenant,
  serial: string,
): Promise<CertificateRecord> {
  const key = parseInput(CertificateSerialSchema, serial, 'serial');
  const record = await store.getCertificateBySerial(key);
  const owner = record ? await store.getPrincipal(record.principalId) : null;
  if (!record || owner?.tenantId !== tenant.id) {
    throw new RookeryError(
      'CertificateNotFound',
      `Tenant ${tenant.id} has no certificate with serial ${key}; list a principal's with GET /control/principals/{id}/certificates.`,
    );
  }
  return record;
}
