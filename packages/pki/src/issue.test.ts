import { createPrivateKey, X509Certificate } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CertificateAuthority as CA,
  type CertificateAuthority,
  createCertificateAuthority,
  issueClientCertificate,
  issueServerCertificate,
  PkiError,
} from './index.js';
import { openssl } from './test-fixtures/openssl.js';
import { x509 } from './x509.js';

let ca: CertificateAuthority;
let dir: string;
beforeAll(async () => {
  ca = await CA.fromPem(await createCertificateAuthority({ commonName: 'Issue Test Root' }));
  dir = await mkdtemp(join(tmpdir(), 'rookery-pki-issue-'));
  await writeFile(join(dir, 'ca.crt'), ca.certPem);
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function opensslVerify(certPem: string, purpose: 'sslclient' | 'sslserver') {
  const file = join(dir, `leaf-${Math.random().toString(36).slice(2)}.pem`);
  await writeFile(file, certPem);
  return openssl(['verify', '-purpose', purpose, '-CAfile', join(dir, 'ca.crt'), file]);
}

describe('issueClientCertificate', () => {
  it('issues a clientAuth certificate whose reported facts match the certificate', async () => {
    const issued = await issueClientCertificate(ca, {
      principalId: 'prn_42',
      tenantId: 'acme',
      kind: 'person',
      name: 'Ada Lovelace',
      validDays: 30,
    });
    const cert = new X509Certificate(issued.certPem);
    expect(cert.subject).toBe('CN=Ada Lovelace');
    expect(cert.issuer).toBe('CN=Issue Test Root');
    expect(cert.keyUsage).toEqual([x509.ExtendedKeyUsage.clientAuth]);
    expect(cert.ca).toBe(false);
    expect(cert.subjectAltName).toBe(
      'URI:urn:rookery:principal:prn_42, URI:urn:rookery:tenant:acme, URI:urn:rookery:kind:person',
    );
    expect(issued.serial).toMatch(/^[0-7][0-9a-f]{31}$/);
    expect(issued.serial).not.toMatch(/^00/);
    expect(issued.serial).toBe(cert.serialNumber.toLowerCase());
    expect(issued.thumbprint).toBe(cert.fingerprint256.replaceAll(':', '').toLowerCase());
    expect(issued.notBefore).toBe(Date.parse(cert.validFrom));
    expect(issued.notAfter).toBe(Date.parse(cert.validTo));
    expect(issued.notAfter - issued.notBefore).toBeGreaterThanOrEqual(30 * 86_400_000);
    expect(issued.notBefore).toBeLessThanOrEqual(Date.now());
    // The key in keyPem is the certificate's key.
    expect(cert.checkPrivateKey(createPrivateKey(issued.keyPem))).toBe(true);
    expect(cert.checkIssued(new X509Certificate(ca.certPem))).toBe(true);

    const verified = await opensslVerify(issued.certPem, 'sslclient');
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    // ...and it is not usable as a server certificate.
    const asServer = await opensslVerify(issued.certPem, 'sslserver');
    expect(asServer.code).not.toBe(0);
  });

  it.each([
    ['rsa-2048', 2048],
    ['rsa-3072', 3072],
  ] as const)(
    'issues a %s key as PKCS#1 (RSA PRIVATE KEY), signed by the ECDSA CA',
    async (keyType, bits) => {
      const issued = await issueClientCertificate(ca, {
        principalId: 'prn_rsa',
        tenantId: 'acme',
        kind: 'program',
        name: 'RavenDB client',
        validDays: 30,
        keyType,
      });
      // The one PEM block the official RavenDB client reads, and nothing else in the file.
      expect(issued.keyPem).toMatch(
        /^-----BEGIN RSA PRIVATE KEY-----\n[A-Za-z0-9+/=\n]+-----END RSA PRIVATE KEY-----\n$/,
      );
      const key = createPrivateKey(issued.keyPem);
      expect(key.asymmetricKeyType).toBe('rsa');
      expect(key.asymmetricKeyDetails?.modulusLength).toBe(bits);
      const cert = new X509Certificate(issued.certPem);
      expect(cert.publicKey.asymmetricKeyType).toBe('rsa');
      expect(cert.checkPrivateKey(key)).toBe(true);
      expect(cert.checkIssued(new X509Certificate(ca.certPem))).toBe(true);
      expect(cert.verify(new X509Certificate(ca.certPem).publicKey)).toBe(true);
      const verified = await opensslVerify(issued.certPem, 'sslclient');
      expect(verified.code, verified.stdout + verified.stderr).toBe(0);
    },
  );

  it('keeps ECDSA P-256 in PKCS#8 as the default key', async () => {
    const options = { principalId: 'p', tenantId: 't', kind: 'program', name: 'n', validDays: 1 } as const;
    for (const issued of [
      await issueClientCertificate(ca, options),
      await issueClientCertificate(ca, { ...options, keyType: 'ecdsa-p256' }),
    ]) {
      expect(issued.keyPem).toMatch(/^-----BEGIN PRIVATE KEY-----\n/);
      const key = createPrivateKey(issued.keyPem);
      expect(key.asymmetricKeyType).toBe('ec');
      expect(key.asymmetricKeyDetails?.namedCurve).toBe('prime256v1');
    }
  });

  it('refuses a key type it does not make', async () => {
    const options = { principalId: 'p', tenantId: 't', kind: 'program', name: 'n', validDays: 1 } as const;
    for (const keyType of ['rsa-1024', 'rsa', 'ed25519', ''] as const) {
      await expect(
        issueClientCertificate(ca, { ...options, keyType: keyType as 'rsa-2048' }),
      ).rejects.toMatchObject({
        code: 'InvalidCertificateRequest',
        message: expect.stringContaining('ecdsa-p256, rsa-2048, rsa-3072'),
      });
    }
  });

  it('gives every certificate its own key and serial', async () => {
    const options = { principalId: 'p', tenantId: 't', kind: 'program', name: 'n', validDays: 1 } as const;
    const issued = await Promise.all(Array.from({ length: 8 }, () => issueClientCertificate(ca, options)));
    expect(new Set(issued.map((i) => i.serial)).size).toBe(8);
    expect(new Set(issued.map((i) => i.keyPem)).size).toBe(8);
    expect(new Set(issued.map((i) => i.thumbprint)).size).toBe(8);
  });

  it('never lets a certificate outlive its CA', async () => {
    const shortCa = await CA.fromPem(await createCertificateAuthority({ commonName: 'Short', validDays: 2 }));
    const issued = await issueClientCertificate(shortCa, {
      principalId: 'p',
      tenantId: null,
      kind: 'program',
      name: 'long',
      validDays: 365,
    });
    expect(issued.notAfter).toBe(shortCa.notAfter);
  });

  it.each([
    ['an empty principal id', { principalId: '' }],
    ['a principal id with a lone surrogate', { principalId: 'a\ud800' }],
    ['a tenant id with capitals', { tenantId: 'Acme' }],
    ['a tenant id with a slash', { tenantId: 'a/b' }],
    ['an unknown kind', { kind: 'robot' }],
    ['an empty name', { name: '' }],
    ['a name longer than 64 characters', { name: 'x'.repeat(65) }],
    ['a name with a newline', { name: 'a\nb' }],
    ['zero days', { validDays: 0 }],
    ['fractional days', { validDays: 1.5 }],
  ])('refuses %s', async (_what, override) => {
    const options = {
      principalId: 'p',
      tenantId: 't',
      kind: 'program',
      name: 'n',
      validDays: 1,
      ...override,
    };
    const error = await issueClientCertificate(ca, options as never).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(PkiError);
    expect((error as PkiError).code).toBe('InvalidCertificateRequest');
  });
});

describe('issueServerCertificate', () => {
  it('puts DNS names and IPv4/IPv6 addresses in SANs of the right types, with serverAuth', async () => {
    const issued = await issueServerCertificate(ca, {
      hosts: ['localhost', '127.0.0.1', '::1'],
      validDays: 7,
    });
    const cert = new X509Certificate(issued.certPem);
    expect(cert.subjectAltName).toBe('DNS:localhost, IP Address:127.0.0.1, IP Address:0:0:0:0:0:0:0:1');
    expect(cert.keyUsage).toEqual([x509.ExtendedKeyUsage.serverAuth]);
    expect(cert.subject).toBe('CN=localhost');
    expect(issued.serial).toBe(cert.serialNumber.toLowerCase());
    const peer = { subject: { CN: 'localhost' }, subjectaltname: cert.subjectAltName } as tls.PeerCertificate;
    for (const host of ['localhost', '127.0.0.1', '::1']) {
      expect(tls.checkServerIdentity(host, peer), host).toBeUndefined();
    }
    expect(tls.checkServerIdentity('example.com', peer)).toBeInstanceOf(Error);
    expect(tls.checkServerIdentity('127.0.0.2', peer)).toBeInstanceOf(Error);

    const verified = await opensslVerify(issued.certPem, 'sslserver');
    expect(verified.code, verified.stdout + verified.stderr).toBe(0);
  });

  it('accepts bracketed IPv6 and upper-case DNS names, and a wildcard', async () => {
    const issued = await issueServerCertificate(ca, {
      hosts: ['DB.Example.COM', '[::1]', '*.example.com'],
      validDays: 1,
    });
    expect(new X509Certificate(issued.certPem).subjectAltName).toBe(
      'DNS:db.example.com, IP Address:0:0:0:0:0:0:0:1, DNS:*.example.com',
    );
  });

  it.each([[[]], [['bad host']], [['exa_mple.com']], [['-leading.example']]])(
    'refuses hosts %j',
    async (hosts) => {
      const error = await issueServerCertificate(ca, { hosts, validDays: 1 }).catch((e: unknown) => e);
      expect((error as PkiError).code).toBe('InvalidCertificateRequest');
    },
  );
});
