import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import {
  CertificateAuthority,
  createCertificateAuthority,
  identityOf,
  issueClientCertificate,
  issueServerCertificate,
  loadOrCreateCertificateAuthority,
  PkiError,
} from './index.js';
import { openssl } from './test-fixtures/openssl.js';
import { x509 } from './x509.js';

const YEAR_MS = 365 * 86_400_000;

let dir: string;
beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), 'rookery-pki-ca-'));
});
afterEach(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function expectPkiError(promise: Promise<unknown>, code: string): Promise<PkiError> {
  const error = await promise.then(
    () => null,
    (e: unknown) => e,
  );
  expect(error).toBeInstanceOf(PkiError);
  expect((error as PkiError).code).toBe(code);
  return error as PkiError;
}

describe('createCertificateAuthority', () => {
  it('creates a self-signed 10-year root with CA basic constraints and keyCertSign/cRLSign', async () => {
    const before = Date.now();
    const { certPem, keyPem } = await createCertificateAuthority({ commonName: 'Test Root' });
    const cert = new X509Certificate(certPem);
    expect(cert.ca).toBe(true);
    expect(cert.subject).toBe('CN=Test Root');
    expect(cert.issuer).toBe('CN=Test Root');
    expect(cert.verify(cert.publicKey)).toBe(true);
    const validTo = Date.parse(cert.validTo);
    expect(validTo).toBeGreaterThan(before + 9.9 * YEAR_MS);
    expect(validTo).toBeLessThan(before + 10.1 * YEAR_MS);
    expect(keyPem).toContain('BEGIN PRIVATE KEY');

    const parsed = new x509.X509Certificate(certPem);
    const constraints = parsed.getExtension(x509.BasicConstraintsExtension);
    expect(constraints?.ca).toBe(true);
    expect(constraints?.critical).toBe(true);
    const usage = parsed.getExtension(x509.KeyUsagesExtension);
    expect(usage?.critical).toBe(true);
    expect(usage?.usages).toBe(x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign);

    // OpenSSL agrees it is a usable root.
    await writeFile(join(dir, 'root.pem'), certPem);
    const verified = await openssl(['verify', '-CAfile', join(dir, 'root.pem'), join(dir, 'root.pem')]);
    expect(verified.stdout).toContain('OK');
  });

  it('refuses an empty common name', async () => {
    await expectPkiError(createCertificateAuthority({ commonName: '  ' }), 'InvalidCertificateRequest');
  });
});

describe('CertificateAuthority.fromPem', () => {
  it('exposes the root certificate and its facts', async () => {
    const material = await createCertificateAuthority({ commonName: 'Facts' });
    const ca = await CertificateAuthority.fromPem(material);
    expect(ca.certPem).toBe(material.certPem);
    expect(ca.subject).toBe('CN=Facts');
    const native = new X509Certificate(material.certPem);
    expect(ca.certDer.equals(native.raw)).toBe(true);
    expect(ca.thumbprint).toBe(native.fingerprint256.replaceAll(':', '').toLowerCase());
    expect(ca.notAfter).toBe(Date.parse(native.validTo));
    // The key is not part of the public object.
    expect(JSON.stringify(ca)).not.toContain('PRIVATE KEY');
  });

  it('refuses a key that does not belong to the certificate', async () => {
    const a = await createCertificateAuthority({ commonName: 'A' });
    const b = await createCertificateAuthority({ commonName: 'B' });
    const error = await expectPkiError(
      CertificateAuthority.fromPem({ certPem: a.certPem, keyPem: b.keyPem }),
      'CertificateAuthorityInvalid',
    );
    expect(error.message).toMatch(/does not belong/);
  });

  it('refuses a certificate that is not a CA', async () => {
    const ca = await CertificateAuthority.fromPem(await createCertificateAuthority({ commonName: 'Root' }));
    const leaf = await issueServerCertificate(ca, { hosts: ['localhost'], validDays: 1 });
    await expectPkiError(
      CertificateAuthority.fromPem({ certPem: leaf.certPem, keyPem: leaf.keyPem }),
      'CertificateAuthorityInvalid',
    );
  });

  it('refuses unreadable material', async () => {
    const good = await createCertificateAuthority({ commonName: 'Root' });
    await expectPkiError(
      CertificateAuthority.fromPem({ certPem: 'not a certificate', keyPem: good.keyPem }),
      'CertificateAuthorityInvalid',
    );
    await expectPkiError(
      CertificateAuthority.fromPem({ certPem: good.certPem, keyPem: 'not a key' }),
      'CertificateAuthorityInvalid',
    );
  });
});

describe('loadOrCreateCertificateAuthority', () => {
  it('creates ca.crt and ca.key (0600) on first start, then reloads the same root', async () => {
    const first = await loadOrCreateCertificateAuthority(dir, { commonName: 'Embedded Root' });
    expect(first.subject).toBe('CN=Embedded Root');
    expect((await stat(join(dir, 'ca.key'))).mode & 0o777).toBe(0o600);
    expect(await readFile(join(dir, 'ca.crt'), 'utf8')).toBe(first.certPem);

    const second = await loadOrCreateCertificateAuthority(dir);
    expect(second.certPem).toBe(first.certPem);
    expect(second.thumbprint).toBe(first.thumbprint);
    // The reloaded CA signs with the same key: what it issues verifies against the first root.
    const leaf = await issueClientCertificate(second, {
      principalId: 'p1',
      tenantId: 't1',
      kind: 'program',
      name: 'reload',
      validDays: 1,
    });
    expect(new X509Certificate(leaf.certPem).verify(new X509Certificate(first.certPem).publicKey)).toBe(true);
  });

  it('gives every concurrent starter the same root', async () => {
    const cas = await Promise.all(Array.from({ length: 6 }, () => loadOrCreateCertificateAuthority(dir)));
    expect(new Set(cas.map((ca) => ca.thumbprint)).size).toBe(1);
    expect(await readFile(join(dir, 'ca.crt'), 'utf8')).toBe(cas[0]!.certPem);
  });

  it('uses a supplied root dropped into the directory', async () => {
    const supplied = await createCertificateAuthority({ commonName: 'Supplied Root' });
    await writeFile(join(dir, 'ca.crt'), supplied.certPem);
    await writeFile(join(dir, 'ca.key'), supplied.keyPem, { mode: 0o600 });
    const ca = await loadOrCreateCertificateAuthority(dir);
    expect(ca.certPem).toBe(supplied.certPem);
  });

  it('uses a supplied RSA root made by openssl, and what it issues verifies', async () => {
    const made = await openssl([
      'req',
      '-x509',
      '-newkey',
      'rsa:2048',
      '-nodes',
      '-keyout',
      join(dir, 'ca.key'),
      '-out',
      join(dir, 'ca.crt'),
      '-subj',
      '/O=Example Corp/CN=Example Root',
      '-days',
      '30',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,keyCertSign,cRLSign',
    ]);
    expect(made.code, made.stderr).toBe(0);
    const ca = await loadOrCreateCertificateAuthority(dir);
    expect(ca.subject).toContain('CN=Example Root');
    const client = await issueClientCertificate(ca, {
      principalId: 'p-rsa',
      tenantId: 'acme',
      kind: 'program',
      name: 'rsa-signed',
      validDays: 1,
    });
    const server = await issueServerCertificate(ca, { hosts: ['localhost'], validDays: 1 });
    await writeFile(join(dir, 'client.pem'), client.certPem);
    await writeFile(join(dir, 'server.pem'), server.certPem);
    const clientCheck = await openssl([
      'verify',
      '-purpose',
      'sslclient',
      '-CAfile',
      join(dir, 'ca.crt'),
      join(dir, 'client.pem'),
    ]);
    expect(clientCheck.code, clientCheck.stdout + clientCheck.stderr).toBe(0);
    const serverCheck = await openssl([
      'verify',
      '-purpose',
      'sslserver',
      '-CAfile',
      join(dir, 'ca.crt'),
      join(dir, 'server.pem'),
    ]);
    expect(serverCheck.code, serverCheck.stdout + serverCheck.stderr).toBe(0);
    expect(identityOf(client.certPem).principalId).toBe('p-rsa');
  });

  it('refuses a certificate without its key, and a key without its certificate', async () => {
    const supplied = await createCertificateAuthority({ commonName: 'Half' });
    await writeFile(join(dir, 'ca.crt'), supplied.certPem);
    const error = await expectPkiError(loadOrCreateCertificateAuthority(dir), 'CertificateAuthorityInvalid');
    expect(error.message).toContain('ca.key');

    const other = await mkdtemp(join(tmpdir(), 'rookery-pki-ca-'));
    try {
      await writeFile(join(other, 'ca.key'), supplied.keyPem, { mode: 0o600 });
      await expectPkiError(loadOrCreateCertificateAuthority(other), 'CertificateAuthorityInvalid');
    } finally {
      await rm(other, { recursive: true, force: true });
    }
  });
});

describe('CertificateAuthority.fromPem with openssl-made roots', () => {
  it('refuses a root whose keyUsage does not allow signing certificates', async () => {
    const made = await openssl([
      'req',
      '-x509',
      '-newkey',
      'ec',
      '-pkeyopt',
      'ec_paramgen_curve:P-256',
      '-nodes',
      '-keyout',
      join(dir, 'ca.key'),
      '-out',
      join(dir, 'ca.crt'),
      '-subj',
      '/CN=No Signing',
      '-days',
      '30',
      '-addext',
      'basicConstraints=critical,CA:TRUE',
      '-addext',
      'keyUsage=critical,digitalSignature',
    ]);
    expect(made.code, made.stderr).toBe(0);
    const error = await expectPkiError(loadOrCreateCertificateAuthority(dir), 'CertificateAuthorityInvalid');
    expect(error.message).toContain('keyCertSign');
  });
});
