// The root certificate authority. In embedded mode the control plane generates a root on
// first start (loadOrCreateCertificateAuthority); an operator can instead drop in their own
// ca.crt/ca.key. Certificates are built with @peculiar/x509 (no hand-rolled ASN.1) and
// signed by node:crypto.
import { createHash, randomBytes } from 'node:crypto';
import { mkdir } from 'node:fs/promises';
import { join } from 'node:path';
import { PkiError } from './errors.js';
import { createFileExclusive, readIfExists } from './files.js';
import { DEFAULT_KEY_ALGORITHM, generateKeyPair, importSigningKey, type SigningKey } from './keys.js';
import { x509 } from './x509.js';

const DAY_MS = 86_400_000;
/** Certificates start a little in the past so a peer whose clock lags does not reject them. */
export const BACKDATE_MS = 5 * 60_000;
export const CA_CERT_FILE = 'ca.crt';
export const CA_KEY_FILE = 'ca.key';

export interface CertificateAuthorityMaterial {
  /** The root certificate (PEM). */
  certPem: string;
  /** Its private key (PKCS#8 PEM). Keep it secret: whoever has it can mint any identity. */
  keyPem: string;
}

export interface CreateCertificateAuthorityOptions {
  commonName: string;
  /** Validity in days; 10 years by default. */
  validDays?: number;
}

/** Random positive 16-byte serial, first byte 0x01..0x7f so its hex form never changes when re-read. */
export function randomSerial(): string {
  const bytes = randomBytes(16);
  bytes[0] = bytes[0]! & 0x7f || 0x01;
  return bytes.toString('hex');
}

/** Seconds precision: what X.509 times hold, so reported times equal the certificate's. */
export function toCertificateTime(ms: number): Date {
  return new Date(Math.floor(ms / 1000) * 1000);
}

export function assertCommonName(name: unknown, what: string): string {
  if (typeof name !== 'string' || name.trim().length === 0 || name.length > 64 || hasControlCharacter(name)) {
    throw new PkiError(
      'InvalidCertificateRequest',
      `The ${what} must be 1 to 64 characters, without control characters.`,
      { field: what },
    );
  }
  return name;
}

function hasControlCharacter(text: string): boolean {
  for (let i = 0; i < text.length; i++) {
    const code = text.charCodeAt(i);
    if (code < 0x20 || code === 0x7f) return true;
  }
  return false;
}

/**
 * A subject of one CN, written verbatim as a UTF8String. (Given a plain string, @peculiar/x509
 * would read it as RFC 4514 text, so quotes, backslashes or a leading '#' would change it.)
 */
export function commonNameSubject(commonName: string): x509.Name {
  return new x509.Name([{ CN: [{ utf8String: commonName }] }]);
}

export function assertValidDays(days: unknown): number {
  if (typeof days !== 'number' || !Number.isInteger(days) || days < 1 || days > 36_500) {
    throw new PkiError(
      'InvalidCertificateRequest',
      'validDays must be a whole number of days from 1 to 36500.',
      {
        field: 'validDays',
      },
    );
  }
  return days;
}

/** Creates a new self-signed root CA: basicConstraints CA (critical), keyUsage keyCertSign + cRLSign. */
export async function createCertificateAuthority(
  options: CreateCertificateAuthorityOptions,
): Promise<CertificateAuthorityMaterial> {
  const commonName = assertCommonName(options.commonName, 'commonName');
  const validDays = assertValidDays(options.validDays ?? 3650);
  const keys = await generateKeyPair();
  const now = Date.now();
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    serialNumber: randomSerial(),
    name: commonNameSubject(commonName),
    notBefore: toCertificateTime(now - BACKDATE_MS),
    notAfter: toCertificateTime(now + validDays * DAY_MS),
    signingAlgorithm: DEFAULT_KEY_ALGORITHM,
    keys: { privateKey: keys.privateKey, publicKey: keys.publicKey },
    extensions: [
      new x509.BasicConstraintsExtension(true, undefined, true),
      new x509.KeyUsagesExtension(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign, true),
      await x509.SubjectKeyIdentifierExtension.create(keys.publicKey),
    ],
  });
  return { certPem: cert.toString('pem'), keyPem: keys.keyPem };
}

/** What issue.ts needs to sign with a CA; kept out of the public object. */
export interface CaSigner {
  key: SigningKey;
  cert: x509.X509Certificate;
  /** Authority key identifier for issued certificates (the CA's subject key identifier). */
  authorityKeyId: string;
}

const signers = new WeakMap<CertificateAuthority, CaSigner>();

export function signerOf(ca: CertificateAuthority): CaSigner {
  const signer = signers.get(ca);
  if (signer === undefined) {
    throw new PkiError(
      'CertificateAuthorityInvalid',
      'Not a loaded certificate authority; use CertificateAuthority.fromPem or loadOrCreateCertificateAuthority.',
    );
  }
  return signer;
}

/** A loaded, checked certificate authority, ready to issue certificates. */
export class CertificateAuthority {
  /** The root certificate (PEM): what clients and servers put in their trust store. */
  readonly certPem: string;
  /** The root certificate (DER). */
  readonly certDer: Buffer;
  /** The subject in RFC 4514 text, e.g. `CN=Rookery Root CA`. */
  readonly subject: string;
  /** SHA-256 of the DER certificate, lower-case hex. */
  readonly thumbprint: string;
  readonly notBefore: number;
  readonly notAfter: number;

