// Chaos 5 (README.md beside this file): the control store's PostgreSQL goes down for twice the lease TTL
// and comes back, while sync-mode writers run through both gateways. Every host's lease lapses at once;
// the reaper's guard (more than half of the leases expired: the store or the network, not the hosts) and
// the hosts' reclaims must keep every tenant where it was, and no acknowledged write may be lost.
import { INTERNAL_TOKEN_HEADER } from '@rookery/protocol';
import { request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  acknowledgedMore,
  CHAOS_TTL_MS,
  type ChaosFleet,
  expectAcknowledgedKept,
  GIVE_UP_MS,
  startChaosFleet,
  startWriter,
  type TenantAdmin,
} from '../test-fixtures/chaos.js';
import { FLEET_TOKEN } from '../test-fixtures/fleet-stack.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('chaos: PostgreSQL restarted under sync-mode writers', () => {
  let chaos: ChaosFleet;
  const tenants: TenantAdmin[] = [];

  beforeAll(async () => {
    chaos = await startChaosFleet('chaos_pg_restart');
    // One tenant per host: the store places each new one on the least loaded host.
    for (const id of ['acme', 'bolt', 'core']) tenants.push(await chaos.tenant(id));
  }, 300_000);

  afterAll(async () => {
    await chaos?.close();
  }, 120_000);

  /** Every host's count of the reaper's moves (its metrics), summed. */
  async function reaperMoves(): Promise<number> {
    let moves = 0;
    for (const host of chaos.fleet.hosts) {
      const reply = await request(`${host.address}/metrics`, {
        headers: { [INTERNAL_TOKEN_HEADER]: FLEET_TOKEN },
      });
      for (const m of (await reply.body.text()).matchAll(
        /^rookery_host_reaper_moves_total\{[^}]*\} (\d+)$/gm,
      ))
        moves += Number(m[1]);
    }
    return moves;
  }

  it('5. down for twice the lease TTL: no tenant re-placed, every acknowledged write kept; writes meanwhile fail 503', async () => {
    const before = await Promise.all(tenants.map((t) => chaos.owner(t.id)));
    expect(new Set(before.map((o) => o.hostId)).size).toBe(3);
    const writers = tenants.map((t) => startWriter(t, 'restart'));
    try {
      for (const writer of writers) await acknowledgedMore(writer, 10);
      const refusedBefore = writers.map((w) => w.refused.length);
      await chaos.postgres.shutDown();
      // The hosts' leases lapse: every tenant stops acknowledging on its own (seen by its writer).
      await expect
        .poll(() => writers.every((w, i) => w.refused.length > refusedBefore[i]!), { timeout: GIVE_UP_MS })
        .toBe(true);
      await sleep(2 * CHAOS_TTL_MS); // down for twice the TTL at least (a wait, not a measurement)
      await chaos.postgres.start();
      for (const writer of writers) await acknowledgedMore(writer, 10);
    } finally {
      await Promise.all(writers.map((w) => w.stop()));
    }
    await expectAcknowledgedKept(
      'chaos 5',
      tenants.map((tenant, i) => ({ tenant, writer: writers[i]! })),
    );
    const after = await Promise.all(tenants.map((t) => chaos.owner(t.id)));
    console.log(`chaos 5: placements before ${JSON.stringify(before)}, after ${JSON.stringify(after)}`);
    // No wave: every tenant on the host it was on, none moved by a reaper.
    expect(after.map((o) => o.hostId)).toEqual(before.map((o) => o.hostId));
    expect(await reaperMoves()).toBe(0);
    // What clients saw while the store was down: 503s (with Retry-After), never another error.
    for (const writer of writers)
      for (const r of writer.refused) expect(`${r.status} ${r.code}`).toMatch(/^503 /);
  }, 300_000);
});
