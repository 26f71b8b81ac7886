// The answers the Tenant page reads: the gateway's /usage and the control API's principals,
// certificates, TOTP enrolment and jobs (packages/control-api/README.md, camelCase there), parsed first.
import { z } from 'zod';

export const UsageSchema = z.looseObject({
  Tenant: z.string(),
  Minutes: z.array(
    z.looseObject({
      Minute: z.string(),
      Requests: z.number(),
      BytesIn: z.number(),
      BytesOut: z.number(),
      WorkUnits: z.number(),
    }),
  ),
  /** Bytes on disk as the host measures them for the quota (null: not measured now), and the quota. */
  Storage: z.looseObject({ Bytes: z.number().nullable(), QuotaBytes: z.number().nullable() }),
});
export type Storage = z.infer<typeof UsageSchema>['Storage'];
export type UsageMinute = z.infer<typeof UsageSchema>['Minutes'][number];

export const PrincipalSchema = z.looseObject({
  id: z.string(),
  name: z.string(),
  kind: z.string(),
  role: z.looseObject({ kind: z.string() }),
});
export type Principal = z.infer<typeof PrincipalSchema>;
/** One page of `GET …/principals?start=&pageSize=`, and how many the tenant has. */
export const PrincipalsSchema = z.looseObject({
  principals: z.array(PrincipalSchema),
  total: z.number(),
  start: z.number(),
});

export const CertificateSchema = z.looseObject({
  serial: z.string(),
  notAfter: z.number(),
  revokedAt: z.number().nullable(),
});
export type Certificate = z.infer<typeof CertificateSchema>;
export const CertificatesSchema = z.looseObject({ certificates: z.array(CertificateSchema) });
export const IssuedSchema = z.looseObject({
  certificate: CertificateSchema,
  pkcs12Base64: z.string().nullable(),
});
export const RevokedSchema = z.looseObject({ certificate: CertificateSchema });
export const EnrolmentSchema = z.looseObject({ secret: z.string(), uri: z.string() });
/** The answer when the person collects the secret themselves: no secret in it. */
export const EnrolmentStartedSchema = z.looseObject({ pending: z.literal(true) });

export const JobSchema = z.looseObject({
  id: z.string(),
  type: z.string(),
  state: z.string(),
  lastError: z.string().nullable().optional(),
  progress: z.unknown().optional(),
});
export type Job = z.infer<typeof JobSchema>;
export const JobsSchema = z.looseObject({ jobs: z.array(JobSchema) });
