// Issues leaf certificates from the CA: client certificates that carry a principal's
// identity (see identity-encoding.ts) and server certificates for the gateway. Every leaf
// gets its own fresh key (ECDSA P-256; a client certificate may ask for RSA, keys.ts), a random
// 16-byte serial and a SHA-256 thumbprint,
// which is what the control store records (CertificateRecord) and revocation keys on.
import { createHash } from 'node:crypto';
import { isIP } from 'node:net';
import { TENANT_ID_PATTERN } from '@rookery/protocol';
import {
  assertCommonName,
  assertValidDays,
  BACKDATE_MS,
  type CertificateAuthority,
  commonNameSubject,
  randomSerial,
  signerOf,
  toCertificateTime,
} from './ca.js';
import { PkiError } from './errors.js';
import {
  EKU_CLIENT_AUTH,
  EKU_SERVER_AUTH,
  identityUris,
  PRINCIPAL_KINDS,
  type PrincipalKind,
  SERVICE_KINDS,
  type ServiceKind,
  URN_SERVICE,
} from './identity-encoding.js';
import { generateKeyPair, type KeyType } from './keys.js';
import { x509 } from './x509.js';

const DAY_MS = 86_400_000;
const DNS_NAME = /^(\*\.)?([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)(\.[a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?)*$/;

export interface IssuedCertificate {
  certPem: string;
  /**
   * The leaf's private key: PKCS#8 PEM, or PKCS#1 (`RSA PRIVATE KEY`) for an RSA key. Handed to the
   * principal once; never stored by the CA.
   */
  keyPem: string;
  /** Serial number, lower-case hex. */
  serial: string;
  /** SHA-256 of the DER certificate, lower-case hex. */
  thumbprint: string;
  /** Epoch ms (whole seconds, as in the certificate). */
  notBefore: number;
  notAfter: number;
}

export interface ClientCertificateOptions {
  principalId: string;
  /** The principal's tenant, or null for an operator (reaches every tenant). */
  tenantId: string | null;
  kind: PrincipalKind;
  /** Human name, written as the subject CN (1 to 64 characters). */
  name: string;
  validDays: number;
  /** The leaf's key: ECDSA P-256 by default; RSA for clients that read only PKCS#1 RSA keys (RavenDB's). */
  keyType?: KeyType;
}

export interface ServerCertificateOptions {
  /** DNS names and IP addresses the server answers on, e.g. localhost, 127.0.0.1, ::1. */
  hosts: string[];
  validDays: number;
}

/** Issues a client certificate (extKeyUsage clientAuth) naming one principal. */
export async function issueClientCertificate(
  ca: CertificateAuthority,
  options: ClientCertificateOptions,
): Promise<IssuedCertificate> {
  const { principalId, tenantId, kind } = options;
  if (
    typeof principalId !== 'string' ||
    principalId.length === 0 ||
    principalId.length > 256 ||
    !wellFormed(principalId)
  ) {
    throw new PkiError(
      'InvalidCertificateRequest',
      'principalId must be 1 to 256 characters of well-formed Unicode.',
      {
        field: 'principalId',
      },
    );
  }
  if (tenantId !== null && (typeof tenantId !== 'string' || !TENANT_ID_PATTERN.test(tenantId))) {
    throw new PkiError(
      'InvalidCertificateRequest',
      'tenantId must be null (operator) or match [a-z0-9][a-z0-9-]{0,62}.',
      { field: 'tenantId' },
    );
  }
  if (!PRINCIPAL_KINDS.includes(kind)) {
    throw new PkiError('InvalidCertificateRequest', "kind must be 'program' or 'person'.", { field: 'kind' });
  }
  const name = assertCommonName(options.name, 'name');
  return issueLeaf(ca, {
    subject: commonNameSubject(name),
    validDays: assertValidDays(options.validDays),
    subjectAltNames: identityUris({ principalId, tenantId, kind }).map((value) => ({ type: 'url', value })),
    extendedKeyUsage: [EKU_CLIENT_AUTH],
    keyType: options.keyType,
  });
}

/** Issues a TLS server certificate (extKeyUsage serverAuth) for DNS names and IP addresses. */
export async function issueServerCertificate(
  ca: CertificateAuthority,
  options: ServerCertificateOptions,
): Promise<IssuedCertificate> {
  const names = hostNames(options.hosts);
  const first = names[0]!.value;
  return issueLeaf(ca, {
    subject: commonNameSubject(first.length <= 64 ? first : 'Rookery server'),
    validDays: assertValidDays(options.validDays),
    subjectAltNames: names,
    extendedKeyUsage: [EKU_SERVER_AUTH],
  });
}

/** DNS names and IP addresses as subject alternative names; PkiError for anything else. */
function hostNames(hosts: unknown): x509.JsonGeneralName[] {
  if (!Array.isArray(hosts) || hosts.length === 0) {
    throw new PkiError('InvalidCertificateRequest', 'hosts must name at least one DNS name or IP address.', {
      field: 'hosts',
    });
  }
  const names: x509.JsonGeneralName[] = [];
  for (const raw of hosts) {
    const host = typeof raw === 'string' ? raw.trim() : '';
    const unbracketed = host.startsWith('[') && host.endsWith(']') ? host.slice(1, -1) : host;
    if (isIP(unbracketed) !== 0) {
      names.push({ type: 'ip', value: unbracketed });
    } else if (host.length <= 253 && DNS_NAME.test(host.toLowerCase())) {
      names.push({ type: 'dns', value: host.toLowerCase() });
    } else {
      throw new PkiError(
        'InvalidCertificateRequest',
        `"${String(raw)}" is neither a DNS name nor an IP address.`,
        {
          field: 'hosts',
        },
      );
    }
  }
  return names;
}

export interface ServiceCertificateOptions {
  service: ServiceKind;
  /**
   * DNS names and IP addresses it also serves TLS on (a fleet host's relay); none for a certificate that
   * only connects (the gateway's, presented to hosts).
   */
  hosts?: string[];
  validDays: number;
}

/**
 * Issues the certificate a Rookery service presents to another one over mutual TLS: clientAuth, naming the
 * service (`urn:rookery:service:<kind>`), and serverAuth for `hosts` when given. It names no principal, so
 * the public gateway refuses it as a client's.
 */
export async function issueServiceCertificate(
  ca: CertificateAuthority,
  options: ServiceCertificateOptions,
): Promise<IssuedCertificate> {
  if (!SERVICE_KINDS.includes(options.service)) {
    throw new PkiError('InvalidCertificateRequest', `service must be one of ${SERVICE_KINDS.join(', ')}.`, {
      field: 'service',
    });
  }
  const serves = options.hosts !== undefined && options.hosts.length > 0;
  return issueLeaf(ca, {
    subject: commonNameSubject(`Rookery ${options.service}`),
    validDays: assertValidDays(options.validDays),
    subjectAltNames: [
      { type: 'url', value: URN_SERVICE + options.service },
      ...(serves ? hostNames(options.hosts) : []),
    ],
    extendedKeyUsage: serves ? [EKU_CLIENT_AUTH, EKU_SERVER_AUTH] : [EKU_CLIENT_AUTH],
  });
}

/** False for strings with lone surrogates, which have no UTF-8 (so no URI) spelling. */
function wellFormed(value: string): boolean {
  try {
    encodeURIComponent(value);
    return true;
  } catch {
    return false;
  }
}

interface LeafSpec {
  subject: x509.Name;
  validDays: number;
  subjectAltNames: x509.JsonGeneralName[];
  extendedKeyUsage: string[];
  keyType?: KeyType | undefined;
}

async function issueLeaf(ca: CertificateAuthority, spec: LeafSpec): Promise<IssuedCertificate> {
  const signer = signerOf(ca);
  const keys = await generateKeyPair(spec.keyType);
  const serial = randomSerial();
  const now = Date.now();
  const notBefore = toCertificateTime(Math.max(now - BACKDATE_MS, ca.notBefore));
  // A leaf never outlives the CA that vouches for it.
  const notAfter = toCertificateTime(Math.min(now + spec.validDays * DAY_MS, ca.notAfter));
  const cert = await x509.X509CertificateGenerator.create({
    serialNumber: serial,
    subject: spec.subject,
    issuer: signer.cert.subjectName,
    notBefore,
    notAfter,
    publicKey: keys.publicKey,
    signingKey: signer.key.key,
    signingAlgorithm: { name: signer.key.algorithm.name, hash: signer.key.algorithm.hash },
    extensions: [
      new x509.BasicConstraintsExtension(false, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.digitalSignature, true),
      new x509.ExtendedKeyUsageExtension(spec.extendedKeyUsage, false),
      new x509.SubjectAlternativeNameExtension(spec.subjectAltNames, false),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
      new x509.AuthorityKeyIdentifierExtension(signer.authorityKeyId, false),
    ],
  });
  const der = Buffer.from(cert.rawData);
  return {
    certPem: cert.toString('pem'),
    keyPem: keys.keyPem,
    serial,
    thumbprint: createHash('sha256').update(der).digest('hex'),
    notBefore: notBefore.getTime(),
    notAfter: notAfter.getTime(),
  };
}
