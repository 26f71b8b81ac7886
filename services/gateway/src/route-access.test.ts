import { describe, expect, it } from 'vitest';
import { classifyTenantRoute, isControlPath } from './route-access.js';

describe('classifyTenantRoute', () => {
  it.each([
    ['GET', '/databases/shop/docs?id=users/1', 'shop', 'read'],
    ['HEAD', '/databases/shop/docs?id=users/1', 'shop', 'read'],
    ['PUT', '/databases/shop/docs?id=users/1', 'shop', 'write'],
    ['DELETE', '/databases/shop/docs?id=users/1', 'shop', 'write'],
    ['POST', '/databases/shop/bulk_docs', 'shop', 'write'],
    ['POST', '/databases/shop/bulk_insert', 'shop', 'write'],
    ['POST', '/databases/shop/queries', 'shop', 'read'],
    ['GET', '/databases/shop/queries?query=from%20Users', 'shop', 'read'],
    ['PUT', '/databases/shop/indexes', 'shop', 'write'],
    ['POST', '/databases/shop/indexes/reset?name=x', 'shop', 'write'],
    // An index's definition is read by everyone who may read the index (the console's editor starts from it).
    ['GET', '/databases/shop/indexes/definition?name=Users/ByName', 'shop', 'read'],
    // HiLo is a GET that reserves ids: a write, however it is spelt.
    ['GET', '/databases/shop/hilo/next?tag=users', 'shop', 'write'],
    ['GET', '/databases/shop/%68ilo/next?tag=users', 'shop', 'write'],
    // Live data: following a database reads it; creating or deleting a subscription writes.
    ['GET', '/databases/shop/changes', 'shop', 'read'],
    ['GET', '/databases/shop/streams/docs?startsWith=users/', 'shop', 'read'],
    ['GET', '/databases/shop/streams/queries?query=from%20Users', 'shop', 'read'],
    ['POST', '/databases/shop/streams/queries', 'shop', 'read'],
    ['POST', '/databases/shop/streams/docs', 'shop', 'write'],
    ['GET', '/databases/shop/subscriptions', 'shop', 'read'],
    ['GET', '/databases/shop/subscriptions/new-users', 'shop', 'read'],
    ['GET', '/databases/shop/subscriptions/new-users/connect?strategy=TakeOver', 'shop', 'read'],
    ['PUT', '/databases/shop/subscriptions', 'shop', 'write'],
    ['DELETE', '/databases/shop/subscriptions/new-users', 'shop', 'write'],
    ['POST', '/databases/shop/queries/extra', 'shop', 'write'],
    ['POST', '/databases/shop/admin/sweep', 'shop', 'admin'],
    ['GET', '/databases', null, 'read'],
    ['PUT', '/admin/databases', null, 'admin'],
    ['DELETE', '/admin/databases?name=shop', null, 'admin'],
  ])('%s %s → database %s, %s', (method, url, database, access) => {
    expect(classifyTenantRoute(method, url)).toEqual({
      explicitTenant: null,
      database,
      access,
      upstreamPath: url,
      holds: expect.toBeOneOf(['stream', 'query', 'bulk', null]),
      storage: expect.toBeOneOf(['none', 'frees', 'batch', 'grows']),
    });
  });

  it.each([
    ['GET', '/databases/shop/streams/docs?collection=Users', 'stream'],
    ['POST', '/databases/shop/streams/queries', 'stream'],
    ['GET', '/tenants/acme/databases/shop/streams/queries?query=from%20Users', 'stream'],
    // Spelt as the tenant's router also reads it: still a stream.
    ['GET', '/databases/shop/%73treams/docs', 'stream'],
    ['POST', '/databases/shop/queries', 'query'],
    ['GET', '/databases/shop/queries?query=from%20Users', 'query'],
    ['POST', '/databases/shop/%71ueries', 'query'],
    ['POST', '/databases/shop/bulk_insert', 'bulk'],
    ['POST', '/databases/shop/admin/sweep', 'bulk'],
    ['GET', '/databases/shop/docs?id=streams/1', null],
    ['GET', '/databases/streams/docs', null],
    ['GET', '/databases/shop/changes', null],
    ['POST', '/databases/shop/bulk_docs', null],
    ['GET', '/databases', null],
    ['PUT', '/admin/databases', null],
  ])('%s %s holds a request of the slow class %s', (method, url, holds) => {
    expect(classifyTenantRoute(method, url)?.holds).toBe(holds);
  });

  it.each([
    ['GET', '/databases/shop/docs?id=a', 'none'],
    ['POST', '/databases/shop/queries', 'none'],
    ['DELETE', '/databases/shop/docs?id=a', 'frees'],
    ['DELETE', '/databases/shop/indexes?name=ByName', 'frees'],
    ['POST', '/databases/shop/indexes/reset?name=ByName', 'frees'],
    ['POST', '/databases/shop/%69ndexes/reset?name=ByName', 'frees'],
    ['POST', '/databases/shop/admin/sweep', 'frees'],
    ['DELETE', '/databases/shop/subscriptions/new-users', 'frees'],
    ['DELETE', '/admin/databases?name=shop', 'frees'],
    ['POST', '/databases/shop/bulk_docs', 'batch'],
    ['PUT', '/databases/shop/docs?id=a', 'grows'],
    ['POST', '/databases/shop/bulk_insert', 'grows'],
    ['PUT', '/databases/shop/indexes', 'grows'],
    ['POST', '/databases/shop/indexes/reset/more', 'grows'],
    ['PUT', '/databases/shop/subscriptions', 'grows'],
    ['PUT', '/admin/databases', 'grows'],
  ])('%s %s: storage %s', (method, url, storage) => {
    expect(classifyTenantRoute(method, url)?.storage).toBe(storage);
  });

  it('takes the tenant from /tenants/{id}/… and strips it for the container', () => {
    expect(classifyTenantRoute('GET', '/tenants/acme/databases/shop/docs?id=a')).toEqual({
      explicitTenant: 'acme',
      database: 'shop',
      access: 'read',
      upstreamPath: '/databases/shop/docs?id=a',
      holds: null,
      storage: 'none',
    });
    expect(classifyTenantRoute('PUT', '/tenants/acme/admin/databases')).toMatchObject({
      explicitTenant: 'acme',
      access: 'admin',
      upstreamPath: '/admin/databases',
    });
  });

  it('decodes database names and refuses paths a tenant does not serve', () => {
    expect(classifyTenantRoute('GET', '/databases/my%20db/stats')?.database).toBe('my db');
    expect(classifyTenantRoute('GET', '/databases/%E0%A4%A/stats')).toBeNull();
    expect(classifyTenantRoute('GET', '/health')).toBeNull();
    expect(classifyTenantRoute('GET', '/tenants/acme')).toBeNull();
    expect(classifyTenantRoute('GET', '/tenants/acme/usage')).toBeNull();
    expect(classifyTenantRoute('GET', '/')).toBeNull();
  });

  it("decides access on the path as the tenant's router reads it: percent-decoded, an encoded slash kept", () => {
    const accessOf = (method: string, url: string) => classifyTenantRoute(method, url)?.access;
    // The router takes %61dmin as admin: so does the classification, and the path goes on as it was sent.
    expect(classifyTenantRoute('POST', '/databases/shop/%61dmin/sweep')).toEqual({
      explicitTenant: null,
      database: 'shop',
      access: 'admin',
      upstreamPath: '/databases/shop/%61dmin/sweep',
      holds: 'bulk',
      storage: 'frees',
    });
    expect(accessOf('POST', '/databases/shop/%73treams/queries')).toBe('read');
    // An encoded slash stays in its segment, for the router as here: not the streamed query route.
    expect(accessOf('POST', '/databases/shop/streams%2Fqueries')).toBe('write');
    expect(accessOf('POST', '/databases/my%2Fdb/admin/sweep')).toBe('admin');
    expect(classifyTenantRoute('GET', '/databases/shop/%E0%A4%A/docs')).toBeNull();
  });
});

describe('isControlPath', () => {
  it('takes /control and everything under it, and nothing that merely starts alike', () => {
    expect(isControlPath('/control')).toBe(true);
    expect(isControlPath('/control/principals')).toBe(true);
    expect(isControlPath('/control/tenants/acme/databases')).toBe(true);
    expect(isControlPath('/controls')).toBe(false);
    expect(isControlPath('/databases/control/docs')).toBe(false);
    expect(isControlPath('/tenants/acme/control/principals')).toBe(false);
  });
});
