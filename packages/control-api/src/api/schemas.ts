// The control API's inputs: every body and path parameter is parsed here
// before a route uses it. Ranges the admin operations and the store check
// themselves (validity days, quota bounds, names) are checked there too;
// these schemas settle the shape and refuse unknown fields.

import { CertificateKeyTypeSchema, DatabaseAccessSchema, PrincipalKindSchema } from '@rookery/control-store';
import { BackupIdSchema, BackupKindSchema, DatabaseNameSchema, TenantIdSchema } from '@rookery/protocol';
import { z } from 'zod';

export const TenantParamsSchema = z.object({ tenantId: z.string().min(1).optional() });
export const PrincipalParamsSchema = TenantParamsSchema.extend({ principalId: z.string().min(1) });
export const CertificateParamsSchema = TenantParamsSchema.extend({ serial: z.string().min(1) });
export const JobParamsSchema = TenantParamsSchema.extend({ jobId: z.string().min(1).max(64) });

/** The most principals one page of `GET …/principals` answers, and how many it answers unasked. */
export const PRINCIPAL_PAGE_MAX = 1000;
export const PRINCIPAL_PAGE_DEFAULT = 100;

/** `GET …/principals?start=&pageSize=`: the data plane's paging words (`GET /databases/{db}/indexes` takes them too). */
export const PrincipalListQuerySchema = z
  .object({
    start: z.coerce.number().int().min(0).default(0),
    pageSize: z.coerce
      .number()
      .int()
      .min(1)
      .max(PRINCIPAL_PAGE_MAX, `pageSize is at most ${PRINCIPAL_PAGE_MAX}; read further pages with start`)
      .default(PRINCIPAL_PAGE_DEFAULT),
  })
  .strict();

export const JobListQuerySchema = z
  .object({
    type: z.enum(['backup', 'restore']).optional(),
    state: z.enum(['queued', 'active', 'completed', 'failed', 'cancelled']).optional(),
    limit: z.coerce.number().int().min(1).max(1000).optional(),
  })
  .strict();

export const BackupRequestSchema = z
  .object({
    database: DatabaseNameSchema,
    /** Default incremental: made full when there is no backup to continue. */
    kind: BackupKindSchema.default('incremental'),
    /** Default true: carry the index snapshots, so a restore of it does not rebuild every index. */
    indexes: z.boolean().default(true),
  })
  .strict();

export const RestoreRequestSchema = z
  .object({
    /** The backed-up database (it may have been deleted since). */
    database: DatabaseNameSchema,
    /** Default: its latest backup. */
    backupId: BackupIdSchema.optional(),
    /** The state as of this time, within the backup chain. */
    until: z.iso
      .datetime({ offset: true })
      .transform((t) => Date.parse(t))
      .optional(),
    /** A new database of the tenant. */
    targetDatabase: DatabaseNameSchema,
  })
  .strict();

const QuotaPatchSchema = z
  .object({
    requestsPerSecond: z.number().int().min(1).optional(),
    storageBytes: z.number().int().min(0).optional(),
  })
  .strict();

export const QuotaUpdateSchema = QuotaPatchSchema.refine(
  (q) => q.requestsPerSecond !== undefined || q.storageBytes !== undefined,
  'name requestsPerSecond, storageBytes or both',
);

export const NewTenantSchema = z
  .object({
    id: TenantIdSchema,
    name: z.string().trim().min(1, 'name the tenant').max(200),
    quota: QuotaPatchSchema.optional(),
    /** A first tenant-admin, so the people who asked for the tenant can reach it at once. */
    admin: z
      .object({ name: z.string().trim().min(1).max(200), kind: PrincipalKindSchema })
      .strict()
      .optional(),
  })
  .strict();

/** Roles a tenant admin may hand out: never `operator` (operators are made by operators, with the CLI). */
const TenantRoleSchema = z.discriminatedUnion(
  'kind',
  [
    z.object({ kind: z.literal('tenant-admin') }).strict(),
    z
      .object({ kind: z.literal('database'), access: z.record(DatabaseNameSchema, DatabaseAccessSchema) })
      .strict(),
  ],
  {
    error:
      'a role is {"kind": "tenant-admin"} or {"kind": "database", "access": {"<database>": "read-write" | "read-only"}}',
  },
);

export const NewPrincipalSchema = z
  .object({
    name: z.string().trim().min(1, 'name the principal').max(200),
    kind: PrincipalKindSchema,
    role: TenantRoleSchema,
  })
  .strict();

export const CertificateRequestSchema = z
  .object({
    validDays: z.number().int().optional(),
    /** `ecdsa-p256` (the default), `rsa-2048` or `rsa-3072`: RSA for the official RavenDB client's `type: 'pem'`. */
    keyType: CertificateKeyTypeSchema.optional(),
    /** Also answer a PKCS#12 bundle (base64) protected by this password. */
    pkcs12Password: z.string().optional(),
  })
  .strict();

export const TotpEnrolRequestSchema = z
  .object({
    /**
     * Who is shown the secret: `admin` (the default) in this answer; `person` alone, once, when they
     * collect it with their own certificate (the gateway's POST /auth/enrolment, the console's sign-in page).
     */
    deliverTo: z.enum(['admin', 'person']).default('admin'),
  })
  .strict();
