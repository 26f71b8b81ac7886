// What the gateway's own routes take and answer (the rest is the tenant's and the control API's): parsed by
// gateway.ts and described in the OpenAPI document (own-routes.ts) from the same schemas.
import { PrincipalKindSchema, RoleSchema } from '@rookery/control-store';
import { z } from 'zod';

/** `POST /auth/2fa`: a person's TOTP code opens a two-factor session for their certificate. */
export const TwoFactorRequestSchema = z.object({
  code: z.string().regex(/^\d{6}$/, 'a code is the 6 digits your authenticator shows'),
  minutes: z
    .number()
    .int()
    .min(1)
    .max(7 * 24 * 60)
    .default(60),
  binding: z.enum(['browser', 'certificate']).default('browser'),
});

/** `GET /usage?from=&to=` (and `tenant=` for operators). */
export const UsageQuerySchema = z.object({
  tenant: z.string().min(1).optional(),
  from: z.coerce.number().int().min(0).optional(),
  to: z.coerce.number().int().min(0).optional(),
});

/** `GET /info/remote-task/tcp?database=&remote-task=`: where RavenDB's subscription workers connect (ravendb-tcp.ts). */
export const RavenTcpInfoQuerySchema = z.object({
  database: z.string().min(1),
  'remote-task': z.string().optional(),
});

// What they answer. gateway.ts builds each answer by hand (`satisfies` the type inferred here), so the document
// and the code read one shape.

/** `POST /auth/2fa` → 201. CsrfToken only for a browser-bound session (a certificate-bound one has no cookie). */
export const TwoFactorSessionAnswerSchema = z.object({
  Binding: z.enum(['browser', 'certificate']),
  ExpiresAt: z.iso.datetime(),
  CsrfToken: z.string().optional(),
});
export type TwoFactorSessionAnswer = z.infer<typeof TwoFactorSessionAnswerSchema>;

/** `GET /auth/enrolment` → 200: whether a tenant admin started an enrolment this person has yet to collect. */
export const EnrolmentPendingAnswerSchema = z.object({ Pending: z.boolean() });

/** `POST /auth/enrolment` → 201, once: the authenticator's secret and otpauth URI. */
export const EnrolmentAnswerSchema = z.object({ Secret: z.string(), Uri: z.string() });

/** `GET /usage` → 200: the tenant's metered minutes and its storage against its quota (null: not measured). */
export const UsageAnswerSchema = z.object({
  Tenant: z.string(),
  Minutes: z.array(
    z.object({
      Minute: z.iso.datetime(),
      Requests: z.number().int(),
      BytesIn: z.number().int(),
      BytesOut: z.number().int(),
      WorkUnits: z.number(),
    }),
  ),
  Storage: z.object({ Bytes: z.number().int().nullable(), QuotaBytes: z.number().int().nullable() }),
});
export type UsageAnswer = z.infer<typeof UsageAnswerSchema>;

/** `GET /auth/session` → 200: who the caller is and its two-factor session (null for a program: it needs none). */
export const SessionAnswerSchema = z.object({
  Principal: z.object({
    Id: z.string(),
    Name: z.string(),
    Kind: PrincipalKindSchema,
    TenantId: z.string().nullable(),
    Role: RoleSchema,
  }),
  Binding: z.enum(['browser', 'certificate']).nullable(),
  ExpiresAt: z.iso.datetime().nullable(),
  CsrfToken: z.string().nullable(),
});

/** `GET /info/remote-task/tcp` → 200: RavenDB's TcpConnectionInfo (ravendb-tcp.ts says what the client reads). */
export const RavenTcpInfoAnswerSchema = z.object({
  Url: z.string(),
  Certificate: z.string(),
  NodeTag: z.null(),
});
export type RavenTcpInfoAnswer = z.infer<typeof RavenTcpInfoAnswerSchema>;
