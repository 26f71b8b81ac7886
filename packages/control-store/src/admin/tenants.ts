// A new tenant, optionally with its first administrator, so that the people
// who asked for the tenant can reach it at once (issue the admin a certificate
// next). The store has no cross-method transaction: if the admin cannot be
// created, the tenant is removed again rather than left without anyone in it.
//
// Deleting a tenant deletes its records here and hands its data to a `tenant-purge` job (the host's
// files, the mirror, the backups: services/worker README, Tenant purges). Its id stays taken until
// that purge has completed, so a purge can never reach a newer tenant of the same id.
import type { JobQueue } from '@rookery/jobs';
import { RookeryError, type RookeryJobTypes, tenantPurgeDedupeKey } from '@rookery/protocol';
import type { ControlStore, CreateTenantInput } from '../store/control-store.js';
import type { Principal, PrincipalKind, Tenant } from '../store/types.js';

export interface ProvisionTenantInput extends CreateTenantInput {
  /** A first principal with the tenant-admin role. */
  admin?: { name: string; kind: PrincipalKind };
}

type Jobs = JobQueue<RookeryJobTypes>;

/**
 * `jobs`: the queue the purges of deleted tenants are on; with it, an id whose latest purge has not
 * completed is refused (TenantPurgePending). Without one (a control plane started without the
 * queue) that check cannot be made.
 */
export async function provisionTenant(
  store: ControlStore,
  input: ProvisionTenantInput,
  jobs?: Jobs | null,
): Promise<{ tenant: Tenant; admin: Principal | null }> {
  const { admin, ...tenantInput } = input;
  if (jobs) await refusePendingPurge(jobs, tenantInput.id);
  const tenant = await store.createTenant(tenantInput);
  if (!admin) return { tenant, admin: null };
  try {
    const principal = await store.createPrincipal({
      tenantId: tenant.id,
      kind: admin.kind,
      name: admin.name,
      role: { kind: 'tenant-admin' },
    });
    return { tenant, admin: principal };
  } catch (error) {
    await store.deleteTenant(tenant.id).catch(() => undefined); // the admin's error is the one to report
    throw error;
  }
}

/** Retries of a purge: deleting is cheap and idempotent, and the data must go, so many and patient. */
const PURGE_JOB = { maxAttempts: 10, backoffMs: 60_000 } as const;

/**
 * Deletes the tenant's records (its certificates stay recorded as revoked), cancels its queued and
 * running jobs (a backup or sweep would write the data back) and enqueues the purge of its data.
 * Returns the purge job's id. The queue is the caller's to open: without one, refuse before
 * deleting anything rather than leave data no job will remove.
 */
export async function deleteTenant(
  store: ControlStore,
  jobs: Jobs,
  tenantId: string,
  requestedBy?: string,
): Promise<string> {
  await store.deleteTenant(tenantId);
  for (const state of ['queued', 'active'] as const) {
    for (const job of await jobs.list({ tenantId, state, limit: 1000 })) {
      if (job.type === 'tenant-purge') continue;
      // It may have finished meanwhile: a finished job is left as it is, which is as good.
      await jobs.cancel(job.id).catch(() => undefined);
    }
  }
  return jobs.enqueue({
    type: 'tenant-purge',
    tenantId,
    payload: requestedBy === undefined ? {} : { requestedBy },
    dedupeKey: tenantPurgeDedupeKey(tenantId),
    ...PURGE_JOB,
  });
}

async function refusePendingPurge(jobs: Jobs, tenantId: string): Promise<void> {
  const [latest] = await jobs.list({ tenantId, type: 'tenant-purge', limit: 1 });
  if (!latest || latest.state === 'completed') return;
  const why =
    latest.state === 'failed' || latest.state === 'cancelled'
      ? `did not complete (${latest.state}${latest.lastError ? `: ${latest.lastError}` : ''}); its data may still be there, so the id stays taken until an operator has removed it`
      : 'has not finished yet; retry once it has';
  throw new RookeryError(
    'TenantPurgePending',
    `Tenant "${tenantId}" was deleted and the purge of its data (job ${latest.id}) ${why}.`,
    { tenantId, jobId: latest.id, state: latest.state },
  );
}
