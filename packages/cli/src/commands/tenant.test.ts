import { openJobQueue } from '@rookery/jobs';
import { ROOKERY_JOB_TYPES } from '@rookery/protocol';
import { makeTempDir } from '@rookery/testkit';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { runRookery } from '../test-fixtures/run-cli.js';

let data: { dir: string; cleanup: () => void };
beforeEach(() => {
  data = makeTempDir('rookery-cli-');
});
afterEach(() => data.cleanup());
const rookery = (...args: string[]) => runRookery(data.dir, args);

describe('rookery tenant', () => {
  it('creates a tenant with an admin and a quota, lists, shows and changes it', async () => {
    const created = await rookery(
      '--json',
      'tenant',
      'create',
      'acme',
      '--name',
      'Acme Inc',
      '--storage',
      '10GiB',
      '--admin',
      'ops',
    );
    expect(created.code).toBe(0);
    const { tenant, admin } = created.json<{
      tenant: { quota: object };
      admin: { id: string; role: object };
    }>();
    expect(tenant.quota).toEqual({ requestsPerSecond: 200, storageBytes: 10 * 2 ** 30 });
    expect(admin.role).toEqual({ kind: 'tenant-admin' });

    const listed = await rookery('tenant', 'list');
    expect(listed.stdout).toMatch(/^ID\s+NAME\s+REQUESTS\/S\s+STORAGE\s+CREATED$/m);
    expect(listed.stdout).toMatch(/^acme\s+Acme Inc\s+200\s+10 GiB\s/m);

    const quota = await rookery('--json', 'tenant', 'quota', 'acme', '--requests-per-second', '50');
    expect(quota.json()).toEqual({ requestsPerSecond: 50, storageBytes: 10 * 2 ** 30 });
    expect((await rookery('tenant', 'quota', 'acme')).stdout).toContain('50 requests/s, 10 GiB stored');

    const shown = await rookery('tenant', 'show', 'acme');
    expect(shown.stdout).toContain(`${admin.id}  program  ops  tenant-admin`);
    expect((await rookery('database', 'list', 'acme')).stdout).toContain('no database records');
  });

  it('deletes a tenant only with --yes, enqueues the purge of its data, and keeps its id until then', async () => {
    await rookery('tenant', 'create', 'gone');
    const refused = await rookery('tenant', 'delete', 'gone');
    expect([refused.code, refused.stderr]).toEqual([1, expect.stringMatching(/^InvalidRequest: .*--yes/)]);
    const deleted = await rookery('--json', 'tenant', 'delete', 'gone', '--yes');
    expect(deleted.code).toBe(0);
    const { purgeJobId } = deleted.json<{ deleted: string; purgeJobId: string }>();
    const missing = await rookery('tenant', 'show', 'gone');
    expect([missing.code, missing.stderr]).toEqual([1, expect.stringMatching(/^TenantNotFound: /)]);

    // The job is on the queue the workers run from (the data directory's), waiting for one.
    const queue = await openJobQueue({ dataDir: data.dir, types: ROOKERY_JOB_TYPES });
    try {
      expect(await queue.get(purgeJobId)).toMatchObject({
        type: 'tenant-purge',
        tenantId: 'gone',
        state: 'queued',
        payload: { requestedBy: 'rookery-cli' },
      });
    } finally {
      await queue.close();
    }
    const again = await rookery('tenant', 'create', 'gone');
    expect([again.code, again.stderr]).toEqual([1, expect.stringMatching(/^TenantPurgePending: .*purge/)]);
  });

  it('answers bad input with the code and a message naming what was typed', async () => {
    const badId = await rookery('tenant', 'create', 'Not Valid');
    expect([badId.code, badId.stderr]).toEqual([1, expect.stringMatching(/^InvalidTenantId: "Not Valid"/)]);
    const badSize = await rookery('tenant', 'create', 'acme', '--storage', '10GB');
    expect([badSize.code, badSize.stderr]).toEqual([
      1,
      expect.stringMatching(/^InvalidRequest: --storage: /),
    ]);
    const badRate = await rookery('tenant', 'create', 'acme', '--requests-per-second', '0');
    expect(badRate.code).toBe(1);
    expect(badRate.stderr).toMatch(/^InvalidRequest: /);
    // Nothing was created by the failed attempts.
    expect((await rookery('--json', 'tenant', 'list')).json()).toEqual([]);
    const twice = await rookery('tenant', 'create', 'acme');
    expect(twice.code).toBe(0);
    expect((await rookery('tenant', 'create', 'acme')).stderr).toMatch(/^TenantAlreadyExists: /);
    expect((await rookery('database', 'list', 'nobody')).stderr).toMatch(/^TenantNotFound: /);
  });
});
