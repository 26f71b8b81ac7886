// The CLI's side of database create/delete: what it queues and how it waits. The job itself runs
// end to end (a real worker, host and tenant) in services/worker/src/jobs/database-job.test.ts.
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

async function queuedJob(id: string) {
  const jobs = await openJobQueue({ dataDir: data.dir, types: ROOKERY_JOB_TYPES });
  try {
    return await jobs.get(id);
  } finally {
    await jobs.close();
  }
}

describe('rookery database', () => {
  it("queues the creation of a database in the tenant's container for a worker", async () => {
    await rookery('tenant', 'create', 'acme');
    const created = await rookery('--json', 'database', 'create', 'acme', 'Shop');
    expect(created.code).toBe(0);
    const { jobId, state } = created.json<{ jobId: string; state: string }>();
    expect(state).toBe('queued');
    expect(await queuedJob(jobId)).toMatchObject({
      type: 'database',
      tenantId: 'acme',
      state: 'queued',
      payload: { database: 'Shop', action: 'create', requestedBy: 'rookery-cli' },
    });
    const human = await rookery('database', 'create', 'acme', 'Other');
    expect(human.stdout).toMatch(/^Creating database Other of tenant acme: job \S+ is queued/);
  });

  it('deletes only with --yes, and says when no worker finished the job in time', async () => {
    await rookery('tenant', 'create', 'acme');
    const refused = await rookery('database', 'delete', 'acme', 'shop');
    expect([refused.code, refused.stderr]).toEqual([1, expect.stringMatching(/^InvalidRequest: .*--yes/)]);
    const waited = await rookery('database', 'delete', 'acme', 'shop', '--yes', '--wait', '1');
    expect(waited.code).toBe(1);
    expect(waited.stderr).toMatch(
      /^JobQueueUnavailable: Deleting database shop of tenant acme: job \S+ is still queued after 1 s; is a worker running/,
    );
  });

  it('refuses an unknown tenant and a bad name before anything is queued', async () => {
    expect((await rookery('database', 'create', 'nobody', 'shop')).stderr).toMatch(/^TenantNotFound: /);
    await rookery('tenant', 'create', 'acme');
    const bad = await rookery('database', 'create', 'acme', '../etc');
    expect([bad.code, bad.stderr]).toEqual([1, expect.stringMatching(/^InvalidJobPayload: /)]);
    const jobs = await openJobQueue({ dataDir: data.dir, types: ROOKERY_JOB_TYPES });
    try {
      expect(await jobs.list({ tenantId: 'acme' })).toEqual([]);
    } finally {
      await jobs.close();
    }
  });
});
