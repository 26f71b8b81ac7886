// Service certificates (a gateway reaching a fleet host): they name the service, never a principal, so the
// public gateway refuses them as a client's and a host tells them apart from a principal's of the same CA.
import { X509Certificate } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CertificateAuthority, createCertificateAuthority } from './ca.js';
import { identityOf } from './identity.js';
import { issueClientCertificate, issueServerCertificate, issueServiceCertificate } from './issue.js';
import { serviceOf } from './service-identity.js';

describe('service certificates', async () => {
  const ca = await CertificateAuthority.fromPem(await createCertificateAuthority({ commonName: 'test' }));

  it('name the service, serve TLS only when given hosts, and are no principal', async () => {
    const gateway = await issueServiceCertificate(ca, { service: 'gateway', validDays: 10 });
    expect(serviceOf(gateway.certPem)).toBe('gateway');
    expect(() => identityOf(gateway.certPem)).toThrow(/not a Rookery certificate/);
    const host = await issueServiceCertificate(ca, {
      service: 'host',
      hosts: ['127.0.0.1', 'h1.internal'],
      validDays: 10,
    });
    expect(serviceOf(host.certPem)).toBe('host');
    const parsed = new X509Certificate(host.certPem);
    expect(parsed.checkHost('h1.internal')).toBe('h1.internal');
    expect(parsed.checkIP('127.0.0.1')).toBe('127.0.0.1');
  });

  it("reads no service from a principal's, a server's or an unreadable certificate", async () => {
    const person = await issueClientCertificate(ca, {
      principalId: 'p1',
      tenantId: 'acme',
      kind: 'person',
      name: 'Ada',
      validDays: 10,
    });
    expect(serviceOf(person.certPem)).toBeNull();
    const server = await issueServerCertificate(ca, { hosts: ['localhost'], validDays: 10 });
    expect(serviceOf(server.certPem)).toBeNull();
    expect(serviceOf('not a certificate')).toBeNull();
  });

  it('refuses a service it does not know', async () => {
    await expect(issueServiceCertificate(ca, { service: 'tenant' as 'host', validDays: 10 })).rejects.toThrow(
      /service must be one of/,
    );
  });
});
