// A tenant catalog that comes back to a host holding an old copy of its databases (A → B → A in a fleet):
// the copy left from the earlier ownership is stale once another owner served, and the mirror's newest
// state is restored in its place; a copy nobody else superseded (the host reclaimed its own tenant) is kept.
// Real databases on real directories, one shared mirror, as hosts in a fleet have.
import fs from 'node:fs';
import path from 'node:path';
import { makeTempDir } from '@rookery/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { DatabaseCatalog } from '../catalog.js';

let tmp: ReturnType<typeof makeTempDir>;
beforeEach(() => {
  tmp = makeTempDir('rookery-superseded-');
});
afterEach(() => tmp.cleanup());

/** One owner of the tenant: host `host`'s data directory, the shared mirror, placement epoch `epoch`. */
function ownerOn(host: string, epoch: number): DatabaseCatalog {
  return new DatabaseCatalog(
    path.join(tmp.dir, host),
    {},
    { root: path.join(tmp.dir, 'mirror'), mode: 'sync', tuning: { epoch } },
  );
}

const put = (catalog: DatabaseCatalog, db: string, id: string) =>
  catalog.get(db).batch([{ Type: 'PUT', Id: id, Document: { Id: id } }]);
const has = (catalog: DatabaseCatalog, db: string, id: string) => catalog.get(db).get(id) !== null;

describe('a host taking back a tenant another owner served meanwhile', () => {
  it('restores the mirror’s newest state over its stale copy, brings databases created meanwhile and drops deleted ones', async () => {
    // A (epoch 1) serves the tenant: two databases, acknowledged (sync-mode) writes.
    const a1 = ownerOn('host-a', 1);
    a1.create('Shop');
    a1.create('Old');
    await put(a1, 'shop', 'users/a');
    await put(a1, 'old', 'notes/a');
    await a1.closeAll();

    // B (epoch 2) takes over from the mirror, writes, creates a database and deletes one.
    const b = ownerOn('host-b', 2);
    expect(
      b
        .restoreMissing()
        .map((r) => r.database)
        .sort(),
    ).toEqual(['old', 'shop']);
    await put(b, 'shop', 'users/b');
    b.create('New');
    await put(b, 'new', 'notes/b');
    await b.delete('Old');
    await b.closeAll();

    // Back on A (epoch 3), which still has its epoch-1 files: the mirror is the truth.
    const a3 = ownerOn('host-a', 3);
    const restored = a3.restoreMissing();
    expect(restored.map((r) => [r.database, r.replacedStaleCopy])).toEqual([
      ['new', false],
      ['shop', true],
    ]);
    expect(has(a3, 'shop', 'users/a')).toBe(true);
    expect(has(a3, 'shop', 'users/b')).toBe(true);
    expect(has(a3, 'new', 'notes/b')).toBe(true);
    expect(a3.list()).toEqual(['New', 'Shop']); // Old, deleted by B, is gone
    // Nothing of the stale copy is left behind.
    expect(fs.readdirSync(path.join(tmp.dir, 'host-a'))).not.toContain('superseded');
    await put(a3, 'shop', 'users/a3');
    await a3.closeAll();

    // A reclaims its own tenant (epoch 4): nobody else wrote since epoch 3, so its files are kept as they are.
    const a4 = ownerOn('host-a', 4);
    expect(a4.restoreMissing()).toEqual([]);
    expect(has(a4, 'shop', 'users/a3')).toBe(true);
    await a4.closeAll();
  });

  it('keeps local files on one machine (epoch 0), whatever the mirror holds', async () => {
    const one = ownerOn('host-a', 0);
    one.create('Shop');
    await put(one, 'shop', 'users/1');
    await one.closeAll();
    const again = ownerOn('host-a', 0);
    expect(again.restoreMissing()).toEqual([]);
    expect(has(again, 'shop', 'users/1')).toBe(true);
    await again.closeAll();
  });
});
