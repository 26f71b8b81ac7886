import type { Principal } from '@rookery/control-store';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ControlApiHarness, startControlApi } from '../test-fixtures/control-api.js';

let h: ControlApiHarness;
let operator: Principal;
let adminA: Principal;
let adminB: Principal;

beforeEach(async () => {
  h = await startControlApi();
  await h.store.createTenant({ id: 'acme', name: 'Acme' });
  await h.store.createTenant({ id: 'globex', name: 'Globex' });
  await h.store.createDatabase('acme', 'Shop');
  await h.store.createDatabase('globex', 'ledger');
  const principal = (tenantId: string | null, name: string, role: Principal['role']) =>
    h.store.createPrincipal({ tenantId, kind: 'program', name, role });
  operator = await principal(null, 'ops', { kind: 'operator' });
  adminA = await principal('acme', 'acme-admin', { kind: 'tenant-admin' });
  adminB = await principal('globex', 'globex-admin', { kind: 'tenant-admin' });
});
afterEach(async () => h.close());

describe('jobs and backups through the control API', () => {
  it('enqueues a backup of one of the caller’s databases and shows it, then its progress', async () => {
    const asked = await h.call(adminA, 'POST', '/control/backups', { database: 'shop' });
    expect(asked.status).toBe(202);
    expect(asked.json).toMatchObject({
      type: 'backup',
      tenantId: 'acme',
      state: 'queued',
      attempts: 0,
      payload: { database: 'Shop', kind: 'incremental', indexes: true, requestedBy: adminA.id },
    });
    expect(asked.json).not.toHaveProperty('dedupeKey');
    // Asking again while it waits gives the same job.
    const again = await h.call(adminA, 'POST', '/control/backups', { database: 'SHOP', kind: 'incremental' });
    expect(again.json.id).toBe(asked.json.id);

    // A worker takes it and reports progress: the API shows what the queue holds.
    const stop = h.jobs.work('backup', async (_job, { progress }) => {
      await progress({ phase: 'snapshot', bytesRead: 10, bytesToRead: 100 });
    });
    let job = (await h.call(adminA, 'GET', `/control/jobs/${asked.json.id}`)).json;
    for (let i = 0; i < 200 && job.state !== 'completed'; i++) {
      await new Promise((resolve) => setTimeout(resolve, 25));
      job = (await h.call(adminA, 'GET', `/control/jobs/${asked.json.id}`)).json;
    }
    await stop();
    expect(job).toMatchObject({
      state: 'completed',
      attempts: 1,
      progress: { phase: 'snapshot', bytesRead: 10 },
    });

    const listed = await h.call(adminA, 'GET', '/control/jobs?type=backup&state=completed');
    expect((listed.json.jobs as { id: string }[]).map((j) => j.id)).toEqual([asked.json.id]);
    const operatorView = await h.call(operator, 'GET', '/control/tenants/acme/jobs');
    expect((operatorView.json.jobs as { id: string }[]).map((j) => j.id)).toEqual([asked.json.id]);
  });

  it("keeps tenants apart: another tenant's jobs and databases read as missing, its scope is forbidden", async () => {
    const theirs = await h.call(adminB, 'POST', '/control/backups', { database: 'ledger', kind: 'full' });
    expect(theirs.status).toBe(202);
    const bJob = String(theirs.json.id);

    const read = await h.call(adminA, 'GET', `/control/jobs/${bJob}`);
    const missing = await h.call(adminA, 'GET', '/control/jobs/00000000-0000-4000-8000-000000000000');
    expect([read.status, read.json.code]).toEqual([404, 'JobNotFound']);
    expect(String(read.json.detail).replace(bJob, '?')).toBe(
      String(missing.json.detail).replace('00000000-0000-4000-8000-000000000000', '?'),
    );
    expect((await h.call(adminA, 'GET', '/control/jobs')).json.jobs).toEqual([]);

    const backupOfTheirs = await h.call(adminA, 'POST', '/control/backups', { database: 'ledger' });
    expect([backupOfTheirs.status, backupOfTheirs.json.code]).toEqual([404, 'DatabaseNotFound']);
    for (const [method, path] of [
      ['GET', '/control/tenants/globex/jobs'],
      ['GET', `/control/tenants/globex/jobs/${bJob}`],
      ['POST', '/control/tenants/globex/backups'],
      ['POST', '/control/tenants/globex/restores'],
    ] as const) {
      const reply = await h.call(
        adminA,
        method,
        path,
        method === 'POST' ? { database: 'ledger' } : undefined,
      );
      expect([path, reply.status, reply.json.code]).toEqual([path, 403, 'Forbidden']);
    }
    expect((await h.jobs.list({ tenantId: 'acme' })).length).toBe(0);
  });

  it('enqueues a restore into a new database only, and checks what it is given', async () => {
    const restore = await h.call(adminA, 'POST', '/control/restores', {
      database: 'shop',
      targetDatabase: 'shop-copy',
      until: '2026-11-01T10:00:00Z',
    });
    expect(restore.status).toBe(202);
    expect(restore.json).toMatchObject({
      type: 'restore',
      payload: { database: 'shop', targetDatabase: 'shop-copy', until: Date.parse('2026-11-01T10:00:00Z') },
    });
    const over = await h.call(adminA, 'POST', '/control/restores', {
      database: 'shop',
      targetDatabase: 'SHOP',
    });
    expect([over.status, over.json.code]).toEqual([409, 'DatabaseAlreadyExists']);
    const badId = await h.call(adminA, 'POST', '/control/restores', {
      database: 'shop',
      targetDatabase: 'x',
      backupId: '../../etc',
    });
    expect([badId.status, badId.json.code]).toEqual([400, 'InvalidRequest']);
    const badKind = await h.call(adminA, 'POST', '/control/backups', { database: 'shop', kind: 'partial' });
    expect([badKind.status, badKind.json.code]).toEqual([400, 'InvalidRequest']);
    const badIndexes = await h.call(adminA, 'POST', '/control/backups', { database: 'shop', indexes: 'no' });
    expect([badIndexes.status, badIndexes.json.code]).toEqual([400, 'InvalidRequest']);
  });

  it('enqueues a backup without index snapshots when asked', async () => {
    const asked = await h.call(adminA, 'POST', '/control/backups', { database: 'shop', indexes: false });
    expect(asked.status).toBe(202);
    expect(asked.json.payload).toMatchObject({ database: 'Shop', indexes: false });
  });
});

