import { createPrivateKey, X509Certificate } from 'node:crypto';
import type { Principal } from '@rookery/control-store';
import { identityOf, openSecret } from '@rookery/pki';
import { generate, verify } from 'otplib';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { type ControlApiHarness, startControlApi } from '../test-fixtures/control-api.js';

let h: ControlApiHarness;
let operator: Principal;
let adminA: Principal;
let adminB: Principal;
let readerA: Principal;

beforeEach(async () => {
  h = await startControlApi();
  await h.store.createTenant({ id: 'acme', name: 'Acme' });
  await h.store.createTenant({ id: 'globex', name: 'Globex' });
  operator = await h.store.createPrincipal({
    tenantId: null,
    kind: 'program',
    name: 'ops',
    role: { kind: 'operator' },
  });
  adminA = await h.store.createPrincipal({
    tenantId: 'acme',
    kind: 'program',
    name: 'acme-admin',
    role: { kind: 'tenant-admin' },
  });
  adminB = await h.store.createPrincipal({
    tenantId: 'globex',
    kind: 'program',
    name: 'globex-admin',
    role: { kind: 'tenant-admin' },
  });
  readerA = await h.store.createPrincipal({
    tenantId: 'acme',
    kind: 'program',
    name: 'acme-reader',
    role: { kind: 'database', access: { shop: 'read-only' } },
  });
});
afterEach(async () => h.close());

/** A JSON body for methods that take one: the checks under test come before any body is read. */
const someBody = (method: string) => (method === 'GET' || method === 'DELETE' ? undefined : {});

/** A route of the API with its parameters filled in. */
function concrete(url: string, values: { tenantId: string; principalId: string; serial: string }): string {
  return url
    .replace(':tenantId', values.tenantId)
    .replace(':principalId', values.principalId)
    .replace(':serial', values.serial);
}

describe('tenants (operators)', () => {
  it('creates a tenant with its first admin, reads, lists, changes the quota and deletes it', async () => {
    const created = await h.call(operator, 'POST', '/control/tenants', {
      id: 'initech',
      name: 'Initech',
      quota: { requestsPerSecond: 5 },
      admin: { name: 'bill', kind: 'person' },
    });
    expect(created.status).toBe(201);
    expect(created.json).toMatchObject({
      tenant: { id: 'initech', name: 'Initech', quota: { requestsPerSecond: 5 } },
      admin: { tenantId: 'initech', name: 'bill', kind: 'person', role: { kind: 'tenant-admin' } },
    });
    const listed = await h.call(operator, 'GET', '/control/tenants');
    expect((listed.json.tenants as { id: string }[]).map((t) => t.id)).toEqual(['acme', 'globex', 'initech']);
    expect((await h.call(operator, 'GET', '/control/tenants/initech')).json).toMatchObject({ id: 'initech' });

    const patched = await h.call(operator, 'PATCH', '/control/tenants/initech/quota', { storageBytes: 10 });
    expect(patched.json).toMatchObject({ quota: { requestsPerSecond: 5, storageBytes: 10 } });
    expect((await h.store.getTenant('initech'))?.quota.storageBytes).toBe(10);

    expect((await h.call(operator, 'DELETE', '/control/tenants/initech')).status).toBe(202);
    const gone = await h.call(operator, 'GET', '/control/tenants/initech');
    expect([gone.status, gone.json.code]).toEqual([404, 'TenantNotFound']);
  });

  it('answers bad input with problem+json and a stable code', async () => {
    const unknownField = await h.call(operator, 'POST', '/control/tenants', {
      id: 'x',
      name: 'X',
      plan: 'gold',
    });
    expect([unknownField.status, unknownField.json.code]).toEqual([400, 'InvalidRequest']);
    expect(unknownField.headers.get('content-type')).toContain('application/problem+json');
    const badId = await h.call(operator, 'POST', '/control/tenants', { id: 'Not Valid', name: 'X' });
    expect([badId.status, badId.json.code]).toEqual([400, 'InvalidRequest']);
    const taken = await h.call(operator, 'POST', '/control/tenants', { id: 'acme', name: 'Again' });
    expect([taken.status, taken.json.code]).toEqual([409, 'TenantAlreadyExists']);
    const emptyQuota = await h.call(operator, 'PATCH', '/control/tenants/acme/quota', {});
    expect([emptyQuota.status, emptyQuota.json.code]).toEqual([400, 'InvalidRequest']);
    const notJson = await h.call(operator, 'POST', '/control/tenants', '{"id": ');
    expect([notJson.status, notJson.json.code]).toEqual([400, 'InvalidJson']);
    const noRoute = await h.call(operator, 'GET', '/control/nothing-here');
    expect([noRoute.status, noRoute.json.code]).toEqual([404, 'RouteNotFound']);
  });

  it('refuses tenant admins, even for their own tenant', async () => {
    for (const [method, path] of [
      ['GET', '/control/tenants'],
      ['POST', '/control/tenants'],
      ['GET', '/control/tenants/acme'],
      ['DELETE', '/control/tenants/acme'],
      ['PATCH', '/control/tenants/acme/quota'],
    ] as const) {
      const reply = await h.call(adminA, method, path, someBody(method));
      expect({ route: `${method} ${path}`, status: reply.status, code: reply.json.code }).toEqual({
        route: `${method} ${path}`,
        status: 403,
        code: 'Forbidden',
      });
    }
    expect(await h.store.getTenant('acme')).not.toBeNull();
  });
});