  private constructor(cert: x509.X509Certificate, certPem: string) {
    this.certPem = certPem;
    this.certDer = Buffer.from(cert.rawData);
    this.subject = cert.subject;
    this.thumbprint = createHash('sha256').update(this.certDer).digest('hex');
    this.notBefore = cert.notBefore.getTime();
    this.notAfter = cert.notAfter.getTime();
  }

  /**
   * Loads a CA from PEM and checks it: the certificate must be a CA (basicConstraints),
   * be valid now, and match the private key.
   */
  static async fromPem(material: CertificateAuthorityMaterial): Promise<CertificateAuthority> {
    let cert: x509.X509Certificate;
    try {
      cert = new x509.X509Certificate(material.certPem);
    } catch (error) {
      throw new PkiError(
        'CertificateAuthorityInvalid',
        'The CA certificate is not a readable PEM certificate.',
        {},
        error,
      );
    }
    const constraints = cert.getExtension(x509.BasicConstraintsExtension);
    if (constraints === null || !constraints.ca) {
      throw new PkiError(
        'CertificateAuthorityInvalid',
        `The certificate ${cert.subject} is not a CA (basicConstraints cA is not set); supply a CA certificate.`,
      );
    }
    const usage = cert.getExtension(x509.KeyUsagesExtension);
    if (usage !== null && (usage.usages & x509.KeyUsageFlags.keyCertSign) === 0) {
      throw new PkiError(
        'CertificateAuthorityInvalid',
        `The CA certificate ${cert.subject} may not sign certificates (keyUsage lacks keyCertSign).`,
      );
    }
    const now = Date.now();
    if (cert.notAfter.getTime() <= now || cert.notBefore.getTime() > now) {
      throw new PkiError(
        'CertificateAuthorityInvalid',
        `The CA certificate ${cert.subject} is valid from ${cert.notBefore.toISOString()} to ` +
          `${cert.notAfter.toISOString()}, not now; replace ca.crt and ca.key.`,
      );
    }
    let key: SigningKey;
    try {
      key = await importSigningKey(material.keyPem);
    } catch (error) {
      throw new PkiError('CertificateAuthorityInvalid', 'The CA private key cannot be read.', {}, error);
    }
    if (!key.spki.equals(Buffer.from(cert.publicKey.rawData))) {
      throw new PkiError(
        'CertificateAuthorityInvalid',
        `The CA private key does not belong to the certificate ${cert.subject}; supply the matching pair.`,
      );
    }
    const ski = cert.getExtension(x509.SubjectKeyIdentifierExtension);
    const authorityKeyId =
      ski?.keyId ?? (await x509.SubjectKeyIdentifierExtension.create(cert.publicKey)).keyId;
    const ca = new CertificateAuthority(cert, material.certPem);
    signers.set(ca, { key, cert, authorityKeyId });
    return ca;
  }
}

export interface LoadOrCreateOptions {
  /** Common name of a newly generated root. */
  commonName?: string;
}

/**
 * Reads `ca.crt` and `ca.key` from `dir`, or creates a new root there if neither exists
 * (key file mode 0600). If only one of the two exists, that is an error: a supplied CA
 * must come with its key.
 */
export async function loadOrCreateCertificateAuthority(
  dir: string,
  options: LoadOrCreateOptions = {},
): Promise<CertificateAuthority> {
  const certPath = join(dir, CA_CERT_FILE);
  const keyPath = join(dir, CA_KEY_FILE);
  await mkdir(dir, { recursive: true, mode: 0o700 });
  let cert = await readIfExists(certPath);
  let key = await readIfExists(keyPath);
  if (cert === null && key === null) {
    const material = await createCertificateAuthority({
      commonName: options.commonName ?? 'Rookery Root CA',
    });
    // The key goes first: a reader that sees ca.crt can count on ca.key being there.
    if (await createFileExclusive(keyPath, material.keyPem, 0o600)) {
      await createFileExclusive(certPath, material.certPem, 0o644);
    }
    // Whoever won a race, load what is on disk now.
    cert = await waitForFile(certPath);
    key = await readIfExists(keyPath);
  }
  if (cert === null || key === null) {
    const missing = cert === null ? certPath : keyPath;
    throw new PkiError(
      'CertificateAuthorityInvalid',
      `${missing} is missing; supply both ${CA_CERT_FILE} and ${CA_KEY_FILE}, or neither to generate a new root.`,
      { dir },
    );
  }
  return CertificateAuthority.fromPem({ certPem: cert.toString('utf8'), keyPem: key.toString('utf8') });
}

/** A concurrent creator writes ca.key then ca.crt; give it a moment to finish. */
async function waitForFile(path: string): Promise<Buffer | null> {
  for (let attempt = 0; attempt < 50; attempt++) {
    const data = await readIfExists(path);
    if (data !== null) return data;
    await new Promise((resolve) => setTimeout(resolve, 20));
  }
  return null;
}