describe('deleting a tenant purges its data through a job', () => {
  it('enqueues the purge, cancels the tenant’s own jobs, and keeps the id until the purge completes', async () => {
    const backup = (await h.call(adminA, 'POST', '/control/backups', { database: 'shop' })).json.id as string;
    const othersBackup = (await h.call(adminB, 'POST', '/control/backups', { database: 'ledger' })).json
      .id as string;

    const deleted = await h.call(operator, 'DELETE', '/control/tenants/acme');
    expect(deleted.status).toBe(202);
    expect(deleted.json).toEqual({ deleted: 'acme', purgeJobId: expect.any(String) });
    const purgeJobId = deleted.json.purgeJobId as string;
    const purge = await h.jobs.get(purgeJobId);
    expect(purge).toMatchObject({
      type: 'tenant-purge',
      tenantId: 'acme',
      state: 'queued',
      payload: { requestedBy: operator.id },
    });
    // Its backup would write its data back; another tenant's is left alone.
    expect((await h.jobs.get(backup))?.state).toBe('cancelled');
    expect((await h.jobs.get(othersBackup))?.state).toBe('queued');
    expect((await h.call(operator, 'GET', '/control/tenants/acme')).status).toBe(404);

    // The same id is refused while its purge waits: the purge must not reach the new tenant.
    const early = await h.call(operator, 'POST', '/control/tenants', { id: 'acme', name: 'Acme again' });
    expect([early.status, early.json.code]).toEqual([409, 'TenantPurgePending']);
    expect(early.json.detail).toContain(purgeJobId);

    // Once a worker has completed it, the id is free again.
    const stop = h.jobs.work('tenant-purge', async () => {}, { pollMs: 10 });
    try {
      let state = purge!.state;
      for (let i = 0; i < 400 && state !== 'completed'; i++) {
        await new Promise((resolve) => setTimeout(resolve, 25));
        state = (await h.jobs.get(purge!.id))!.state;
      }
      expect(state).toBe('completed');
    } finally {
      await stop();
    }
    const later = await h.call(operator, 'POST', '/control/tenants', { id: 'acme', name: 'Acme again' });
    expect(later.status).toBe(201);
  });
});
