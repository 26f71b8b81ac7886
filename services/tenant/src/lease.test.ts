// The host's lease deadline in a real tenant server: writes stop being acknowledged once it passed,
// reads go on, a renewal brings writes back; a sync-mode write whose deadline passes while the
// mirror holds its fsync is not acknowledged. The mirror is held for real, by a FIFO where its next
// segment file goes: opening a FIFO for writing blocks until someone opens it for reading.
import { execFileSync } from 'node:child_process';
import fs from 'node:fs';
import path from 'node:path';
import { Writable } from 'node:stream';
import { monotonicMs } from '@rookery/protocol';
import { makeTempDir } from '@rookery/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadConfig, mirrorOf } from './config.js';
import { LeaseDeadline } from './lease.js';
import { buildTenantServer, type TenantServer } from './server.js';
import { httpClient } from './test-fixtures/http-client.js';

let tmp: ReturnType<typeof makeTempDir>;
let server: TenantServer | null = null;
let base = '';
const call = httpClient(() => base);

beforeEach(() => {
  tmp = makeTempDir('rookery-tenant-lease-');
});
afterEach(async () => {
  await server?.close();
  server = null;
  tmp.cleanup();
});

async function start(mirrorMode: 'sync' | 'async', leaseRemainingMs = 60_000): Promise<TenantServer> {
  server = buildTenantServer(
    loadConfig(
      {},
      {
        dataDir: path.join(tmp.dir, 'tenants', 'acme'),
        logLevel: 'silent',
        mirrorDir: path.join(tmp.dir, 'mirror'),
        mirrorMode,
        placementEpoch: 3,
        leaseRemainingMs,
      },
    ),
  );
  base = await server.app.listen({ host: '127.0.0.1', port: 0 });
  expect((await call('PUT', '/admin/databases', { Name: 'shop' })).status).toBe(201);
  return server;
}

const put = (id: string) =>
  call('POST', '/databases/shop/bulk_docs', { Commands: [{ Type: 'PUT', Id: id, Document: { Id: id } }] });
const mirrorStats = async () =>
  (await call('GET', '/databases/shop/stats')).json.Mirror as {
    Txid: number;
    MirroredTxid: number;
    Generation: string;
  };

describe('configuration', () => {
  it('reads the placement epoch and the lease from the environment, and refuses bad values by name', () => {
    const config = loadConfig({
      ROOKERY_PLACEMENT_EPOCH: '7',
      ROOKERY_LEASE_REMAINING_MS: '9000',
      ROOKERY_LEASE_MEASURED_AT_MS: '123.5',
    });
    expect(config).toMatchObject({ placementEpoch: 7, leaseRemainingMs: 9000, leaseMeasuredAtMs: 123.5 });
    expect(mirrorOf({ ...config, mirrorDir: '/m', tenantId: 't' })?.tuning).toMatchObject({ epoch: 7 });
    // One machine: epoch 0, no lease.
    expect(loadConfig({}).placementEpoch).toBe(0);
    expect(loadConfig({}).leaseRemainingMs).toBeUndefined();
    expect(() => loadConfig({ ROOKERY_PLACEMENT_EPOCH: '-1' })).toThrow(/ROOKERY_PLACEMENT_EPOCH/);
    expect(() => loadConfig({ ROOKERY_LEASE_REMAINING_MS: 'soon' })).toThrow(/ROOKERY_LEASE_REMAINING_MS/);
  });

  it('takes only well-formed lease messages from the host', () => {
    const lease = new LeaseDeadline(undefined);
    expect(lease.refusal()).toBeNull(); // no lease: never refuses
    expect(lease.receive({ type: 'activity' })).toBe(false);
    expect(lease.receive({ type: 'lease', remainingMs: '5' })).toBe(false);
    expect(lease.receive({ type: 'lease', remainingMs: -1 })).toBe(false);
    expect(lease.receive({ type: 'lease', remainingMs: 5, extra: 1 })).toBe(false);
    expect(lease.refusal()).toBeNull();
    expect(lease.receive({ type: 'lease', remainingMs: 0, measuredAtMs: monotonicMs() })).toBe(true);
    expect(lease.refusal()).toMatchObject({ code: 'LeaseExpired', status: 503 });
    expect(lease.receive({ type: 'lease', remainingMs: 5 })).toBe(false); // unstamped
  });

  it('counts the lease from when the host measured it, so a late message does not stretch it', () => {
    let now = 10_000;
    const lease = new LeaseDeadline(undefined, () => now);
    // Measured at 10 000 with 1 000 left, delivered 600 ms later: 400 left, as on the host.
    now = 10_600;
    expect(lease.receive({ type: 'lease', remainingMs: 1_000, measuredAtMs: 10_000 })).toBe(true);
    expect(lease.remainingMs()).toBe(400);
    // Delivered after the host's deadline: refused at once.
    now = 12_000;
    lease.receive({ type: 'lease', remainingMs: 1_000, measuredAtMs: 10_500 });
    expect(lease.refusal()).toMatchObject({ code: 'LeaseExpired' });
    // A stamp from the future (not this machine's clock) counts from arrival, never later.
    lease.receive({ type: 'lease', remainingMs: 1_000, measuredAtMs: 99_000 });
    expect(lease.remainingMs()).toBe(1_000);
  });

  it('counts the lease given at launch from when the host measured it', () => {
    let now = 5_000;
    const lease = new LeaseDeadline({ remainingMs: 2_000, measuredAtMs: 4_000 }, () => now);
    expect(lease.remainingMs()).toBe(1_000);
    now = 6_000;
    expect(lease.refusal()).toMatchObject({ code: 'LeaseExpired' });
  });
});

