// Who may do what: a principal's role against a classified route. Pure, so
// the isolation tests can enumerate every route × role without a network.
import type { Principal } from '@rookery/control-store';
import { reservesIds, type TenantRoute } from './route-access.js';

export type Decision =
  | { ok: true; tenantId: string }
  | { ok: false; status: 400 | 403; code: 'Forbidden' | 'TenantRequired'; message: string };

export function authorize(principal: Principal, route: TenantRoute): Decision {
  if (principal.role.kind === 'operator') {
    if (route.explicitTenant === null) {
      return {
        ok: false,
        status: 400,
        code: 'TenantRequired',
        message: 'Operator certificates reach every tenant, so name one: /tenants/{tenantId}/databases/…',
      };
    }
    return { ok: true, tenantId: route.explicitTenant };
  }
  const own = principal.tenantId;
  if (own === null || (route.explicitTenant !== null && route.explicitTenant !== own)) {
    return forbidden(
      `This certificate belongs to tenant ${own ?? '(none)'} and cannot reach another tenant.`,
    );
  }
  if (principal.role.kind === 'tenant-admin') return { ok: true, tenantId: own };
  // A per-database role: no administration, and only the databases it names.
  if (route.access === 'admin') {
    return forbidden(
      'Administration (creating and deleting databases, lifecycle sweeps) needs a tenant-admin certificate.',
    );
  }
  if (route.database === null) return { ok: true, tenantId: own };
  const granted = grantOf(principal.role.access, route.database);
  if (granted === undefined) {
    return forbidden(`This certificate has no access to database ${route.database}.`);
  }
  if (route.access === 'write' && granted !== 'read-write') {
    const why = reservesIds(route)
      ? ' Taking a HiLo range reserves ids in the database, so it is a write.'
      : '';
    return forbidden(`This certificate may only read database ${route.database}.${why}`);
  }
  return { ok: true, tenantId: own };
}

/** Database names are case-insensitive, as in the tenant container. */
function grantOf(access: Record<string, 'read-write' | 'read-only'>, database: string) {
  const wanted = database.toLowerCase();
  for (const [name, grant] of Object.entries(access)) if (name.toLowerCase() === wanted) return grant;
  return undefined;
}

function forbidden(message: string): Decision {
  return { ok: false, status: 403, code: 'Forbidden', message };
}
