// The tenant's mirror lag as its host exports it: the worst of a catalog's open mirrored databases.
import fs from 'node:fs';
import path from 'node:path';
import { makeTempDir } from '@rookery/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DatabaseCatalog } from '../catalog.js';

let tmp: ReturnType<typeof makeTempDir>;
const catalogs: DatabaseCatalog[] = [];
beforeEach(() => {
  tmp = makeTempDir('rookery-catalog-lag-');
});
afterEach(async () => {
  await Promise.all(catalogs.splice(0).map((c) => c.closeAll()));
  tmp.cleanup();
});

function catalog(mirror: ConstructorParameters<typeof DatabaseCatalog>[2]): DatabaseCatalog {
  const made = new DatabaseCatalog(path.join(tmp.dir, 'data'), {}, mirror);
  catalogs.push(made);
  return made;
}

describe('DatabaseCatalog.mirrorLag', () => {
  it('is null when no database is mirrored', async () => {
    const unmirrored = catalog(null);
    await unmirrored.create('shop').batch([{ Type: 'PUT', Id: 'orders/1', Document: { N: 1 } }]);
    expect(unmirrored.mirrorLag()).toBeNull();
  });

  it('is zero transactions once a sync-mode write was acknowledged (on the mirror before its answer)', async () => {
    const synced = catalog({ root: path.join(tmp.dir, 'mirror'), mode: 'sync' });
    await synced.create('shop').batch([{ Type: 'PUT', Id: 'orders/1', Document: { N: 1 } }]);
    // (Only the count is asserted: LagMs was seen reading 1 ms here right after the acknowledgment.)
    expect(synced.mirrorLag()?.transactions).toBe(0);
  });

  it('reports the worst database while the mirror refuses writes: its transactions not restorable, and their age', async () => {
    // A regular file where the tenant's mirror directory should be: every write to the mirror fails (ENOTDIR).
    fs.writeFileSync(path.join(tmp.dir, 'not-a-directory'), '');
    const failing = catalog({
      root: path.join(tmp.dir, 'not-a-directory', 'acme'),
      mode: 'async',
      tuning: { confirmTimeoutMs: 100 },
    });
    const shop = failing.create('shop');
    const crm = failing.create('crm');
    const queuedBefore = Date.now();
    await shop.batch([{ Type: 'PUT', Id: 'orders/1', Document: { N: 1 } }]);
    await shop.batch([{ Type: 'PUT', Id: 'orders/2', Document: { N: 2 } }]);
    await shop.batch([{ Type: 'PUT', Id: 'orders/3', Document: { N: 3 } }]);
    await crm.batch([{ Type: 'PUT', Id: 'people/1', Document: { N: 1 } }]);
    const written = Date.now();
    // A clock tick later the oldest unshipped write is at least 1 ms old (no sleep of a guessed length).
    while (Date.now() === written) await new Promise((resolve) => setTimeout(resolve, 1));
    const lag = failing.mirrorLag();
    expect(lag?.transactions).toBe(shop.stats().Mirror!.LagTransactions);
    expect(lag?.transactions).toBeGreaterThanOrEqual(3);
    expect(crm.stats().Mirror!.LagTransactions).toBeLessThan(lag!.transactions);
    // The oldest unshipped write was queued after queuedBefore, so its age is at most the time since.
    expect(lag!.ms).toBeGreaterThanOrEqual(1);
    expect(lag!.ms).toBeLessThanOrEqual(Date.now() - queuedBefore);
  });
});
