// What the gateway's own routes take (the rest is the tenant's and the control API's): parsed by gateway.ts and
// described in the OpenAPI document (openapi.ts) from the same schemas.
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
