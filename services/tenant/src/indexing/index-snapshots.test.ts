// A tenant's indexer process copies its indexes to the mirror, and a tenant that lost its disk comes
// back with them: the restore places the copies and the indexer only catches up with what was written
// after. Real tenant server, real indexer process, real mirror directory.
import fs from 'node:fs';
import path from 'node:path';
import { listIndexSnapshots } from '@rookery/engine';
import { makeTempDir } from '@rookery/testkit';
import BetterSqlite3 from 'better-sqlite3';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig } from '../config.js';
import { buildTenantServer, type TenantServer } from '../server.js';
import { httpClient } from '../test-fixtures/http-client.js';

let tmp: ReturnType<typeof makeTempDir>;
let server: TenantServer | null = null;
let base = '';
const call = httpClient(() => base);
const saved = process.env.ROOKERY_INDEX_SNAPSHOT_ETAGS;

beforeEach(() => {
  tmp = makeTempDir('rookery-tenant-index-snapshots-');
  // The indexer process reads its settings from the environment it inherits: a copy after every change.
  process.env.ROOKERY_INDEX_SNAPSHOT_ETAGS = '1';
});
afterEach(async () => {
  await server?.close();
  server = null;
  if (saved === undefined) delete process.env.ROOKERY_INDEX_SNAPSHOT_ETAGS;
  else process.env.ROOKERY_INDEX_SNAPSHOT_ETAGS = saved;
  tmp.cleanup();
});

const data = () => path.join(tmp.dir, 'tenants', 'acme');
const mirror = () => path.join(tmp.dir, 'mirror');
const shopOnMirror = () => path.join(mirror(), 'acme', 'shop');
async function start(): Promise<void> {
  server = buildTenantServer(
    loadConfig({}, { dataDir: data(), logLevel: 'silent', mirrorDir: mirror(), mirrorMode: 'sync' }),
  );
  base = await server.app.listen({ host: '127.0.0.1', port: 0 });
}
const INDEX = { Name: 'Users/ByCity', Maps: [{ Collection: 'Users', Fields: { City: 'Address.City' } }] };
const user = (i: number, city: string) => ({
  Type: 'PUT',
  Id: `users/${i}`,
  Document: { Address: { City: city }, '@metadata': { '@collection': 'Users' } },
});
const parisIds = async () => {
  const answer = await call('POST', '/databases/shop/queries', {
    Query: "from index 'Users/ByCity' where City = 'Paris'",
    WaitForNonStaleResults: true,
  });
  expect(answer.status).toBe(200);
  return (answer.json.Results as { '@metadata': { '@id': string } }[])
    .map((r) => r['@metadata']['@id'])
    .sort();
};
/** The index copies on the mirror, in every generation of the database. */
const copies = () =>
  fs
    .readdirSync(path.join(shopOnMirror(), 'generations'))
    .filter((g) => !g.startsWith('.'))
    .flatMap((g) => listIndexSnapshots(path.join(shopOnMirror(), 'generations', g)));

/** Waits for a condition the indexer process reaches on its own (its next quiet point), within a bound. */
async function until<T>(read: () => T | undefined, what: string): Promise<T> {
  for (let waited = 0; waited < 60_000; waited += 50) {
    const value = read();
    if (value !== undefined) return value;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`gave up waiting for ${what}`);
}

describe('index snapshots through the tenant', () => {
  it('a tenant that lost its disk comes back with its index from the mirror and catches up from its etag', async () => {
    await start();
    expect((await call('PUT', '/admin/databases', { Name: 'Shop' })).status).toBe(201);
    expect((await call('PUT', '/databases/shop/indexes', INDEX)).status).toBe(201);
    const first = [user(0, 'Paris'), user(1, 'London'), user(2, 'Paris')];
    expect((await call('POST', '/databases/shop/bulk_docs', { Commands: first })).status).toBe(201);
    expect(await parisIds()).toEqual(['users/0', 'users/2']);
    const copy = await until(() => copies().find((c) => c.name === INDEX.Name), 'the index copy');
    // Written after the copy: the restored index must catch up with them.
    const later = [user(3, 'Paris'), { Type: 'DELETE', Id: 'users/0' }];
    expect((await call('POST', '/databases/shop/bulk_docs', { Commands: later })).status).toBe(201);
    const before = await parisIds();
    expect(before).toEqual(['users/2', 'users/3']);

    // The machine's disk is gone; the host starts the tenant again.
    await server!.close();
    server = null;
    fs.rmSync(data(), { recursive: true });
    await start();
    // Before any query reaches the indexer, the index file is already there, at an etag the copy covers.
    const indexFile = path.join(data(), 'databases', 'shop', 'indexes', 'users%2Fbycity.db');
    const restored = new BetterSqlite3(indexFile, { readonly: true, fileMustExist: true });
    const lastEtag = (
      restored.prepare("SELECT value FROM meta WHERE key = 'last_etag'").get() as { value: number }
    ).value;
    restored.close();
    expect(lastEtag).toBeGreaterThanOrEqual(copy.etag);
    expect(lastEtag).toBeGreaterThan(0);
    expect(await parisIds()).toEqual(before);
  });
});
