// Reads the Rookery identity out of a client certificate. The gateway calls this on every
// new TLS connection with `socket.getPeerCertificate().raw` (TLS has already checked the
// chain against our CA), so it is kept cheap: the certificate is parsed once by Node's
// native X509Certificate (OpenSSL), and the answer is remembered by thumbprint, so a
// client that reconnects costs one SHA-256 of ~500 bytes and a Map lookup.
import { createHash, X509Certificate } from 'node:crypto';
import { PkiError } from './errors.js';
import { EKU_CLIENT_AUTH, identityFromUris, type PrincipalKind } from './identity-encoding.js';

export interface CertificateIdentity {
  principalId: string;
  /** null for an operator certificate (reaches every tenant). */
  tenantId: string | null;
  kind: PrincipalKind;
  /** SHA-256 of the DER certificate, lower-case hex (the revocation key). */
  thumbprint: string;
  /** Serial number, lower-case hex. */
  serial: string;
  /** Epoch ms. */
  notAfter: number;
}

const CACHE_LIMIT = 4096;
const cache = new Map<string, CertificateIdentity>();

/**
 * The identity a client certificate carries. `cert` is DER (as `getPeerCertificate().raw`
 * gives) or PEM. Throws PkiError `CertificateNotRecognised` if the certificate is unreadable,
 * not meant for client authentication, or does not name exactly one Rookery principal,
 * tenant-or-operator and kind.
 */
export function identityOf(cert: Buffer | string): CertificateIdentity {
  let der: Buffer;
  let parsed: X509Certificate | undefined;
  if (typeof cert === 'string') {
    parsed = parse(cert);
    der = parsed.raw;
  } else if (Buffer.isBuffer(cert) || (cert as unknown) instanceof Uint8Array) {
    der = Buffer.isBuffer(cert) ? cert : Buffer.from(cert as Uint8Array);
  } else {
    throw notRecognised('expected a DER Buffer or a PEM string');
  }
  const thumbprint = createHash('sha256').update(der).digest('hex');
  const known = cache.get(thumbprint);
  if (known !== undefined) return known;

  parsed ??= parse(der);
  const eku = parsed.keyUsage;
  if (eku === undefined || !eku.includes(EKU_CLIENT_AUTH)) {
    throw notRecognised('it is not a client certificate (no clientAuth extended key usage)');
  }
  const identity = identityFromUris(uriNames(parsed.subjectAltName));
  if (identity === null) {
    throw notRecognised('it does not carry a Rookery principal, tenant and kind');
  }
  const result: CertificateIdentity = Object.freeze({
    principalId: identity.principalId,
    tenantId: identity.tenantId,
    kind: identity.kind,
    thumbprint,
    serial: parsed.serialNumber.toLowerCase(),
    notAfter: Date.parse(parsed.validTo),
  });
  if (cache.size >= CACHE_LIMIT) {
    // Oldest first: Map iterates in insertion order.
    cache.delete(cache.keys().next().value as string);
  }
  cache.set(thumbprint, result);
  return result;
}

function parse(cert: Buffer | string): X509Certificate {
  try {
    return new X509Certificate(cert);
  } catch (error) {
    throw notRecognised('it is not a readable X.509 certificate', error);
  }
}

/**
 * The URI entries of Node's subjectAltName text ("DNS:a, URI:b, ..."). Node writes an entry
 * as a JSON string literal when its value holds characters that would make the list
 * ambiguous (CVE-2021-44532); Rookery's own URIs are percent-encoded and never need that,
 * so a quoted entry is decoded and then simply fails to match if it was not ours.
 */
export function uriNames(subjectAltName: string | undefined): string[] {
  if (subjectAltName === undefined || subjectAltName.length === 0) return [];
  const uris: string[] = [];
  let index = 0;
  while (index < subjectAltName.length) {
    const colon = subjectAltName.indexOf(':', index);
    if (colon < 0) break;
    const type = subjectAltName.slice(index, colon);
    let value: string;
    let next: number;
    if (subjectAltName[colon + 1] === '"') {
      const end = endOfJsonString(subjectAltName, colon + 1);
      if (end < 0) throw notRecognised('its subject alternative names cannot be read');
      value = JSON.parse(subjectAltName.slice(colon + 1, end + 1)) as string;
      next = end + 1;
    } else {
      const comma = subjectAltName.indexOf(', ', colon + 1);
      next = comma < 0 ? subjectAltName.length : comma;
      value = subjectAltName.slice(colon + 1, next);
    }
    if (type === 'URI') uris.push(value);
    index = next + 2; // skip ", "
  }
  return uris;
}

function endOfJsonString(text: string, start: number): number {
  for (let i = start + 1; i < text.length; i++) {
    if (text[i] === '\\') i++;
    else if (text[i] === '"') return i;
  }
  return -1;
}

function notRecognised(why: string, cause?: unknown): PkiError {
  return new PkiError(
    'CertificateNotRecognised',
    `The client certificate is not a Rookery certificate: ${why}. Use a certificate issued by this ` +
      'Rookery control plane (rookery certificates issue).',
    {},
    cause,
  );
}
