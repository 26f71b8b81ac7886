// rookery host list|drain|activate|retire on a real control store (the SQLite file of a temp data
// directory). The hosts are registered the way a fleet host registers (acquireLease); what a draining
// host does itself — moving its tenants — is played by the test through the same store
// (services/host/src/drain.postgres.test.ts runs the real thing).
import { openControlStore } from '@rookery/control-store';
import { makeTempDir } from '@rookery/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runCli } from '../cli.js';
import { runRookery } from '../test-fixtures/run-cli.js';

let data: { dir: string; cleanup: () => void };
beforeEach(() => {
  data = makeTempDir('rookery-cli-host-');
});
afterEach(() => data.cleanup());
const rookery = (...args: string[]) => runRookery(data.dir, args);

/** Two hosts with leases (h1 holding acme and bolt), as fleet hosts would have registered. */
async function fleet() {
  await rookery('tenant', 'create', 'acme');
  await rookery('tenant', 'create', 'bolt');
  const store = await openControlStore({ dataDir: data.dir });
  await store.acquireLease('h1', 'https://h1.internal:8443', 10, 3_600_000);
  expect(await store.placeTenant('acme')).toMatchObject({ hostId: 'h1' });
  await store.acquireLease('h2', 'https://h2.internal:8443', 5, 3_600_000);
  // bolt on h1 too: h2 is registered but made to wait.
  await store.drainHost('h2');
  expect(await store.placeTenant('bolt')).toMatchObject({ hostId: 'h1' });
  await store.activateHost('h2');
  return store;
}

describe('rookery host', () => {
  it('lists hosts with their state, lease, epoch and tenants, as a table or JSON', async () => {
    expect((await rookery('host', 'list')).stdout).toMatch(/^No host has registered/);
    const store = await fleet();
    await store.close();
    const table = await rookery('host', 'list');
    expect(table.code).toBe(0);
    expect(table.stdout).toMatch(/^HOST\s+STATE\s+LEASE\s+EPOCH\s+TENANTS\s+ADDRESS\s+LEASE EXPIRES$/m);
    expect(table.stdout).toMatch(/^h1\s+active\s+live\s+1\s+2\/10\s+https:\/\/h1\.internal:8443\s+\d{4}-/m);
    expect(table.stdout).toMatch(/^h2\s+active\s+live\s+1\s+0\/5\s+/m);
    const json = await rookery('--json', 'host', 'list');
    expect(json.json()).toMatchObject({
      hosts: [
        { hostId: 'h1', state: 'active', live: true, placements: 2, capacity: 10 },
        { hostId: 'h2', placements: 0 },
      ],
    });
  });

  it('drain marks the host draining (no new tenants there), activate takes it back, retire only once it is empty', async () => {
    const store = await fleet();
    try {
      const drained = await rookery('host', 'drain', 'h1');
      expect(drained.code).toBe(0);
      expect(drained.stdout).toMatch(
        /^Host h1 is draining: its 2 tenants are moved to other hosts one by one/,
      );
      expect(await store.getHost('h1')).toMatchObject({ state: 'draining' });
      await store.createTenant({ id: 'cold', name: 'cold' });
      expect(await store.placeTenant('cold')).toMatchObject({ hostId: 'h2' });

      const notEmpty = await rookery('host', 'retire', 'h1');
      expect(notEmpty.code).toBe(1);
      expect(notEmpty.stderr).toMatch(/^HostNotEmpty: Host "h1" still has 2 tenant/);

      const active = await rookery('--json', 'host', 'activate', 'h1');
      expect(active.json()).toMatchObject({ hostId: 'h1', state: 'active' });

      await rookery('host', 'drain', 'h1');
      for (const tenant of ['acme', 'bolt']) {
        await store.movePlacement(tenant, (await store.getPlacement(tenant))!.epoch, 'h2');
      }
      const retired = await rookery('host', 'retire', 'h1');
      expect(retired.code).toBe(0);
      expect(retired.stdout).toMatch(/^Host h1 is retired/);
    } finally {
      await store.close();
    }
  });

  it('drain --wait shows the moves as the host makes them and ends once none is left', async () => {
    const store = await fleet();
    try {
      let stdout = '';
      const io = {
        stdout: { write: (text: string) => (stdout += text) },
        stderr: { write: (text: string) => (stdout += text) },
        env: { PATH: process.env.PATH },
      };
      const waiting = runCli(['--data', data.dir, 'host', 'drain', 'h1', '--wait', '600'], io);
      const seen = async (text: string) => {
        while (!stdout.includes(text)) await new Promise((resolve) => setTimeout(resolve, 20));
      };
      await seen('2 tenants to move');
      // The draining host moves them (here: the test, through the same store).
      await store.movePlacement('acme', (await store.getPlacement('acme'))!.epoch, 'h2');
      await seen('moved 1/2');
      await store.movePlacement('bolt', (await store.getPlacement('bolt'))!.epoch, 'h2');
      expect(await waiting).toBe(0);
      expect(stdout).toMatch(/moved 2\/2/);
      expect(stdout).toMatch(/Host h1 is drained: every tenant moved/);
    } finally {
      await store.close();
    }
  });

  it('drain --wait gives up at its limit naming what is left; the drain goes on', async () => {
    const store = await fleet();
    await store.close();
    const waited = await rookery('host', 'drain', 'h1', '--wait', '1');
    expect(waited.code).toBe(1);
    expect(waited.stderr).toMatch(/^HostNotEmpty: Host h1 still has 2 of its 2 tenants after 1 s/);
    const json = await rookery('--json', 'host', 'drain', 'h1', '--wait', '1');
    expect(JSON.parse(json.stderr)).toMatchObject({ error: { code: 'HostNotEmpty' } });
  });

  it('refuses an unknown host and a malformed host id with clear errors', async () => {
    for (const command of ['drain', 'activate', 'retire']) {
      const unknown = await rookery('host', command, 'nope');
      expect(unknown.code).toBe(1);
      expect(unknown.stderr).toMatch(/^HostNotFound: There is no host "nope"/);
    }
    const malformed = await rookery('host', 'drain', 'not a host!');
    expect(malformed.code).toBe(1);
    expect(malformed.stderr).toMatch(/^InvalidRequest: /);
    const badWait = await rookery('host', 'drain', 'h1', '--wait', 'soon');
    expect(badWait.stderr).toMatch(/^InvalidRequest: --wait/);
  });
});
