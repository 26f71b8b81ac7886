// The lease keeper against a real control store (a SQLite file, and a real PostgreSQL server from the
// test kit), on a clock the test moves: the host's clock is ManualTime, the store's is the same time
// plus a skew the test can jump (the store's test-only fleetClock). No test sleeps against a TTL.
import path from 'node:path';
import {
  type ControlStore,
  type FleetStore,
  openPostgresControlStore,
  openSqliteControlStore,
} from '@rookery/control-store';
import { RookeryError } from '@rookery/protocol';
import { makeTempDir, type PostgresServer, startPostgres } from '@rookery/testkit';
import pino from 'pino';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { LeaseKeeper, type LeaseStore } from './lease-keeper.js';
import { ManualTime } from './test-fixtures/manual-time.js';

const TTL = 900;
const DB_EPOCH = 1_800_000_000_000;

type Open = (fleetClock: () => number) => Promise<{ store: ControlStore; cleanup: () => Promise<void> }>;

const tmp = makeTempDir('rookery-lease-keeper-');
let postgres: PostgresServer | undefined;
let files = 0;
const openSqlite: Open = async (fleetClock) => {
  const store = await openSqliteControlStore(path.join(tmp.dir, `control-${files++}.db`), { fleetClock });
  return { store, cleanup: () => store.close() };
};
const openPostgres: Open = async (fleetClock) => {
  postgres ??= await startPostgres();
  const { url, drop } = await postgres.freshDatabase('lease');
  const store = await openPostgresControlStore(url, { fleetClock });
  return {
    store,
    cleanup: async () => {
      await store.close();
      await drop();
    },
  };
};
afterAll(async () => {
  await postgres?.stop();
  tmp.cleanup();
});

/** The real store, with faults the test switches on: calls that fail, calls that never answer, slow answers. */
class FaultyStore implements LeaseStore {
  mode: 'ok' | 'refuse' | 'hang' = 'ok';
  /** Host time an answer takes to come back. */
  answerDelayMs = 0;
  calls = 0;

  constructor(
    private readonly store: FleetStore,
    private readonly time: ManualTime,
  ) {}

  private async through<T>(call: () => Promise<T>): Promise<T> {
    this.calls++;
    if (this.mode === 'hang') return new Promise<T>(() => {});
    if (this.mode === 'refuse') throw new RookeryError('InternalError', 'connect ECONNREFUSED (injected)');
    const answer = await call();
    this.time.skip(this.answerDelayMs);
    return answer;
  }

  acquireLease: FleetStore['acquireLease'] = (...a) => this.through(() => this.store.acquireLease(...a));
  renewLease: FleetStore['renewLease'] = (...a) => this.through(() => this.store.renewLease(...a));
  reclaimPlacements: FleetStore['reclaimPlacements'] = (...a) =>
    this.through(() => this.store.reclaimPlacements(...a));
}