describe('a tenant whose host lost its lease', () => {
  it('refuses writes with 503 LeaseExpired, still answers reads, and writes again once renewed', async () => {
    const tenant = await start('sync');
    expect((await put('orders/1')).status).toBe(201);

    tenant.lease.receive({ type: 'lease', remainingMs: 0, measuredAtMs: monotonicMs() });
    const refused = await put('orders/2');
    expect(refused.status).toBe(503);
    expect(refused.json.code).toBe('LeaseExpired');
    expect(refused.json.detail).toMatch(/lease.*expired.*Retry/s);
    // Reads answer what this host holds (see the README: reads are not fenced).
    expect((await call('GET', '/databases/shop/docs?id=orders/1')).status).toBe(200);
    expect((await call('GET', '/databases/shop/docs?id=orders/2')).status).toBe(404);

    tenant.lease.receive({ type: 'lease', remainingMs: 60_000, measuredAtMs: monotonicMs() });
    expect((await put('orders/3')).status).toBe(201);
  });

  it('in async mode, refuses the write before it commits', async () => {
    const tenant = await start('async');
    expect((await put('orders/1')).status).toBe(201);
    const before = (await mirrorStats()).Txid;
    tenant.lease.receive({ type: 'lease', remainingMs: 0, measuredAtMs: monotonicMs() });
    expect((await put('orders/2')).json.code).toBe('LeaseExpired');
    expect((await mirrorStats()).Txid).toBe(before);
  });

  it('a lease that starts out expired (ROOKERY_LEASE_REMAINING_MS=0) refuses from the first write', async () => {
    server = buildTenantServer(
      loadConfig({}, { dataDir: path.join(tmp.dir, 'd'), logLevel: 'silent', leaseRemainingMs: 0 }),
    );
    base = await server.app.listen({ host: '127.0.0.1', port: 0 });
    // Creating a database is not a transaction of the merger; its first document is.
    expect((await call('PUT', '/admin/databases', { Name: 'shop' })).status).toBe(201);
    expect((await put('orders/1')).json.code).toBe('LeaseExpired');
  });

  it('does not acknowledge a sync-mode write whose deadline passed while the mirror held its fsync', async () => {
    const tenant = await start('sync');
    expect((await put('orders/1')).status).toBe(201);
    // After a snapshot the next transaction starts a new segment file, named by its number: put a
    // FIFO there, and the mirror's open of it blocks until the test opens it for reading.
    await tenant.catalog.get('shop').mirror!.snapshotNow();
    const { Txid: txid, Generation: generation } = await mirrorStats();
    const held = path.join(
      tmp.dir,
      'mirror',
      'acme',
      'shop',
      'generations',
      generation,
      'segments',
      `${String(txid + 1).padStart(16, '0')}.seg`,
    );
    execFileSync('mkfifo', [held]);

    const answer = put('orders/2');
    // Committed on this machine; its acknowledgment waits for the mirror.
    while ((await mirrorStats()).Txid !== txid + 1) await new Promise((resolve) => setImmediate(resolve));
    tenant.lease.receive({ type: 'lease', remainingMs: 0, measuredAtMs: monotonicMs() });

    // Let the mirror go: a reader unblocks the open (the pipe cannot be fsynced, so the shipper
    // retries into a real file once the FIFO is gone).
    const reader = fs.openSync(held, fs.constants.O_RDONLY | fs.constants.O_NONBLOCK);
    fs.rmSync(held);
    try {
      const reply = await answer;
      expect(reply.status).toBe(503);
      expect(reply.json.code).toBe('LeaseExpired');
    } finally {
      fs.closeSync(reader);
    }
    // The mirror did confirm it: the refusal came after the fsync, before the acknowledgment.
    expect((await mirrorStats()).MirroredTxid).toBeGreaterThanOrEqual(txid + 1);
  });
});

describe('what a refused write logs', () => {
  it('LeaseExpired and other expected refusals are warnings with their code, never an "unhandled error"', async () => {
    const lines: { level: number; msg: string; code?: string }[] = [];
    const logs = new Writable({
      write(chunk: Buffer, _encoding, done) {
        for (const line of chunk.toString('utf8').split('\n').filter(Boolean)) lines.push(JSON.parse(line));
        done();
      },
    });
    server = buildTenantServer(
      loadConfig({}, { dataDir: path.join(tmp.dir, 'd'), logLevel: 'info', leaseRemainingMs: 0 }),
      { logStream: logs },
    );
    base = await server.app.listen({ host: '127.0.0.1', port: 0 });
    expect((await call('PUT', '/admin/databases', { Name: 'shop' })).status).toBe(201);
    expect((await put('orders/1')).json.code).toBe('LeaseExpired');
    expect((await call('PUT', '/admin/databases', { Name: '../x' })).status).toBe(400);
    const refusal = lines.find((l) => l.code === 'LeaseExpired');
    expect(refusal).toMatchObject({ level: 40 }); // warn
    expect(lines.find((l) => l.code === 'InvalidRequest')).toMatchObject({ level: 30 }); // info
    expect(lines.filter((l) => l.level >= 50)).toEqual([]);
  });
});
