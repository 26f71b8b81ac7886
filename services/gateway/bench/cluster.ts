// pnpm bench:cluster — the fleet (issue [8]) against one machine, and failover, on a real fleet: PostgreSQL
// from the test kit, three host processes in fleet mode with the production lease settings (TTL 10 s, reaper
// grace 2 s, sweep 1 s, one spare process each), one shared mirror in sync mode, gateways as processes.
//
// - relay_get_per_s / local_get_per_s: GETs of varied documents (1,000 ids) of one tenant, 32 concurrent
//   keep-alive connections, through a fleet gateway (placement → the owner's relay port over mutual TLS,
//   the connection handed to the tenant's process, which ends TLS — docs/scale-out.md "The hand-off";
//   a host started with ROOKERY_RELAY_MODE=pipe pipes it to the tenant's socket instead) and through a one-machine gateway on the owner's Unix sockets, alternating round by
//   round; relay_of_local is the median of the rounds' ratios;
// - relay_overhead_p50_ms: p50 of single sequential GETs through the relay minus through the local gateway,
//   alternating the two;
// - failover_*: `--kills` times (20), the host owning a tenant is SIGKILLed with its tenant processes (the
//   machine going away) and the time until the tenant's first successful answer through the gateway from
//   another host is taken, for the 1,000-document tenant and the `--mb` (100) MB one in turn (a kill takes
//   the other down too when both live on that host); then the host is started again, empty of tenants;
// - acknowledged_writes_lost: a sync-mode writer per tenant runs through every kill (retrying what is
//   refused); afterwards every write that got 201 is read back through the gateway.
//
// Stages go to stderr; the last stdout line is one JSON object.
import { execFileSync } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import fs from 'node:fs';
import os from 'node:os';
import { setTimeout as sleep } from 'node:timers/promises';
import { HostTenantListSchema, HostTenantStatsSchema } from '@rookery/protocol';
import { startPostgres } from '@rookery/testkit';
import { Pool } from 'undici';
import { FLEET_TOKEN, startFleetStack } from '../src/test-fixtures/fleet-stack.js';
import type { Client } from '../src/test-fixtures/gateway-clients.js';
import { forkGateway } from '../src/test-fixtures/gateway-process.js';
import { arg, CONCURRENCY, get, log, machine, throughput } from './load.js';

const KILLS = arg('kills', 20);
const REQUESTS = arg('requests', 32_000);
/** Rounds of the relay-vs-local comparison: on a shared machine single rounds swing by ±30%. */
const ROUNDS = 8;
const SEQUENTIAL = arg('sequential', 2_000);
const MEGABYTES = arg('mb', 100);
const SMALL_DOCUMENTS = 1_000;
/** The production default (services/host/src/config.ts; docs/scale-out.md "Why TTL 10 s"). */
const LEASE_TTL_MS = 10_000;

/** Nearest-rank percentile. */
function percentile(values: number[], p: number): number {
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}
const median = (xs: number[]) => percentile(xs, 50);
const round = (x: number, digits = 0) => Math.round(x * 10 ** digits) / 10 ** digits;
const CLOCK_TICKS_PER_S = Number(execFileSync('getconf', ['CLK_TCK']).toString().trim());
/** CPU time (user + system) of each process so far, in ms, from /proc/<pid>/stat (Linux); 0 for none. */
function cpuMsOf<K extends string>(pids: Record<K, number | null>): Record<K, number> {
  const ms = (pid: number | null) => {
    if (pid === null) return 0;
    const stat = fs.readFileSync(`/proc/${pid}/stat`, 'utf8');
    // Fields after the command's closing parenthesis start at the state (field 3): utime and stime are 14 and 15.
    const fields = stat.slice(stat.lastIndexOf(')') + 2).split(' ');
    return ((Number(fields[11]) + Number(fields[12])) * 1000) / CLOCK_TICKS_PER_S;
  };
  return Object.fromEntries(Object.entries<number | null>(pids).map(([k, pid]) => [k, ms(pid)])) as Record<
    K,
    number
  >;
}

const postgres = await startPostgres();
const database = await postgres.freshDatabase('cluster');
const stack = await startFleetStack({
  hosts: 3,
  controlDatabaseUrl: database.url,
  leaseTtlMs: LEASE_TTL_MS,
  hostEnv: { ROOKERY_MIRROR_MODE: 'sync', ROOKERY_SPARE_PROCESSES: '1' },
});
const pools: Pool[] = [];
let closing: Promise<void> | null = null;
const close = () =>
  (closing ??= (async () => {
    for (const pool of pools) await pool.close().catch(() => {});
    await stack.close();
    await database.drop();
    await postgres.stop();
  })());
