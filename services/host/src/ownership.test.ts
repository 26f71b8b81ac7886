// The ownership check against a real control store (SQLite file): what it answers, and when its cache of
// "this tenant is mine" may be used (only within its time and under the lease epoch it was read with).
import path from 'node:path';
import { type ControlStore, openSqliteControlStore } from '@rookery/control-store';
import { isRookeryError } from '@rookery/protocol';
import { makeTempDir } from '@rookery/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { cacheMsFor, TenantOwnership } from './ownership.js';

const tmp = makeTempDir('rookery-ownership-');
let store: ControlStore;
beforeAll(async () => {
  store = await openSqliteControlStore(path.join(tmp.dir, 'control.db'));
  for (const id of ['acme', 'bolt']) await store.createTenant({ id, name: id });
});
afterAll(async () => {
  await store.close();
  tmp.cleanup();
});

async function refusal(promise: Promise<unknown>) {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  if (!isRookeryError(error)) throw new Error(`expected a RookeryError, got ${String(error)}`);
  return { code: error.code, status: error.status, details: error.details };
}

describe('TenantOwnership', () => {
  it('caches a positive answer for its time under its epoch only; never a negative one', async () => {
    const h1 = await store.acquireLease('h1', 'http://10.0.0.1:8081', 10, 60_000);
    await store.placeTenant('acme');
    let now = 0;
    let liveEpoch: number | null = h1.epoch;
    const ownership = new TenantOwnership({
      store,
      liveEpoch: () => liveEpoch,
      hostId: 'h1',
      cacheMs: 500,
      now: () => now,
    });
    expect(await ownership.confirm('acme')).toBe(1);

    // Moved away (as only a planned move could while h1's lease is live): within its time the entry holds ...
    await store.acquireLease('h2', 'http://10.0.0.2:8081', 10, 60_000);
    await store.movePlacement('acme', 1, 'h2');
    now = 499;
    expect(await ownership.confirm('acme')).toBe(1);
    // ... and not a millisecond after.
    now = 500;
    expect(await refusal(ownership.confirm('acme'))).toEqual({
      code: 'TenantNotHere',
      status: 421,
      details: { tenantId: 'acme', owner: { hostId: 'h2', address: 'http://10.0.0.2:8081' }, epoch: 2 },
    });

    // Back on h1; a stop forgets the entry, so the next confirm asks the store.
    await store.movePlacement('acme', 2, 'h1');
    expect(await ownership.confirm('acme')).toBe(3);
    await store.movePlacement('acme', 3, 'h2');
    ownership.forget('acme');
    expect((await refusal(ownership.confirm('acme'))).code).toBe('TenantNotHere');

    // A negative answer is not remembered: placed here a moment later, it is here at once.
    await store.movePlacement('acme', 4, 'h1');
    expect(await ownership.confirm('acme')).toBe(5);
    expect(ownership.placementEpochOf('acme')).toBe(5);

    // An entry read under one lease epoch is not used under another, nor without a lease.
    liveEpoch = null;
    expect(await refusal(ownership.confirm('acme'))).toMatchObject({ code: 'LeaseExpired', status: 503 });
    const again = await store.acquireLease('h1', 'http://10.0.0.1:8081', 10, 60_000);
    liveEpoch = again.epoch;
    // The placement still names the old host epoch until reclaimed: not this incarnation's.
    expect(await refusal(ownership.confirm('acme'))).toMatchObject({
      code: 'TenantNotHere',
      details: { owner: { hostId: 'h1' } },
    });
    await store.reclaimPlacements('h1', again.epoch);
    expect(await ownership.confirm('acme')).toBe(6);
  });

  it('a burst of confirms of one tenant reads its placement from the store once', async () => {
    const h3 = await store.acquireLease('h3', 'http://10.0.0.3:8081', 10, 60_000);
    await store.createTenant({ id: 'busy', name: 'busy' });
    await store.movePlacement('busy', (await store.placeTenant('busy')).epoch, 'h3');
    let reads = 0;
    const counted = {
      getPlacement: (id: string) => {
        reads++;
        return store.getPlacement(id);
      },
    };
    const ownership = new TenantOwnership({
      store: counted,
      liveEpoch: () => h3.epoch,
      hostId: 'h3',
      cacheMs: 500,
    });
    const epochs = await Promise.all(Array.from({ length: 20 }, () => ownership.confirm('busy')));
    expect(new Set(epochs).size).toBe(1);
    expect(reads).toBe(1);
  });

  it('an unplaced tenant: 421 with no owner', async () => {
    const ownership = new TenantOwnership({ store, liveEpoch: () => 99, hostId: 'h1', cacheMs: 500 });
    expect((await refusal(ownership.confirm('bolt'))).details).toEqual({
      tenantId: 'bolt',
      owner: null,
      epoch: null,
    });
  });

  it('caches for a third of the lease, at most a second', () => {
    expect(cacheMsFor(900)).toBe(300);
    expect(cacheMsFor(10_000)).toBe(1_000);
  });
});
