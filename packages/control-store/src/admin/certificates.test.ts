import { execFileSync } from 'node:child_process';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import fs from 'node:fs';
import path from 'node:path';
import { identityOf } from '@rookery/pki';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type EmbeddedControl, openEmbeddedControl } from '../test-fixtures/embedded.js';
import { issuePrincipalCertificate, requireCertificate, revokePrincipalCertificate } from './certificates.js';

let control: EmbeddedControl;
beforeEach(async () => {
  control = await openEmbeddedControl();
  await control.store.createTenant({ id: 'acme', name: 'Acme' });
});
afterEach(async () => control.close());

const person = () =>
  control.store.createPrincipal({
    tenantId: 'acme',
    kind: 'person',
    name: 'Ada',
    role: { kind: 'tenant-admin' },
  });

describe('issuePrincipalCertificate', () => {
  it('issues a certificate naming the principal, signed by the CA, and records it', async () => {
    const principal = await person();
    const issued = await issuePrincipalCertificate(control.store, control.ca, {
      principalId: principal.id,
      validDays: 7,
    });
    const identity = identityOf(issued.certPem);
    expect(identity).toMatchObject({ principalId: principal.id, tenantId: 'acme', kind: 'person' });
    const cert = new X509Certificate(issued.certPem);
    expect(cert.verify(new X509Certificate(control.ca.certPem).publicKey)).toBe(true);
    expect(cert.checkPrivateKey(createPrivateKey(issued.keyPem))).toBe(true);
    expect(issued.record.notAfter - issued.record.notBefore).toBeLessThanOrEqual(7 * 86_400_000 + 5 * 60_000);
    expect(await control.store.getCertificateByThumbprint(identity.thumbprint)).toEqual(issued.record);
    expect(issued.record).toMatchObject({ principalId: principal.id, revokedAt: null, pem: issued.certPem });
    expect(issued.pkcs12).toBeNull();
  });

  it('bundles a PKCS#12 file that openssl opens with the password', async () => {
    const principal = await person();
    const issued = await issuePrincipalCertificate(control.store, control.ca, {
      principalId: principal.id,
      pkcs12Password: 'correct horse',
    });
    const file = path.join(control.dataDir, 'ada.p12');
    fs.writeFileSync(file, issued.pkcs12!);
    const text = execFileSync('openssl', ['pkcs12', '-in', file, '-nodes', '-passin', 'pass:correct horse'], {
      encoding: 'utf8',
    });
    expect(text).toContain(issued.certPem.trim().split('\n')[1]);
    expect(text).toContain('BEGIN PRIVATE KEY');
    expect(() =>
      execFileSync('openssl', ['pkcs12', '-in', file, '-nodes', '-passin', 'pass:wrong'], {
        stdio: 'ignore',
      }),
    ).toThrow();
  });

  it('refuses unknown principals and out-of-range validity, recording nothing', async () => {
    await expect(
      issuePrincipalCertificate(control.store, control.ca, { principalId: 'nobody' }),
    ).rejects.toMatchObject({ code: 'PrincipalNotFound' });
    const principal = await person();
    await expect(
      issuePrincipalCertificate(control.store, control.ca, { principalId: principal.id, validDays: 0 }),
    ).rejects.toMatchObject({ code: 'InvalidRequest' });
    expect(await control.store.listCertificates(principal.id)).toEqual([]);
  });
});

describe('revokePrincipalCertificate', () => {
  it('revokes once, keeps the first time, and accepts any case of the serial', async () => {
    const principal = await person();
    const { record } = await issuePrincipalCertificate(control.store, control.ca, {
      principalId: principal.id,
    });
    const first = await revokePrincipalCertificate(control.store, record.serial.toUpperCase(), 1_000);
    expect(first).toMatchObject({
      revokedNow: true,
      certificate: { serial: record.serial, revokedAt: 1_000 },
    });
    const again = await revokePrincipalCertificate(control.store, record.serial, 2_000);
    expect(again).toMatchObject({ revokedNow: false, certificate: { revokedAt: 1_000 } });
    expect((await control.store.listRevokedSince(0)).map((r) => r.serial)).toEqual([record.serial]);
  });

  it('says which serial is unknown, and rejects text that is not a serial', async () => {
    await expect(revokePrincipalCertificate(control.store, 'abc123')).rejects.toMatchObject({
      code: 'CertificateNotFound',
    });
    await expect(requireCertificate(control.store, 'not-hex')).rejects.toMatchObject({
      code: 'InvalidRequest',
    });
  });
});
