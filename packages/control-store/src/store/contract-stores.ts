// The stores of one test of the fleet's contracts (fleet.contract.ts, gateways.contract.ts): each test gets a
// backing nobody else used, on a clock only the test moves (no sleep races a TTL), and leaves nothing open.
import { afterEach, beforeEach } from 'vitest';
import type { ControlStore } from './control-store.js';
import type { FleetClock } from './fleet.js';
import type { StoreBacking } from './store.contract.js';

/** A fresh backing whose stores (the first and every `openAnother`) read `fleetClock` when given one. */
export type FleetStoreFactory = (fleetClock?: FleetClock) => Promise<StoreBacking>;

export interface ContractStores {
  /** The test's store (read inside a test or hook: there is none outside one). */
  readonly store: ControlStore;
  /** The time every store of the test reads; the test moves it (`clock.now += TTL`). Starts at `t0`. */
  readonly clock: { now: number };
  /** Another store on the same backing and clock, as another gateway or host process opens. */
  another(): Promise<ControlStore>;
}

/** Registers the hooks that open a backing before each test and close all its stores after it. */
export function storesPerTest(factory: FleetStoreFactory, t0: number): ContractStores {
  const clock = { now: t0 };
  let backing: StoreBacking | undefined;
  const others: ControlStore[] = [];
  const current = () => {
    if (!backing) throw new Error('a contract store is open only inside a test');
    return backing;
  };

  beforeEach(async () => {
    clock.now = t0;
    backing = await factory(() => clock.now);
  });

  afterEach(async () => {
    const closing = backing;
    backing = undefined;
    for (const other of others.splice(0)) await other.close();
    await closing?.store.close();
    await closing?.cleanup();
  });

  return {
    get store() {
      return current().store;
    },
    clock,
    async another() {
      const opened = await current().openAnother();
      others.push(opened);
      return opened;
    },
  };
}