describe('principals and certificates (tenant admins)', () => {
  it('creates a program principal, issues it a certificate, lists and revokes it', async () => {
    const created = await h.call(adminA, 'POST', '/control/principals', {
      name: 'ci',
      kind: 'program',
      role: { kind: 'database', access: { shop: 'read-write' } },
    });
    expect(created.status).toBe(201);
    const ci = created.json as unknown as Principal;
    expect(ci).toMatchObject({ tenantId: 'acme', name: 'ci', role: { access: { shop: 'read-write' } } });
    const listed = await h.call(adminA, 'GET', '/control/principals');
    expect((listed.json.principals as Principal[]).map((p) => p.name)).toContain('ci');

    const issued = await h.call(adminA, 'POST', `/control/principals/${ci.id}/certificates`, {
      validDays: 7,
      pkcs12Password: 'pw',
    });
    expect(issued.status).toBe(201);
    expect(issued.headers.get('cache-control')).toBe('no-store');
    const { certificatePem, privateKeyPem, caPem, pkcs12Base64, certificate } = issued.json as {
      certificatePem: string;
      privateKeyPem: string;
      caPem: string;
      pkcs12Base64: string;
      certificate: { serial: string; revokedAt: number | null };
    };
    expect(identityOf(certificatePem)).toMatchObject({
      principalId: ci.id,
      tenantId: 'acme',
      kind: 'program',
    });
    const cert = new X509Certificate(certificatePem);
    expect(cert.verify(new X509Certificate(caPem).publicKey)).toBe(true);
    expect(cert.checkPrivateKey(createPrivateKey(privateKeyPem))).toBe(true);
    expect(Buffer.from(pkcs12Base64, 'base64')[0]).toBe(0x30); // a DER SEQUENCE
    expect(certificate.revokedAt).toBeNull();

    const certificates = await h.call(adminA, 'GET', `/control/principals/${ci.id}/certificates`);
    expect((certificates.json.certificates as { serial: string }[]).map((c) => c.serial)).toEqual([
      certificate.serial,
    ]);
    const revoked = await h.call(
      adminA,
      'POST',
      `/control/certificates/${certificate.serial.toUpperCase()}/revoke`,
    );
    expect(revoked.json).toMatchObject({ revokedNow: true, certificate: { serial: certificate.serial } });
    const again = await h.call(adminA, 'POST', `/control/certificates/${certificate.serial}/revoke`);
    expect(again.json).toMatchObject({ revokedNow: false });
    expect((await h.store.getCertificateBySerial(certificate.serial))?.revokedAt).not.toBeNull();

    expect((await h.call(adminA, 'DELETE', `/control/principals/${ci.id}`)).status).toBe(204);
    expect(await h.store.getPrincipal(ci.id)).toBeNull();
  });

  it('issues a certificate with the key type asked for: RSA as PKCS#1 for the RavenDB client', async () => {
    const rsa = await h.call(adminA, 'POST', `/control/principals/${readerA.id}/certificates`, {
      keyType: 'rsa-2048',
      pkcs12Password: 'pw',
    });
    expect(rsa.status).toBe(201);
    const { certificatePem, privateKeyPem, pkcs12Base64 } = rsa.json as {
      certificatePem: string;
      privateKeyPem: string;
      pkcs12Base64: string;
    };
    expect(privateKeyPem).toMatch(/^-----BEGIN RSA PRIVATE KEY-----\n/);
    expect(createPrivateKey(privateKeyPem).asymmetricKeyDetails?.modulusLength).toBe(2048);
    expect(new X509Certificate(certificatePem).checkPrivateKey(createPrivateKey(privateKeyPem))).toBe(true);
    expect(Buffer.from(pkcs12Base64, 'base64')[0]).toBe(0x30);
    const ecdsa = await h.call(adminA, 'POST', `/control/principals/${readerA.id}/certificates`, {});
    expect((ecdsa.json.privateKeyPem as string).startsWith('-----BEGIN PRIVATE KEY-----\n')).toBe(true);
    expect(createPrivateKey(ecdsa.json.privateKeyPem as string).asymmetricKeyType).toBe('ec');
    const before = (await h.store.listCertificates(readerA.id)).length;
    for (const keyType of ['rsa-1024', 'RSA-2048', 'rsa', 7]) {
      const refused = await h.call(adminA, 'POST', `/control/principals/${readerA.id}/certificates`, {
        keyType,
      });
      expect([refused.status, refused.json.code]).toEqual([400, 'InvalidRequest']);
      expect(refused.json.detail).toContain('ecdsa-p256');
    }
    expect(await h.store.listCertificates(readerA.id)).toHaveLength(before);
  });

  it('never lets a tenant admin mint an operator, and checks the role it is given', async () => {
    const operatorRole = await h.call(adminA, 'POST', '/control/principals', {
      name: 'sneaky',
      kind: 'program',
      role: { kind: 'operator' },
    });
    expect([operatorRole.status, operatorRole.json.code]).toEqual([400, 'InvalidRequest']);
    const badAccess = await h.call(adminA, 'POST', '/control/principals', {
      name: 'x',
      kind: 'program',
      role: { kind: 'database', access: { shop: 'everything' } },
    });
    expect([badAccess.status, badAccess.json.code]).toEqual([400, 'InvalidRequest']);
    expect((await h.store.listPrincipals(null)).map((p) => p.name)).toEqual(['ops']);
    const badValidity = await h.call(adminA, 'POST', `/control/principals/${readerA.id}/certificates`, {
      validDays: 0,
    });
    expect([badValidity.status, badValidity.json.code]).toEqual([400, 'InvalidRequest']);
    expect(await h.store.listCertificates(readerA.id)).toEqual([]);
  });

  it('enrols a person in TOTP (the otpauth URI works) and resets it', async () => {
    const ada = (
      await h.call(adminA, 'POST', '/control/principals', {
        name: 'Ada',
        kind: 'person',
        role: { kind: 'tenant-admin' },
      })
    ).json as unknown as Principal;
    const enrolled = await h.call(adminA, 'POST', `/control/principals/${ada.id}/totp`);
    expect(enrolled.status).toBe(201);
    expect(enrolled.headers.get('cache-control')).toBe('no-store');
    const secret = new URL(String(enrolled.json.uri)).searchParams.get('secret')!;
    const sealed = (await h.store.getTotpSecret(ada.id))!;
    const opened = openSecret(h.masterKey, sealed, ada.id);
    expect((await verify({ secret: opened, token: await generate({ secret }) })).valid).toBe(true);

    const twice = await h.call(adminA, 'POST', `/control/principals/${ada.id}/totp`);
    expect([twice.status, twice.json.code]).toEqual([409, 'TwoFactorAlreadyEnrolled']);
    const program = await h.call(adminA, 'POST', `/control/principals/${readerA.id}/totp`);
    expect([program.status, program.json.code]).toEqual([400, 'InvalidRequest']);

    const reset = await h.call(adminA, 'DELETE', `/control/principals/${ada.id}/totp`);
    expect(reset.json).toMatchObject({ hadAuthenticator: true });
    expect(await h.store.getTotpSecret(ada.id)).toBeNull();
  });

  it("lists the tenant's recorded databases", async () => {
    await h.store.createDatabase('acme', 'shop');
    await h.store.createDatabase('globex', 'ledger');
    const listed = await h.call(adminA, 'GET', '/control/databases');
    expect((listed.json.databases as { name: string }[]).map((d) => d.name)).toEqual(['shop']);
  });
});

