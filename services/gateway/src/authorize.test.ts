import type { Principal } from '@rookery/control-store';
import { describe, expect, it } from 'vitest';
import { authorize } from './authorize.js';
import { classifyTenantRoute } from './route-access.js';

const principal = (role: Principal['role']): Principal => ({
  id: 'p1',
  tenantId: 'acme',
  kind: 'program',
  name: 'app',
  role,
  createdAt: 0,
});
const writer = principal({ kind: 'database', access: { shop: 'read-write' } });
const admin = principal({ kind: 'tenant-admin' });
const decide = (who: Principal, method: string, url: string) => {
  const route = classifyTenantRoute(method, url);
  if (!route) throw new Error(`no route ${method} ${url}`);
  return authorize(who, route);
};

describe('authorize', () => {
  it('lets a read-write database principal write its database but not administer it', () => {
    expect(decide(writer, 'PUT', '/databases/shop/docs?id=a')).toEqual({ ok: true, tenantId: 'acme' });
    // The sweep's `now` can expire documents early: administration, not a write.
    expect(decide(writer, 'POST', '/databases/shop/admin/sweep')).toMatchObject({ ok: false, status: 403 });
    expect(decide(writer, 'PUT', '/admin/databases')).toMatchObject({ ok: false, status: 403 });
    expect(decide(admin, 'POST', '/databases/shop/admin/sweep')).toEqual({ ok: true, tenantId: 'acme' });
  });

  it('keeps database principals to the databases they name, case-insensitively', () => {
    expect(decide(writer, 'GET', '/databases/SHOP/docs?id=a')).toEqual({ ok: true, tenantId: 'acme' });
    expect(decide(writer, 'GET', '/databases/other/docs?id=a')).toMatchObject({ ok: false, status: 403 });
  });

  it('refuses HiLo ranges to a read-only principal, saying that they reserve ids', () => {
    const reader = principal({ kind: 'database', access: { shop: 'read-only' } });
    expect(decide(reader, 'GET', '/databases/shop/hilo/next?tag=users')).toEqual({
      ok: false,
      status: 403,
      code: 'Forbidden',
      message:
        'This certificate may only read database shop. Taking a HiLo range reserves ids in the database, so it is a write.',
    });
    expect(decide(reader, 'GET', '/databases/shop/stats')).toEqual({ ok: true, tenantId: 'acme' });
    expect(decide(writer, 'GET', '/databases/shop/hilo/next?tag=users')).toEqual({
      ok: true,
      tenantId: 'acme',
    });
  });
});
