// Headers the gateway adds to a request it forwards to a tenant container. Everything named `x-rookery-…`
// that a client sends is dropped by the gateway before forwarding, so a tenant can trust these.
import { z } from 'zod';

/**
 * The tenant's storage quota in bytes, on every forwarded request that may store more (writes, batches,
 * bulk inserts): the tenant holds a long write to it as it goes, chunk by chunk, and refuses a batch that
 * would grow a tenant already at it. Absent (a worker's sweep, a test talking to the tenant directly): no
 * quota is enforced by the tenant.
 */
export const STORAGE_QUOTA_HEADER = 'x-rookery-storage-quota';

/** The header's value: whole bytes. */
export const StorageQuotaHeaderSchema = z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER);
