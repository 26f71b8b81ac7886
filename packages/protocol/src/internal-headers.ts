// The `x-rookery-…` header fields that cross a service boundary inside Rookery, named once here so that
// the service that sets one and the service that reads it cannot drift apart. The gateway drops every
// field with this prefix that a client sends (and every one a tenant answers with), so a service can
// trust these: only another Rookery service set them.
import { z } from 'zod';

/** The prefix of every internal field; the gateway forwards none that a client sent. */
export const INTERNAL_HEADER_PREFIX = 'x-rookery-';

/**
 * The host's shared secret (ROOKERY_INTERNAL_TOKEN), sent by the gateway and the worker on every call to
 * the host's internal API; the host answers 401 without it.
 */
export const INTERNAL_TOKEN_HEADER = 'x-rookery-internal-token';

/**
 * The tenant's storage quota in bytes, on every forwarded request that may store more (writes, batches,
 * bulk inserts): the tenant holds a long write to it as it goes, chunk by chunk, and refuses a batch that
 * would grow a tenant already at it. Absent (a worker's sweep, a test talking to the tenant directly): no
 * quota is enforced by the tenant.
 */
export const STORAGE_QUOTA_HEADER = 'x-rookery-storage-quota';

/** The header's value: whole bytes. */
export const StorageQuotaHeaderSchema = z.coerce.number().int().min(0).max(Number.MAX_SAFE_INTEGER);

/**
 * The work a request did, in units the gateway meters: a tenant's answer carries it as a header, or as a
 * trailer when the answer streams (the header then holds the floor known before the body). The gateway
 * reads it and drops it before the client sees the answer.
 */
export const WORK_UNITS_HEADER = 'x-rookery-work-units';