// Interrupted: the hosts, their tenants and PostgreSQL go with the benchmark, not left running.
for (const signal of ['SIGINT', 'SIGTERM'] as const)
  process.once(signal, () => void close().finally(() => process.exit(130)));
try {
  const quota = { requestsPerSecond: 1e9, storageBytes: 2 ** 40 };
  const small = await stack.tenantAdmin({ id: 'small', name: 'Small', quota }, 'small-admin');
  const large = await stack.tenantAdmin({ id: 'large', name: 'Large', quota }, 'large-admin');

  /** Inserts `packages/<from…>` in one bulk insert; answers the NDJSON's size (the documents' JSON). */
  const bulkInsert = async (client: Client, from: number, count: number, bodyBytes: number) => {
    const lines: string[] = [];
    for (let i = from; i < from + count; i++) {
      // Random text: the 100 MB are 100 MB on disk, not compressed away.
      const text = randomBytes(bodyBytes).toString('base64');
      lines.push(
        JSON.stringify({
          Id: `packages/${i}`,
          Document: { N: i, Title: `package ${i}`, Text: text, '@metadata': { '@collection': 'Packages' } },
        }),
      );
    }
    const inserted = await client.call('POST', '/databases/db/bulk_insert', `${lines.join('\n')}\n`, {
      'content-type': 'application/x-ndjson',
    });
    if (!inserted.text.includes('"Completed"'))
      throw new Error(`bulk insert: ${inserted.status} ${inserted.text.slice(-300)}`);
    return lines.reduce((bytes, line) => bytes + Buffer.byteLength(line) + 1, 0);
  };
  const ownerOf = async (tenantId: string) => {
    const placement = await stack.store.getPlacement(tenantId);
    const owner = stack.hosts.find(
      (h) =>
        h.relayAddress === placement?.address && h.process.exitCode === null && h.process.signalCode === null,
    );
    if (!owner)
      throw new Error(`${tenantId} is placed on ${placement?.hostId}, not a live host of this fleet`);
    return { owner, hostId: placement!.hostId };
  };

  log('loading the tenants');
  for (const client of [small, large]) {
    const created = await client.call('PUT', '/admin/databases', { Name: 'db' });
    if (created.status !== 201) throw new Error(`creating a database: ${created.status} ${created.text}`);
  }
  await bulkInsert(small, 0, SMALL_DOCUMENTS, 300);
  // The large tenant holds MEGABYTES of documents (their JSON, random text that does not compress), not
  // counting indexes and metadata; its files on disk are reported beside.
  let largeDocuments = 0;
  let largeBytes = 0;
  while (largeBytes < MEGABYTES * 1024 * 1024) {
    largeBytes += await bulkInsert(large, largeDocuments, 10_000, 1_500);
    largeDocuments += 10_000;
    log(`large: ${largeDocuments} documents, ${round(largeBytes / 1024 / 1024, 1)} MB of JSON`);
  }
  const { owner: largeOwner } = await ownerOf('large');
  await largeOwner.call('POST', '/tenants/large/stop'); // checkpointed: its files, not its WAL, are counted
  const largeOnDisk = HostTenantStatsSchema.parse(
    (await largeOwner.call('GET', '/tenants/large/stats')).body,
  ).bytesOnDisk;
  log(`large: ${round(largeOnDisk / 1024 / 1024, 1)} MB on disk`);

  // ── relay against local ──
  const { owner: smallOwner } = await ownerOf('small');
  // Refused requests during a failover are the gateway's warnings; the figures are the benchmark's output.
  const relayGateway = await stack.forkGateway({ ROOKERY_LOG_LEVEL: 'error' });
  const localGateway = await forkGateway(
    { dir: stack.dir, hostUrl: smallOwner.address },
    {
      ROOKERY_INTERNAL_TOKEN: FLEET_TOKEN,
      ROOKERY_CONTROL_DATABASE_URL: database.url,
      ROOKERY_LOG_LEVEL: 'error',
    },
  );
  const poolTo = (url: string, client: Client, connections = CONCURRENCY) => {
    const pool = new Pool(url, {
      connections,
      connect: { ca: stack.ca.certPem, cert: client.certPem, key: client.keyPem, servername: 'localhost' },
    });
    pools.push(pool);
    return pool;
  };
  const targets = { local: poolTo(localGateway.url, small), relay: poolTo(relayGateway.url, small) };
  type Target = keyof typeof targets;
  const names = Object.keys(targets) as Target[];
  /** A varied id per GET, so that no path serves one hot document. */
  const smallDocument = () => `/databases/db/docs?id=packages/${Math.floor(Math.random() * SMALL_DOCUMENTS)}`;
  // Where the CPU goes on each path: each process's CPU time over the rounds, per GET (a profile without a
  // profiler: it says which process the relay's extra cost lands in).
  const smallTenant = HostTenantListSchema.parse(
    (await smallOwner.call('GET', '/tenants')).body,
  ).tenants.find((t) => t.tenantId === 'small');
  const processes = {
    gateway: { local: localGateway.child.pid!, relay: relayGateway.child.pid! },
    host: smallOwner.process.pid!,
    tenant: smallTenant?.pid ?? null,
  };
  const cpu = Object.fromEntries(
    names.map((name) => [name, { gateway: 0, host: 0, tenant: 0, client: 0, gets: 0 }]),
  ) as Record<Target, { gateway: number; host: number; tenant: number; client: number; gets: number }>;
  const measured = async (name: Target, n: number) => {
    const pids = { gateway: processes.gateway[name], host: processes.host, tenant: processes.tenant };
    const before = { ...cpuMsOf(pids), client: process.cpuUsage() };
    const rate = await throughput(targets[name], n, smallDocument);
    const after = cpuMsOf(pids);
    const client = process.cpuUsage(before.client);
    cpu[name].gateway += after.gateway - before.gateway;
    cpu[name].host += after.host - before.host;
    cpu[name].tenant += after.tenant - before.tenant;
    cpu[name].client += (client.user + client.system) / 1000;
    cpu[name].gets += n;
    return rate;
  };
  for (const name of names) await throughput(targets[name], 2_000, smallDocument);
  const rates: Record<Target, number[]> = { local: [], relay: [] };
  for (let r = 0; r < ROUNDS; r++) {
    // Which goes first alternates too: a machine slowing down within a round hits both alike over the run.
    for (const name of r % 2 === 0 ? names : [...names].reverse())
      rates[name].push(await measured(name, REQUESTS / ROUNDS));
    log(`round ${r + 1}: local ${rates.local.at(-1)}/s, relay ${rates.relay.at(-1)}/s`);
  }
  const times: Record<Target, number[]> = { local: [], relay: [] };
  for (let i = 0; i < SEQUENTIAL; i++) {
    for (const name of names) {
      const t0 = performance.now();
      await get(targets[name], smallDocument());
      times[name].push(performance.now() - t0);
    }
  }
  const cpuPerGet = Object.fromEntries(
    names.map((name) => {
      const { gets, ...ms } = cpu[name];
      return [name, Object.fromEntries(Object.entries(ms).map(([k, v]) => [k, round((v * 1000) / gets, 1)]))];
    }),
  );
  log(`CPU µs per GET: ${JSON.stringify(cpuPerGet)}`);
  const relayOfLocal = round(median(rates.relay.map((perSecond, r) => perSecond / rates.local[r]!)), 2);
  const overhead = median(times.relay) - median(times.local);
  log(
    `relay of local ${relayOfLocal}; p50 local ${median(times.local).toFixed(3)} ms, relay ${median(times.relay).toFixed(3)} ms`,
  );
  await localGateway.stop();

  // ── failover ──
  const gatewayFor: Record<string, Pool> = {
    small: poolTo(relayGateway.url, small, 4),
    large: poolTo(relayGateway.url, large, 4),
  };
  const acknowledged: Record<string, string[]> = { small: [], large: [] };
  let writing = true;
  const writers = ['small', 'large'].map(async (tenantId) => {
    for (let n = 0; writing; n++) {
      const id = `writes/${n}`;
      const status = await gatewayFor[tenantId]!.request({
        method: 'PUT',
        path: `/databases/db/docs?id=${id}`,
        headers: { 'content-type': 'application/json' },
        body: JSON.stringify({ N: n }),
      })
        .then(async (r) => {
          await r.body.dump();
          return r.statusCode;
        })
        .catch(() => 0);
      if (status === 201) acknowledged[tenantId]!.push(id);
      else await sleep(100); // refused (503 while the tenant has no live owner) or cut: try the next id
    }
  });
  /** Asks for one document until it answers 200; resolves with the answer's time. */
  const firstAnswer = async (tenantId: string) => {
    for (;;) {
      const ok = await gatewayFor[tenantId]!.request({
        method: 'GET',
        path: '/databases/db/docs?id=packages/1',
      })
        .then(async (r) => {
          await r.body.dump();
          return r.statusCode === 200;
        })
        .catch(() => false);
      if (ok) return performance.now();
      await sleep(50);
    }
  };
  const failovers: Record<string, number[]> = { small: [], large: [] };
  for (let kill = 0; kill < KILLS; kill++) {
    const target = kill % 2 === 0 ? 'small' : 'large';
    // Both tenants answering (woken wherever they are placed) before the kill.
    await Promise.all(['small', 'large'].map(firstAnswer));
    const { owner, hostId } = await ownerOf(target);
    const victims: string[] = [];
    for (const tenantId of ['small', 'large'])
      if ((await stack.store.getPlacement(tenantId))?.hostId === hostId) victims.push(tenantId);
    const pids = HostTenantListSchema.parse((await owner.call('GET', '/tenants')).body)
      .tenants.map((t) => t.pid)
      .filter((pid): pid is number => pid !== null);
    const exited = new Promise((resolve) => owner.process.once('exit', resolve));
    const killedAt = performance.now();
    owner.process.kill('SIGKILL');
    for (const pid of pids) process.kill(pid, 'SIGKILL');
    await exited;
    const answered = await Promise.all(victims.map(firstAnswer));
    for (const [i, tenantId] of victims.entries()) {
      const now = await stack.store.getPlacement(tenantId);
      if (now?.hostId === hostId) throw new Error(`${tenantId} answered from the killed host ${hostId}`);
      failovers[tenantId]!.push(answered[i]! - killedAt);
    }
    log(
      `kill ${kill + 1}/${KILLS}: ${hostId} (${victims.join(', ')}): ${victims.map((t, i) => `${t} ${round(answered[i]! - killedAt)} ms`).join(', ')}`,
    );
    await stack.startHost(hostId); // empty: its tenants were moved; it reclaims nothing
  }
  writing = false;
  await Promise.all(writers);

  log('reading back every acknowledged write');
  let lost = 0;
  let checked = 0;
  for (const tenantId of ['small', 'large']) {
    const ids = acknowledged[tenantId]!;
    let next = 0;
    await Promise.all(
      Array.from({ length: 4 }, async () => {
        while (next < ids.length) {
          const id = ids[next++]!;
          const r = await gatewayFor[tenantId]!.request({
            method: 'GET',
            path: `/databases/db/docs?id=${id}`,
          });
          await r.body.dump();
          if (r.statusCode !== 200) lost += 1;
          checked += 1;
        }
      }),
    );
  }
  await relayGateway.stop();

  const all = [...failovers.small!, ...failovers.large!];
  console.log(
    JSON.stringify({
      machine: { ...machine(), load: os.loadavg().map((l) => round(l, 2)) },
    }),
  );
  console.log(
    JSON.stringify({
      bench: 'cluster',
      relay_get_per_s: median(rates.relay),
      local_get_per_s: median(rates.local),
      relay_of_local: relayOfLocal,
      relay_overhead_p50_ms: round(overhead, 3),
      failover_p50_ms: round(percentile(all, 50)),
      failover_p99_ms: round(percentile(all, 99)),
      failover_1000_docs_p50_ms: round(percentile(failovers.small!, 50)),
      failover_1000_docs_p99_ms: round(percentile(failovers.small!, 99)),
      failover_100mb_p50_ms: round(percentile(failovers.large!, 50)),
      failover_100mb_p99_ms: round(percentile(failovers.large!, 99)),
      failover_samples: { '1000_docs': failovers.small!.length, '100mb': failovers.large!.length },
      kills: KILLS,
      lease_ttl_ms: LEASE_TTL_MS,
      failover_target_ms: 2 * LEASE_TTL_MS + 1_000,
      large_tenant_documents: largeDocuments,
      large_tenant_json_mb: round(largeBytes / 1024 / 1024, 1),
      large_tenant_on_disk_mb: round(largeOnDisk / 1024 / 1024, 1),
      acknowledged_writes: checked,
      acknowledged_writes_lost: lost,
      cpu_us_per_get: cpuPerGet,
    }),
  );
} finally {
  await close();
}
