// Chaos 1 and 2 (README.md beside this file): a host's machine dies (SIGKILL to the host and its tenant
// processes), and a host is paused past its lease and resumed (SIGSTOP, SIGCONT), while sync-mode writers
// run through both gateways. One fleet for both (its start is most of the time): three hosts, then the dead
// one retired and a fourth started for the second test.
import fs from 'node:fs';
import path from 'node:path';
import { until } from '@rookery/host/testing';
import { HostTenantListSchema, HostTenantNotHereAnswerSchema, HostWakeAnswerSchema } from '@rookery/protocol';
import { Agent, request } from 'undici';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  acknowledgedMore,
  type ChaosFleet,
  expectAcknowledgedKept,
  GIVE_UP_MS,
  startChaosFleet,
  startWriter,
  type TenantAdmin,
} from '../test-fixtures/chaos.js';

const epochPrefix = (epoch: number) => `e${String(epoch).padStart(10, '0')}-`;

/** Every file of the epoch's generations of a database on the mirror, with its size. */
function generationFiles(mirror: string, tenantId: string, epoch: number): Record<string, number> {
  const generations = path.join(mirror, tenantId, 'shop', 'generations');
  const files: Record<string, number> = {};
  for (const generation of fs.readdirSync(generations)) {
    if (!generation.startsWith(epochPrefix(epoch))) continue;
    for (const entry of fs.readdirSync(path.join(generations, generation), { recursive: true })) {
      const file = path.join(generations, generation, String(entry));
      if (fs.statSync(file).isFile()) files[path.relative(generations, file)] = fs.statSync(file).size;
    }
  }
  return files;
}

