// Chaos test 3 of issue [8]: a host cut from PostgreSQL by a real network partition. Host cut1 runs in a
// network namespace of its own and reaches PostgreSQL only over a veth pair; host cut2 runs here. A sync-mode
// writer writes to cut1's tenant (over its Unix socket, which no partition touches) while the pair is taken
// down. cut1 cannot renew its lease, and its tenant must stop acknowledging writes (503 LeaseExpired) by
// itself BEFORE cut2's reaper re-places the tenant — else two owners could acknowledge writes at once. Both
// moments come from the processes' own records (the writer's first refusal, cut1's "lease lapsed" log line,
// cut2's "re-placed" log line); the test asserts their order, not how long anything took.
import { type ControlStore, openPostgresControlStore } from '@rookery/control-store';
import { makeTempDir, type PostgresServer, startPostgres } from '@rookery/testkit';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type FailoverFleet, failoverFleet, missing } from './test-fixtures/failover.js';
import { type FleetHost, until } from './test-fixtures/fleet-host.js';
import {
  forwardTcp,
  type NetworkNamespace,
  openNetworkNamespace,
  type TcpForward,
} from './test-fixtures/netns.js';

// The reaper's default grace (2 s): what orders the two moments in production is what this test checks.
const TIMING = {
  ROOKERY_LEASE_TTL_MS: '3000',
  ROOKERY_REAPER_GRACE_MS: '2000',
  ROOKERY_REAPER_INTERVAL_MS: '200',
  ROOKERY_LOG_LEVEL: 'info',
};

interface LogLine {
  time: number;
  msg: string;
  [key: string]: unknown;
}

/** The host's pino lines as they come (its stdout), parsed. */
function logOf(host: FleetHost): LogLine[] {
  const lines: LogLine[] = [];
  let partial = '';
  host.process.stdout?.on('data', (chunk: Buffer) => {
    const text = partial + chunk.toString();
    const complete = text.split('\n');
    partial = complete.pop() ?? '';
    for (const line of complete) {
      try {
        lines.push(JSON.parse(line) as LogLine);
      } catch {
        // not a log line
      }
    }
  });
  return lines;
}

describe('chaos 3: a host cut from PostgreSQL (network namespace)', () => {
  const tmp = makeTempDir('rookery-partition-');
  let ns: NetworkNamespace;
  let postgres: PostgresServer;
  let forward: TcpForward;
  let database: { url: string; drop(): Promise<void> };
  let store: ControlStore;
  let fleet: FailoverFleet;
  let cut1: FleetHost | undefined;
  let cut1Tenant: number | null = null;

  beforeAll(async () => {
    // First, so a machine without namespaces fails here with the reason, before anything else starts.
    ns = openNetworkNamespace('cut');
    postgres = await startPostgres();
    database = await postgres.freshDatabase('partition');
    forward = await forwardTcp(ns.outerAddress, postgres.port);
    store = await openPostgresControlStore(database.url);
    await store.createTenant({ id: 'acme', name: 'acme' });
    fleet = failoverFleet(tmp.dir, { controlEnv: { ROOKERY_CONTROL_DATABASE_URL: database.url } });
  }, 120_000);

  afterAll(async () => {
    // cut1 cannot reach the store to shut down in order: it and its tenant go as a machine that is switched off.
    if (cut1Tenant !== null) process.kill(cut1Tenant, 'SIGKILL');
    if (cut1 && cut1.process.exitCode === null && cut1.process.signalCode === null) {
      const exited = new Promise((resolve) => cut1?.process.once('exit', resolve));
      cut1.process.kill('SIGKILL');
      await exited;
    }
    await fleet?.close();
    await forward?.close();
    await store?.close();
    await database?.drop();
    await postgres?.stop();
    ns?.remove();
    tmp.cleanup();
  }, 120_000);

  it('stops acknowledging writes on its own before its tenants are re-placed, and loses no acknowledged write', async () => {
    const viaVeth = database.url.replace(`127.0.0.1:${postgres.port}`, `${ns.outerAddress}:${forward.port}`);
    cut1 = await fleet.start(
      'cut1',
      { ...TIMING, ROOKERY_CONTROL_DATABASE_URL: viaVeth, ROOKERY_HOST_ADDRESS: ns.innerAddress },
      { wrap: ns.wrap },
    );
    const cut1Log = logOf(cut1);
    expect(await store.placeTenant('acme')).toMatchObject({ hostId: 'cut1', epoch: 1 });
    const cut2 = await fleet.start('cut2', TIMING);
    const cut2Log = logOf(cut2);

    const tenant = await fleet.open(cut1, 'acme');
    cut1Tenant = (await fleet.tenantOn(cut1, 'acme'))!.pid;
    expect((await tenant.call('PUT', '/admin/databases', { Name: 'Shop' })).status).toBe(201);

    // The writer runs until the tenant is re-placed, recording each answer and when it came.
    const answers: { id: string; status: number; code: unknown; at: number }[] = [];
    let moved = false;
    const writer = (async () => {
      for (let n = 0; !moved; n++) {
        const id = `w/${n}`;
        const reply = await tenant.call('PUT', `/databases/shop/docs?id=${id}`, { N: n }).catch(() => null);
        answers.push({ id, status: reply?.status ?? 0, code: reply?.json.code, at: Date.now() });
        if (reply?.status !== 201) await new Promise((resolve) => setTimeout(resolve, 20));
      }
    })();
    await until(
      'writes acknowledged before the cut',
      async () => answers.filter((a) => a.status === 201).length,
      (n) => n >= 20,
    );
    ns.cut();

    const placement = await until(
      'acme re-placed on cut2',
      () => store.getPlacement('acme'),
      (p) => p?.hostId === 'cut2',
      120_000,
    );
    moved = true;
    await writer;
    expect(placement?.epoch).toBe(2);

    // Moment 1: the first refusal, and cut1's own record of its lapse.
    const firstRefusal = answers.findIndex((a) => a.status !== 201);
    expect(firstRefusal).toBeGreaterThan(0);
    expect(answers[firstRefusal]).toMatchObject({ status: 503, code: 'LeaseExpired' });
    // Once refused, nothing more is acknowledged there: the lease cannot come back across the cut.
    expect(answers.slice(firstRefusal).filter((a) => a.status === 201)).toEqual([]);
    const lapse = cut1Log.find((l) => l.msg.startsWith('the host lease lapsed'));
    expect(lapse, 'cut1 logs the lapse of its lease').toBeDefined();
    // Moment 2: cut2's reaper moving the tenant.
    const move = cut2Log.find((l) => l.msg.startsWith('re-placed a tenant') && l.tenant === 'acme');
    expect(move, 'cut2 logs the move').toMatchObject({ from: 'cut1', to: 'cut2', epoch: 2 });
    expect(answers[firstRefusal]!.at).toBeLessThan(move!.time);
    expect(lapse!.time).toBeLessThan(move!.time);

    // The new owner restores from the mirror: every write cut1 acknowledged is there.
    const acknowledged = answers.filter((a) => a.status === 201).map((a) => a.id);
    const successor = await fleet.open(cut2, 'acme');
    expect(await missing(successor, acknowledged)).toEqual([]);
    expect((await successor.call('PUT', '/databases/shop/docs?id=after/1', { N: 1 })).status).toBe(201);
  }, 240_000);
});
