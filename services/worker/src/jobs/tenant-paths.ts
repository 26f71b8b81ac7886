// A job's tenant id names directories (on the mirror, in the backup storage, under the host's
// data): it must be one safe path segment whatever put the job on the queue.
import { RookeryError, TenantIdSchema } from '@rookery/protocol';

export function tenantDirectoryName(tenantId: string): string {
  if (!TenantIdSchema.safeParse(tenantId).success) {
    throw new RookeryError('InvalidTenantId', `"${tenantId}" is not a tenant id; this job cannot run.`);
  }
  return tenantId;
}
