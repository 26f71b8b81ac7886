import { describe, expect, it } from 'vitest';
import { CatchUpWaits } from './catch-up-waits.js';

describe('CatchUpWaits', () => {
  it('asks an index once per check however many queries wait on it, and wakes them all', async () => {
    const waits = new CatchUpWaits();
    let caughtUp = false;
    let asked = 0;
    const isCaughtUp = () => {
      asked++;
      return caughtUp;
    };
    const pending = Array.from({ length: 100 }, () =>
      waits.wait('shop', 'Auto/Users/ByName', isCaughtUp, 60_000),
    );
    asked = 0;
    caughtUp = true;
    waits.check('shop');
    expect(asked).toBe(1);
    expect(await Promise.all(pending)).toEqual(Array(100).fill(true));
  });

  it("leaves other databases' waits alone and answers false once a wait's own deadline passes", async () => {
    const waits = new CatchUpWaits();
    const other = waits.wait('other', 'Idx', () => false, 60_000);
    expect(await waits.wait('shop', 'Idx', () => false, 20)).toBe(false);
    let settled = false;
    void other.then(() => {
      settled = true;
    });
    waits.check('shop');
    await Promise.resolve();
    expect(settled).toBe(false);
  });

  it('treats a check that throws (its database closed meanwhile) as not caught up', async () => {
    const waits = new CatchUpWaits();
    let closed = false;
    const isCaughtUp = () => {
      if (closed) throw new Error('the database connection is not open');
      return false;
    };
    const pending = waits.wait('shop', 'Idx', isCaughtUp, 50);
    closed = true;
    expect(() => waits.check()).not.toThrow();
    expect(await pending).toBe(false);
  });
});
