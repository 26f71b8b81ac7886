// The control plane's records, shared by everything that reads the store
// (control API, gateway, host, CLI). Times are epoch milliseconds; ids are
// strings. Roles and quotas are parsed with zod whenever a row is read back,
// so a hand-edited or corrupt row fails loudly instead of granting access.
import { DatabaseNameSchema } from '@rookery/protocol';
import { z } from 'zod';

export type PrincipalKind = 'program' | 'person';
export type DatabaseAccess = 'read-write' | 'read-only';
export type Role =
  | { kind: 'operator' } // every tenant
  | { kind: 'tenant-admin' } // everything in its tenant
  | { kind: 'database'; access: Record<string, DatabaseAccess> }; // named databases only

export interface Quota {
  requestsPerSecond: number;
  storageBytes: number;
}

export interface Tenant {
  id: string;
  name: string;
  createdAt: number;
  quota: Quota;
}

export interface Principal {
  id: string;
  /** null = operator (reaches every tenant). */
  tenantId: string | null;
  kind: PrincipalKind;
  name: string;
  role: Role;
  createdAt: number;
}

/** A page of a list: `pageSize` records from the `start`th (0-based), in the list's order. */
export interface PageRequest {
  start: number;
  pageSize: number;
}

export interface CertificateRecord {
  /** Lower-case hex. */
  serial: string;
  /** SHA-256 of the DER, lower-case hex. */
  thumbprint: string;
  principalId: string;
  notBefore: number;
  notAfter: number;
  revokedAt: number | null;
  pem: string;
}

export interface UsageRow {
  tenantId: string;
  /** Epoch ms, start of the minute. */
  minute: number;
  requests: number;
  bytesIn: number;
  bytesOut: number;
  workUnits: number;
}

export interface DatabaseRecord {
  tenantId: string;
  /** As created (names compare case-insensitively). */
  name: string;
  createdAt: number;
}

export interface RevokedCertificate {
  serial: string;
  thumbprint: string;
  revokedAt: number;
}

/**
 * A second-factor session opened with a TOTP code. Bound to the browser (the
 * cookie token, stored only as its hash) or to the certificate (any client
 * presenting the certificate with that thumbprint).
 */
export interface TwoFactorSession {
  /** SHA-256 hex of the session token. */
  tokenHash: string;
  principalId: string;
  thumbprint: string;
  binding: 'browser' | 'certificate';
  expiresAt: number;
}

/**
 * How many TOTP codes a person may try: at most `maxAttempts` in a window that
 * opens with the first attempt and lasts `windowMs`; the next window opens with
 * the first attempt after it ends.
 */
export interface TwoFactorAttemptLimit {
  maxAttempts: number;
  windowMs: number;
}

/** takeTwoFactorAttempt's answer: a code may be checked, or not before `retryAt`. */
export type TwoFactorAttempt = { allowed: true; attempts: number } | { allowed: false; retryAt: number };

export const TwoFactorAttemptLimitSchema: z.ZodType<TwoFactorAttemptLimit> = z
  .object({
    maxAttempts: z.number().int().min(1).max(1_000),
    windowMs: z
      .number()
      .int()
      .min(1_000)
      .max(24 * 60 * 60_000),
  })
  .strict();

/** What a tenant gets unless told otherwise: 200 requests a second, 1 GiB stored. */
export const DEFAULT_QUOTA: Readonly<Quota> = Object.freeze({
  requestsPerSecond: 200,
  storageBytes: 1024 * 1024 * 1024,
});

export const PrincipalKindSchema = z.enum(['program', 'person']);
export const DatabaseAccessSchema = z.enum(['read-write', 'read-only']);

export const RoleSchema: z.ZodType<Role> = z.discriminatedUnion('kind', [
  z.object({ kind: z.literal('operator') }).strict(),
  z.object({ kind: z.literal('tenant-admin') }).strict(),
  z
    .object({
      kind: z.literal('database'),
      access: z.record(DatabaseNameSchema, DatabaseAccessSchema),
    })
    .strict(),
]);

const Count = z.number().int().nonnegative().max(Number.MAX_SAFE_INTEGER);

export const QuotaSchema: z.ZodType<Quota> = z
  .object({
    requestsPerSecond: Count.min(1, 'a request rate quota must allow at least 1 request a second'),
    storageBytes: Count,
  })
  .strict();

export const UsageRowSchema: z.ZodType<UsageRow> = z
  .object({
    tenantId: z.string().min(1),
    minute: Count.refine((m) => m % 60_000 === 0, 'minute must be the start of a minute (epoch ms)'),
    requests: Count,
    bytesIn: Count,
    bytesOut: Count,
    workUnits: Count,
  })
  .strict();

const Hex = z
  .string()
  .regex(/^[0-9a-fA-F]+$/, 'expected hex digits')
  .transform((s) => s.toLowerCase());

export const CertificateRecordSchema = z
  .object({
    serial: Hex,
    thumbprint: Hex.refine((s) => s.length === 64, 'a thumbprint is 64 hex digits (SHA-256)'),
    principalId: z.string().min(1),
    notBefore: Count,
    notAfter: Count,
    revokedAt: Count.nullable(),
    pem: z.string().min(1),
  })
  .strict();

export const TwoFactorSessionSchema: z.ZodType<TwoFactorSession> = z
  .object({
    tokenHash: z.string().min(1),
    principalId: z.string().min(1),
    thumbprint: z.string().min(1),
    binding: z.enum(['browser', 'certificate']),
    expiresAt: Count,
  })
  .strict();