describe('scope', () => {
  it("answers 403 to a tenant admin on every route of another tenant, and 404 for another tenant's objects", async () => {
    const bIssued = await h.call(adminB, 'POST', `/control/principals/${adminB.id}/certificates`);
    const bSerial = (bIssued.json.certificate as { serial: string }).serial;
    const values = { tenantId: 'globex', principalId: adminB.id, serial: bSerial };

    const scopedToB = h.api.routes.filter((r) => r.url.startsWith('/control/tenants'));
    expect(scopedToB.length).toBeGreaterThan(10);
    for (const route of scopedToB) {
      if (!route.url.includes(':tenantId')) continue; // the tenant list and creation: operator-only, below
      const reply = await h.call(adminA, route.method, concrete(route.url, values), someBody(route.method));
      expect({ route: `${route.method} ${route.url}`, status: reply.status, code: reply.json.code }).toEqual({
        route: `${route.method} ${route.url}`,
        status: 403,
        code: 'Forbidden',
      });
    }
    // Through its own scope, B's principal and certificate read exactly like ones that do not exist.
    const own = h.api.routes.filter(
      (r) =>
        !r.url.startsWith('/control/tenants') &&
        (r.url.includes(':principalId') || r.url.includes(':serial')),
    );
    expect(own.length).toBe(6);
    for (const route of own) {
      const theirs = await h.call(adminA, route.method, concrete(route.url, values), someBody(route.method));
      const missing = await h.call(
        adminA,
        route.method,
        concrete(route.url, { ...values, principalId: 'no-such-id', serial: 'abcdef' }),
        someBody(route.method),
      );
      const code = route.url.includes(':serial') ? 'CertificateNotFound' : 'PrincipalNotFound';
      expect([route.url, theirs.status, theirs.json.code]).toEqual([route.url, 404, code]);
      expect(String(theirs.json.detail).replace(adminB.id, '?').replace(bSerial, '?')).toBe(
        String(missing.json.detail).replace('no-such-id', '?').replace('abcdef', '?'),
      );
    }
    // Nothing of B changed.
    expect(await h.store.getPrincipal(adminB.id)).toEqual(adminB);
    expect((await h.store.getCertificateBySerial(bSerial))?.revokedAt).toBeNull();
    expect(await h.store.listCertificates(adminB.id)).toHaveLength(1);
  });

  it('answers 403 to a per-database principal on every route', async () => {
    const values = { tenantId: 'acme', principalId: adminA.id, serial: 'abcdef' };
    for (const route of h.api.routes) {
      const reply = await h.call(readerA, route.method, concrete(route.url, values), someBody(route.method));
      expect({ route: `${route.method} ${route.url}`, status: reply.status }).toEqual({
        route: `${route.method} ${route.url}`,
        status: 403,
      });
    }
    expect(await h.store.getPrincipal(adminA.id)).not.toBeNull();
  });

  it('makes operators name the tenant, and lets a tenant admin name its own', async () => {
    const unnamed = await h.call(operator, 'GET', '/control/principals');
    expect([unnamed.status, unnamed.json.code]).toEqual([400, 'TenantRequired']);
    const named = await h.call(operator, 'GET', '/control/tenants/globex/principals');
    expect((named.json.principals as Principal[]).map((p) => p.name)).toEqual(['globex-admin']);
    const missing = await h.call(operator, 'GET', '/control/tenants/nobody/principals');
    expect([missing.status, missing.json.code]).toEqual([404, 'TenantNotFound']);
    const ownNamed = await h.call(adminA, 'GET', '/control/tenants/acme/principals');
    expect(ownNamed.status).toBe(200);
    // An operator acts on a principal only through the tenant it belongs to.
    const crossed = await h.call(operator, 'DELETE', `/control/tenants/acme/principals/${adminB.id}`);
    expect([crossed.status, crossed.json.code]).toEqual([404, 'PrincipalNotFound']);
    expect(await h.store.getPrincipal(adminB.id)).not.toBeNull();
  });
});
