import { createPrivateKey, createPublicKey, X509Certificate } from 'node:crypto';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import * as tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import {
  CertificateAuthority,
  createCertificateAuthority,
  type IssuedCertificate,
  issueClientCertificate,
  PkiError,
  toPkcs12,
} from './index.js';
import { openssl } from './test-fixtures/openssl.js';

let ca: CertificateAuthority;
let client: IssuedCertificate;
let dir: string;
beforeAll(async () => {
  ca = await CertificateAuthority.fromPem(await createCertificateAuthority({ commonName: 'P12 Root' }));
  client = await issueClientCertificate(ca, {
    principalId: 'prn_p12',
    tenantId: 'acme',
    kind: 'person',
    name: 'Grace Hopper',
    validDays: 30,
  });
  dir = await mkdtemp(join(tmpdir(), 'rookery-pki-p12-'));
});
afterAll(async () => {
  await rm(dir, { recursive: true, force: true });
});

async function bundle(password: string): Promise<string> {
  const pfx = await toPkcs12({
    certPem: client.certPem,
    keyPem: client.keyPem,
    caPem: ca.certPem,
    password,
    friendlyName: 'Grace Hopper (acme)',
  });
  const file = join(dir, `bundle-${Math.random().toString(36).slice(2)}.p12`);
  await writeFile(file, pfx);
  return file;
}

describe('toPkcs12', () => {
  it.each(['s3cret!', 'pässwörd ✓'])(
    'loads in Node with the password %j and not with another',
    async (password) => {
      const pfx = await toPkcs12({
        certPem: client.certPem,
        keyPem: client.keyPem,
        caPem: ca.certPem,
        password,
        friendlyName: 'node',
      });
      expect(() => tls.createSecureContext({ pfx, passphrase: password })).not.toThrow();
      expect(() => tls.createSecureContext({ pfx, passphrase: `${password}x` })).toThrow();
    },
  );

  it('is read by openssl pkcs12 with the password: modern algorithms, the certificate, the CA, the key', async () => {
    const file = await bundle('openssl pass');
    const info = await openssl(['pkcs12', '-info', '-nokeys', '-in', file, '-passin', 'pass:openssl pass']);
    expect(info.code, info.stderr).toBe(0);
    const report = info.stdout + info.stderr;
    expect(report).toContain('MAC: sha256');
    expect(report).toMatch(/PKCS7 Encrypted data: PBES2, PBKDF2, AES-256-CBC.*PRF hmacWithSHA256/);
    expect(report).toMatch(/Shrouded Keybag: PBES2, PBKDF2, AES-256-CBC.*PRF hmacWithSHA256/);
    expect(report).toContain('friendlyName: Grace Hopper (acme)');
    const certs = [
      ...info.stdout.matchAll(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g),
    ].map((m) => new X509Certificate(m[0]).fingerprint256);
    expect(certs).toEqual([
      new X509Certificate(client.certPem).fingerprint256,
      new X509Certificate(ca.certPem).fingerprint256,
    ]);

    // The key openssl decrypts is the certificate's key.
    const keys = await openssl(['pkcs12', '-nocerts', '-nodes', '-in', file, '-passin', 'pass:openssl pass']);
    expect(keys.code, keys.stderr).toBe(0);
    const keyPem = /-----BEGIN PRIVATE KEY-----[\s\S]+?-----END PRIVATE KEY-----/.exec(keys.stdout)?.[0];
    expect(keyPem).toBeDefined();
    const extracted = createPublicKey(createPrivateKey(keyPem!)).export({ type: 'spki', format: 'der' });
    const original = createPublicKey(client.certPem).export({ type: 'spki', format: 'der' });
    expect(extracted.equals(original)).toBe(true);
  });

  it('is read by openssl with a non-ASCII password', async () => {
    const file = await bundle('pässwörd');
    const info = await openssl(['pkcs12', '-info', '-nokeys', '-in', file, '-passin', 'pass:pässwörd']);
    expect(info.code, info.stderr).toBe(0);
  });

  it('is refused by openssl with a wrong password', async () => {
    const file = await bundle('right');
    const info = await openssl(['pkcs12', '-info', '-nokeys', '-in', file, '-passin', 'pass:wrong']);
    expect(info.code).not.toBe(0);
    expect(info.stdout + info.stderr).toMatch(/mac verify (error|failure)/i);
  });

  it('refuses an empty password and unreadable inputs', async () => {
    const base = { certPem: client.certPem, keyPem: client.keyPem, caPem: ca.certPem, friendlyName: 'x' };
    await expect(toPkcs12({ ...base, password: '' })).rejects.toSatisfy(
      (e) => e instanceof PkiError && e.code === 'InvalidCertificateRequest',
    );
    await expect(toPkcs12({ ...base, password: 'p', certPem: 'junk' })).rejects.toSatisfy(
      (e) => e instanceof PkiError && e.code === 'InvalidCertificate',
    );
    await expect(toPkcs12({ ...base, password: 'p', keyPem: 'junk' })).rejects.toSatisfy(
      (e) => e instanceof PkiError && e.code === 'InvalidCertificate',
    );
  });
});
