// A tenant's id, as the control plane issues it. The same string names the tenant's directory on the
// host (`<data>/tenants/<id>/`) and on the mirror (`<mirror>/<id>/`), its client certificates' URN, the
// host's URLs and the worker's jobs, so every service checks it against this one pattern: an id one
// service takes and another refuses would leave files no one can name (a purge that never finds them).
import { z } from 'zod';

/**
 * Lower-case letters, digits and `-`, 1 to 63 characters, not starting with `-`: one DNS label, one
 * path segment on any file system (no case to fold, no `.` or `..`).
 */
export const TENANT_ID_PATTERN = /^[a-z0-9][a-z0-9-]{0,62}$/;

export const TENANT_ID_RULE = '1-63 lower-case letters, digits or "-", starting with a letter or digit';

export const TenantIdSchema = z.string().regex(TENANT_ID_PATTERN, `a tenant id is ${TENANT_ID_RULE}`);
