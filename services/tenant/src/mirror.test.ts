import fs from 'node:fs';
import path from 'node:path';
import { makeTempDir } from '@rookery/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig, mirrorOf } from './config.js';
import { buildTenantServer, type TenantServer } from './server.js';
import { httpClient } from './test-fixtures/http-client.js';

let tmp: ReturnType<typeof makeTempDir>;
let server: TenantServer | null = null;
let base = '';
const call = httpClient(() => base);

beforeEach(() => {
  tmp = makeTempDir('rookery-tenant-mirror-');
});
afterEach(async () => {
  await server?.close();
  server = null;
  tmp.cleanup();
});

describe('mirror configuration', () => {
  it('reads the mirror, the default mode and per-database modes from the environment', () => {
    const config = loadConfig({
      ROOKERY_DATA: '/var/lib/rookery/tenants/acme',
      ROOKERY_MIRROR: '/mnt/mirror',
      ROOKERY_MIRROR_MODE: 'sync',
      ROOKERY_MIRROR_DATABASES: 'Orders=async, scratch=off',
      ROOKERY_MIRROR_RETENTION_HOURS: '48',
    });
    expect(mirrorOf(config)).toEqual({
      root: '/mnt/mirror/acme',
      mode: 'sync',
      modes: { orders: 'async', scratch: 'off' },
      tuning: { retentionMs: 48 * 3_600_000 },
    });
    expect(mirrorOf(loadConfig({ ROOKERY_DATA: '/data/x' }))).toBeNull();
    expect(
      mirrorOf(loadConfig({ ROOKERY_MIRROR: '/m', ROOKERY_TENANT_ID: 't-1', ROOKERY_DATA: '/d' }))?.root,
    ).toBe('/m/t-1');
  });

  it('refuses what it cannot use, naming the variable', () => {
    expect(() => loadConfig({ ROOKERY_MIRROR_DATABASES: 'orders=fast' })).toThrow(/ROOKERY_MIRROR_DATABASES/);
    expect(() => loadConfig({ ROOKERY_MIRROR_MODE: 'eventually' })).toThrow(/ROOKERY_MIRROR_MODE/);
    expect(() => loadConfig({ ROOKERY_TENANT_ID: '../other' })).toThrow(/ROOKERY_TENANT_ID/);
    expect(() => mirrorOf(loadConfig({ ROOKERY_MIRROR: '/m', ROOKERY_DATA: '/data/..' }))).toThrow(
      /ROOKERY_TENANT_ID/,
    );
  });

  // The tenant took ids the control plane never issues (upper case, '.', '_', up to 128 characters): such a
  // tenant mirrored to a directory that no tenant id names, so the worker's purge and restore (which go by
  // the control plane's id) could never find it, and on a case-insensitive mirror `Acme` and `acme` share one.
  it('takes only the tenant ids the control plane issues (protocol TenantIdSchema)', () => {
    for (const id of ['Acme', 'acme.corp', 'acme_corp', 'a'.repeat(64), '-acme']) {
      expect(() => loadConfig({ ROOKERY_TENANT_ID: id }), id).toThrow(/ROOKERY_TENANT_ID/);
      expect(
        () => mirrorOf(loadConfig({ ROOKERY_MIRROR: '/m', ROOKERY_DATA: `/data/tenants/${id}` })),
        id,
      ).toThrow(/ROOKERY_TENANT_ID/);
    }
    expect(mirrorOf(loadConfig({ ROOKERY_MIRROR: '/m', ROOKERY_TENANT_ID: 'a'.repeat(63) }))?.root).toBe(
      `/m/${'a'.repeat(63)}`,
    );
  });
});

describe('a tenant that lost its disk', () => {
  const data = () => path.join(tmp.dir, 'tenants', 'acme');
  const start = async () => {
    server = buildTenantServer(
      loadConfig(
        {},
        {
          dataDir: data(),
          logLevel: 'silent',
          mirrorDir: path.join(tmp.dir, 'mirror'),
          mirrorMode: 'sync',
        },
      ),
    );
    base = await server.app.listen({ host: '127.0.0.1', port: 0 });
  };
  const search = () =>
    call('POST', '/databases/shop/queries', {
      Query: "from index 'Users/ByCity' where City = 'Paris'",
      WaitForNonStaleResults: true,
    });

  it('gets its databases back from the mirror on start, with their indexes rebuilt from the stored definitions', async () => {
    await start();
    expect((await call('PUT', '/admin/databases', { Name: 'Shop' })).status).toBe(201);
    const index = { Name: 'Users/ByCity', Maps: [{ Collection: 'Users', Fields: { City: 'Address.City' } }] };
    expect((await call('PUT', '/databases/shop/indexes', index)).status).toBe(201);
    const users = ['Paris', 'London', 'Paris'].map((city, i) => ({
      Type: 'PUT',
      Id: `users/${i}`,
      Document: { Address: { City: city }, '@metadata': { '@collection': 'Users' } },
    }));
    expect((await call('POST', '/databases/shop/bulk_docs', { Commands: users })).status).toBe(201);
    const before = await search();
    expect(before.json.TotalResults).toBe(2);
    const stats = await call('GET', '/databases/shop/stats');
    expect(stats.json.Mirror).toMatchObject({ Mode: 'sync', State: 'streaming', LagTransactions: 0 });

    // The machine's disk is gone; the host starts the tenant again.
    await server!.close();
    server = null;
    fs.rmSync(data(), { recursive: true });
    await start();
    expect((await call('GET', '/databases')).json.Databases).toEqual(['shop']);
    const after = await search();
    expect(after.status).toBe(200);
    expect(after.json.TotalResults).toBe(2);
    expect(
      (after.json.Results as { '@metadata': { '@id': string } }[]).map((r) => r['@metadata']['@id']),
    ).toEqual(
      (before.json.Results as { '@metadata': { '@id': string } }[]).map((r) => r['@metadata']['@id']),
    );
  });

  it('does not bring back a database that was deleted', async () => {
    await start();
    expect((await call('PUT', '/admin/databases', { Name: 'Shop' })).status).toBe(201);
    expect((await call('PUT', '/admin/databases', { Name: 'Gone' })).status).toBe(201);
    expect((await call('DELETE', '/admin/databases?name=Gone')).status).toBe(204);
    await server!.close();
    server = null;
    fs.rmSync(data(), { recursive: true });
    await start();
    expect((await call('GET', '/databases')).json.Databases).toEqual(['shop']);
  });
});
