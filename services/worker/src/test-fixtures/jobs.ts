// Test helpers around the real job queue: the job types with a short lease (so a killed worker's
// job is retried within the test), and waiting for a job to reach a state — tests wait for states,
// never for durations.
import { setTimeout as sleep } from 'node:timers/promises';
import type { Job, JobQueue } from '@rookery/jobs';
import { ROOKERY_JOB_TYPES, type RookeryJobTypes } from '@rookery/protocol';

export const SHORT_LEASE_JOB_TYPES: RookeryJobTypes = {
  backup: { ...ROOKERY_JOB_TYPES.backup, leaseMs: 4_000 },
  restore: { ...ROOKERY_JOB_TYPES.restore, leaseMs: 4_000 },
  'lifecycle-sweep': { ...ROOKERY_JOB_TYPES['lifecycle-sweep'], leaseMs: 4_000 },
  'tenant-purge': { ...ROOKERY_JOB_TYPES['tenant-purge'], leaseMs: 4_000 },
  database: { ...ROOKERY_JOB_TYPES.database, leaseMs: 4_000 },
  'index-build': { ...ROOKERY_JOB_TYPES['index-build'], leaseMs: 4_000 },
};

export async function waitForJob(
  queue: JobQueue<RookeryJobTypes>,
  id: string,
  until: (job: Job) => boolean,
  what: string,
  timeoutMs = 50_000,
): Promise<Job> {
  const deadline = Date.now() + timeoutMs;
  let job: Job | null = null;
  while (Date.now() < deadline) {
    job = await queue.get(id);
    if (job && until(job)) return job;
    await sleep(50);
  }
  throw new Error(`job ${id} did not reach "${what}"; last seen: ${JSON.stringify(job)}`);
}

export const finished = (job: Job) => ['completed', 'failed', 'cancelled'].includes(job.state);
