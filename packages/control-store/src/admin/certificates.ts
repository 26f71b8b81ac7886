// Certificates for principals: issued by the CA and recorded in the control
// store in one step, so a certificate the gateway would accept is never left
// unrecorded and a recorded one always names an existing principal. The
// private key is handed back once and never stored.
import {
  type CertificateAuthority,
  DEFAULT_KEY_TYPE,
  issueClientCertificate,
  KEY_TYPES,
  toPkcs12,
} from '@rookery/pki';
import { RookeryError } from '@rookery/protocol';
import { z } from 'zod';
import { parseInput } from '../input.js';
import type { ControlStore } from '../store/control-store.js';
import type { CertificateRecord, Principal } from '../store/types.js';
import { requirePrincipal } from './require.js';

/** How long a certificate lasts unless told otherwise: long enough to be useful, short enough to rotate. */
export const DEFAULT_CERTIFICATE_DAYS = 90;

/**
 * The certificate's key: ECDSA P-256 unless asked otherwise; RSA (its key as PKCS#1 `RSA PRIVATE KEY`) for
 * clients that read nothing else, such as the official RavenDB client's `type: 'pem'`.
 */
export const CertificateKeyTypeSchema = z.enum(KEY_TYPES, {
  error: `keyType is one of ${KEY_TYPES.join(', ')} (rsa-2048 or rsa-3072 for the official RavenDB client's PEM form)`,
});

const IssueInputSchema = z
  .object({
    principalId: z.string().min(1, 'name the principal'),
    validDays: z.number().int().min(1).max(3650).default(DEFAULT_CERTIFICATE_DAYS),
    keyType: CertificateKeyTypeSchema.default(DEFAULT_KEY_TYPE),
    /** Also bundle certificate, key and CA as PKCS#12 protected by this password. */
    pkcs12Password: z.string().min(1, 'a PKCS#12 file needs a non-empty password').optional(),
  })
  .strict();
export type IssueCertificateInput = z.input<typeof IssueInputSchema>;

export interface IssuedPrincipalCertificate {
  principal: Principal;
  record: CertificateRecord;
  certPem: string;
  /** PKCS#8 PEM (PKCS#1 for an RSA key); given out once, never stored. */
  keyPem: string;
  /** The CA that issued it, for the client's trust store. */
  caPem: string;
  /** The PKCS#12 (DER) bundle when a password was given, null otherwise. */
  pkcs12: Buffer | null;
}

export async function issuePrincipalCertificate(
  store: ControlStore,
  ca: CertificateAuthority,
  input: IssueCertificateInput,
): Promise<IssuedPrincipalCertificate> {
  const { principalId, validDays, keyType, pkcs12Password } = parseInput(
    IssueInputSchema,
    input,
    'certificate request',
  );
  const principal = await requirePrincipal(store, principalId);
  const issued = await issueClientCertificate(ca, {
    principalId: principal.id,
    tenantId: principal.tenantId,
    kind: principal.kind,
    name: principal.name,
    validDays,
    keyType,
  });
  // addCertificate inserts only if the principal still exists at that instant.
  const record = await store.addCertificate({
    serial: issued.serial,
    thumbprint: issued.thumbprint,
    principalId: principal.id,
    notBefore: issued.notBefore,
    notAfter: issued.notAfter,
    revokedAt: null,
    pem: issued.certPem,
  });
  const pkcs12 =
    pkcs12Password === undefined
      ? null
      : await bundlePkcs12(
          principal,
          { certPem: issued.certPem, keyPem: issued.keyPem },
          ca.certPem,
          pkcs12Password,
        );
  return { principal, record, certPem: issued.certPem, keyPem: issued.keyPem, caPem: ca.certPem, pkcs12 };
}

/** A PKCS#12 file of a certificate with its key and CA, named after its principal in keychains. */
export function bundlePkcs12(
  principal: Principal,
  pair: { certPem: string; keyPem: string },
  caPem: string,
  password: string,
): Promise<Buffer> {
  return toPkcs12({
    ...pair,
    caPem,
    password,
    friendlyName: `${principal.name} (Rookery${principal.tenantId ? ` ${principal.tenantId}` : ' operator'})`,
  });
}

/** A certificate serial as people type it (any case, surrounding spaces), lower-cased as the store keeps it. */
export const CertificateSerialSchema = z
  .string()
  .trim()
  .regex(/^[0-9a-fA-F]{1,64}$/, 'a serial is the hex number shown by `rookery cert list`')
  .transform((s) => s.toLowerCase());

/** The certificate with this serial, or CertificateNotFound. */
export async function requireCertificate(store: ControlStore, serial: string): Promise<CertificateRecord> {
  const key = parseInput(CertificateSerialSchema, serial, 'serial');
  const record = await store.getCertificateBySerial(key);
  if (!record) {
    throw new RookeryError(
      'CertificateNotFound',
      `There is no certificate with serial ${key}; list a principal's certificates with \`rookery cert list <principal>\`.`,
    );
  }
  return record;
}

/**
 * Revokes by serial. Idempotent: `revokedNow` is false when it already was
 * revoked, and the first revocation time is kept. Gateways stop accepting it
 * within about a second (they poll revocations).
 */
export async function revokePrincipalCertificate(
  store: ControlStore,
  serial: string,
  at: number = Date.now(),
): Promise<{ certificate: CertificateRecord; revokedNow: boolean }> {
  const record = await requireCertificate(store, serial);
  const revokedNow = await store.revokeCertificate(record.serial, at);
  const certificate = (await store.getCertificateBySerial(record.serial)) ?? record;
  return { certificate, revokedNow };
}