describe('chaos: hosts dying and pausing under sync-mode writers', () => {
  let chaos: ChaosFleet;
  let tenants: TenantAdmin[];

  beforeAll(async () => {
    chaos = await startChaosFleet('chaos_hosts');
    // One tenant per host: the store places each new one on the least loaded host.
    tenants = [];
    for (const id of ['acme', 'bolt', 'core']) tenants.push(await chaos.tenant(id));
  }, 300_000);

  afterAll(async () => {
    await chaos?.close();
  }, 120_000);

  it('1. a host killed: its tenant answers from another host with a higher epoch and every acknowledged write; the others stay', async () => {
    const owners = await Promise.all(tenants.map((t) => chaos.owner(t.id)));
    expect(new Set(owners.map((o) => o.hostId)).size).toBe(3);
    const victim = owners[0]!;
    const writers = tenants.map((t) => startWriter(t, 'killed'));
    try {
      for (const writer of writers) await acknowledgedMore(writer, 10);
      await chaos.killMachine(victim.index);
      const moved = await until(
        'acme re-placed by a live host’s reaper',
        () => chaos.owner('acme'),
        (p) => p.hostId !== victim.hostId,
        GIVE_UP_MS,
      );
      expect(moved.epoch).toBeGreaterThan(victim.epoch);
      // Acknowledged again, through both gateways, by the new owner.
      await acknowledgedMore(writers[0]!, 10);
    } finally {
      await Promise.all(writers.map((w) => w.stop()));
    }
    await expectAcknowledgedKept(
      'chaos 1',
      tenants.map((tenant, i) => ({ tenant, writer: writers[i]! })),
    );
    // The others were never moved (a lease lapsing under load is reclaimed by its host, not moved).
    for (const [i, t] of tenants.entries())
      if (i > 0) expect((await chaos.owner(t.id)).hostId).toBe(owners[i]!.hostId);
    // While the tenant had no owner its clients saw 503 (TenantUnavailable, with Retry-After), nothing else.
    for (const r of writers[0]!.refused) expect(`${r.status} ${r.code}`).toMatch(/^503 /);
    // The dead host leaves the fleet for good (its lease would count as expired in the reaper's guard).
    await chaos.fleet.store.drainHost(victim.hostId);
    await chaos.fleet.store.retireHost(victim.hostId);
  }, 300_000);

  it('2. a host paused past its lease: its tenant moves; resumed, the old owner refuses writes (503), stops its copy without writing to the mirror, and a restore takes the new epoch', async () => {
    const paused = await chaos.fleet.startHost('h4');
    const dove = await chaos.tenant('dove'); // the least loaded host: the new one
    const before = await chaos.owner('dove');
    expect(before.hostId).toBe('h4');
    // The old owner's tenant, straight on its socket (what a gateway's pooled relay connection reaches).
    const { socketPath } = HostWakeAnswerSchema.parse((await paused.wake('dove')).body);
    const socket = new Agent({ connect: { socketPath } });
    const direct = async (id: string) => {
      const reply = await request(`http://tenant/databases/shop/docs?id=${id}`, {
        method: 'PUT',
        dispatcher: socket,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ N: 0 }),
      });
      return { status: reply.statusCode, json: (await reply.body.json()) as { code?: string } };
    };

    // A request in flight to the paused host waits until it resumes (nothing bounds a tenant's answer):
    // the client gives up after a while, as a real one does, and goes on.
    const writer = startWriter(dove, 'paused', { answerWithinMs: 5_000 });
    let moved: { hostId: string; epoch: number };
    try {
      await acknowledgedMore(writer, 10);
      paused.process.kill('SIGSTOP'); // renews nothing; its tenant runs on, to its own deadline
      moved = await until(
        'dove re-placed by a live host’s reaper',
        () => chaos.owner('dove'),
        (p) => p.hostId !== 'h4',
        GIVE_UP_MS,
      );
      expect(moved.epoch).toBeGreaterThan(before.epoch);
      // The old owner acknowledges nothing: its lease's deadline passed before the move.
      const refused = await direct('stale/1');
      expect([refused.status, refused.json.code]).toEqual([503, 'LeaseExpired']);
      await acknowledgedMore(writer, 10); // by the new owner, which started its generation on the mirror
      const oldLineage = generationFiles(chaos.fleet.mirrorDir, 'dove', before.epoch);
      expect(Object.keys(oldLineage).length).toBeGreaterThan(0);

      paused.process.kill('SIGCONT');
      await until(
        'h4 stopped its copy of dove',
        async () =>
          HostTenantListSchema.parse((await paused.call('GET', '/tenants')).body).tenants.find(
            (t) => t.tenantId === 'dove',
          )?.state,
        (state) => state !== 'running' && state !== 'starting',
        GIVE_UP_MS,
      );
      const notHere = await paused.call('POST', '/tenants/dove/wake');
      expect(notHere.status).toBe(421);
      expect(HostTenantNotHereAnswerSchema.parse(notHere.body)).toMatchObject({
        owner: { hostId: moved.hostId },
        epoch: moved.epoch,
      });
      expect((await direct('stale/2').catch(() => ({ status: 0 }))).status).not.toBe(201);
      // Nothing more of the old epoch reached the mirror: not a segment, not a snapshot at its stop.
      expect(generationFiles(chaos.fleet.mirrorDir, 'dove', before.epoch)).toEqual(oldLineage);

      // A restore elsewhere takes the new epoch's lineage: drained, the new owner hands dove to a host
      // that restores it from the mirror, and it holds what only the new owner acknowledged.
      await acknowledgedMore(writer, 10);
      await chaos.fleet.store.drainHost(moved.hostId);
      await until(
        'dove moved off the drained host',
        () => chaos.owner('dove'),
        (p) => p.hostId !== moved.hostId,
        GIVE_UP_MS,
      );
      await acknowledgedMore(writer, 10);
    } finally {
      await writer.stop();
      await socket.close();
    }
    await chaos.fleet.store.activateHost(moved.hostId);
    await expectAcknowledgedKept('chaos 2', [{ tenant: dove, writer }]);
    for (const r of writer.refused) expect(`${r.status} ${r.code}`).toMatch(/^(503 |0 no answer within)/);
  }, 300_000);
});