describe.each([
  ['SQLite', openSqlite],
  ['PostgreSQL', openPostgres],
] as const)('LeaseKeeper on %s', (_dialect, open) => {
  let time: ManualTime;
  let skew: number;
  let store: ControlStore;
  let faulty: FaultyStore;
  let keeper: LeaseKeeper;
  let cleanup: () => Promise<void>;
  let events: string[];

  const advance = (ms: number) => time.advance(ms, () => keeper.settled());

  async function startKeeper(): Promise<void> {
    time = new ManualTime();
    skew = 0;
    ({ store, cleanup } = await open(() => DB_EPOCH + time.now() + skew));
    faulty = new FaultyStore(store, time);
    keeper = new LeaseKeeper({
      store: faulty,
      hostId: 'h1',
      address: 'http://10.0.0.1:8081',
      capacity: 10,
      ttlMs: TTL,
      logger: pino({ level: 'silent' }),
      now: time.now,
      timers: time,
    });
    events = [];
    keeper.on('renewed', (l) => events.push(`renewed ${l.epoch}${l.acquired ? ' acquired' : ''}`));
    keeper.on('lapsed', (l) => events.push(`lapsed ${l.epoch}`));
    keeper.on('superseded', (l) => events.push(`superseded ${l.epoch}`));
    expect(await keeper.start()).toEqual({ epoch: 1, remainingMs: TTL });
  }
  afterEach(async () => {
    keeper.stop();
    await keeper.settled();
    await cleanup();
  });

  it('acquires at start, renews every TTL/3, and counts the deadline from when the request was sent', async () => {
    await startKeeper();
    expect(await store.getHost('h1')).toMatchObject({
      epoch: 1,
      live: true,
      address: 'http://10.0.0.1:8081',
    });
    faulty.answerDelayMs = 50;
    await advance(TTL / 3); // the renewal leaves at 300 and its answer arrives at 350
    expect(events).toEqual(['renewed 1 acquired', 'renewed 1']);
    // Sent + TTL on the host's clock: the 50 ms the answer took are not the host's to count.
    expect(keeper.remainingMs()).toBe(TTL - 50);
    const host = (await store.getHost('h1'))!;
    // The store's deadline is never earlier than the host's (here the two clocks tick alike).
    expect(time.now() + keeper.remainingMs()).toBeLessThanOrEqual(host.expiresAt - DB_EPOCH - skew);
    await advance(10 * TTL);
    expect(keeper.liveEpoch()).toBe(1);
    expect(events.filter((e) => e === 'renewed 1').length).toBeGreaterThanOrEqual(10);
    expect(events.some((e) => e.startsWith('lapsed'))).toBe(false);
  });

  it('keeps trying a failing renewal until the deadline, lapses, then takes a new epoch and reclaims its tenants', async () => {
    await startKeeper();
    for (const id of ['acme', 'bolt']) {
      await store.createTenant({ id, name: id });
      await store.placeTenant(id);
    }
    faulty.mode = 'refuse';
    await advance(TTL - 1); // renewals from 300 on, each refused, retried every TTL/10
    expect(faulty.calls).toBeGreaterThan(4);
    expect(keeper.remainingMs()).toBe(1);
    expect(events).toEqual(['renewed 1 acquired']);
    await advance(1);
    expect(events).toEqual(['renewed 1 acquired', 'lapsed 1']);
    expect(keeper.remainingMs()).toBe(0);
    expect(keeper.liveEpoch()).toBeNull();

    // Meanwhile (past the grace), another host took bolt over.
    await store.acquireLease('h2', 'http://10.0.0.2:8081', 10, 60_000);
    const bolt = (await store.getPlacement('bolt'))!;
    await store.movePlacement('bolt', bolt.epoch, 'h2');

    faulty.mode = 'ok';
    await advance(TTL / 10);
    expect(events.at(-1)).toBe('renewed 2 acquired');
    expect(keeper.liveEpoch()).toBe(2);
    // Acquired by the first retry after the store came back, at most TTL/10 ago.
    expect(keeper.remainingMs()).toBeGreaterThanOrEqual(TTL - TTL / 10);
    expect(await store.getPlacement('acme')).toMatchObject({ hostId: 'h1', hostEpoch: 2, epoch: 2 });
    expect(await store.getPlacement('bolt')).toMatchObject({ hostId: 'h2' });
    await advance(TTL);
    expect(keeper.liveEpoch()).toBe(2);
  });

  it('a store call that never answers does not hold the lapse back', async () => {
    await startKeeper();
    faulty.mode = 'hang';
    // Nothing reaches the store now, so the keeper's work between timers is promise chains only, done
    // by the next macrotask (keeper.settled() would wait on the hung call, whose timeout is a timer).
    const flush = () => new Promise<void>((resolve) => setImmediate(resolve));
    await time.advance(TTL - 1, flush);
    expect(faulty.calls).toBeGreaterThan(1); // the first hung call timed out and was tried again
    expect(keeper.remainingMs()).toBe(1);
    await time.advance(1, flush);
    expect(events).toEqual(['renewed 1 acquired', 'lapsed 1']);
    // From here the next timer is the hung call's timeout, so the keeper's work can be awaited again.
    faulty.mode = 'ok';
    await advance(TTL); // the hung attempt times out; the next one acquires a new lease
    expect(keeper.liveEpoch()).toBe(2);
  });

  it('when the store says the lease expired (its clock ran ahead), it lapses at once and acquires a new epoch', async () => {
    await startKeeper();
    skew = 10 * TTL;
    await advance(TTL / 3);
    expect(events).toEqual(['renewed 1 acquired', 'lapsed 1', 'renewed 2 acquired']);
    expect(keeper.liveEpoch()).toBe(2);
  });

  it('superseded by another registration of its host id: it holds nothing and stops renewing', async () => {
    await startKeeper();
    await store.acquireLease('h1', 'http://10.0.0.9:8081', 10, TTL);
    await advance(TTL / 3);
    expect(events).toEqual(['renewed 1 acquired', 'superseded 1']);
    expect(keeper.remainingMs()).toBe(0);
    expect(keeper.liveEpoch()).toBeNull();
    expect(time.pending).toBe(0);
    expect((await store.getHost('h1'))!.epoch).toBe(2);
  });
});
