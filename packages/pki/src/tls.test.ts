// End to end through real TLS: the server trusts only our CA and demands a client
// certificate; identityOf reads the principal from what the handshake verified.
import { X509Certificate } from 'node:crypto';
import * as tls from 'node:tls';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import {
  CertificateAuthority,
  createCertificateAuthority,
  type IssuedCertificate,
  issueClientCertificate,
  issueServerCertificate,
  toPkcs12,
} from './index.js';
import { connect, startMutualTlsServer, type TestServer } from './test-fixtures/tls.js';

let ca: CertificateAuthority;
let otherCa: CertificateAuthority;
let serverCert: IssuedCertificate;
const servers: TestServer[] = [];

beforeAll(async () => {
  ca = await CertificateAuthority.fromPem(await createCertificateAuthority({ commonName: 'TLS Root' }));
  otherCa = await CertificateAuthority.fromPem(
    await createCertificateAuthority({ commonName: 'Stranger Root' }),
  );
  serverCert = await issueServerCertificate(ca, { hosts: ['localhost', '127.0.0.1', '::1'], validDays: 1 });
});
afterAll(async () => {
  await Promise.all(servers.map((s) => s.close()));
});

/** Connects to `srv` on 127.0.0.1 as localhost, trusting the CA, with the client's credentials. */
function connectTo(srv: TestServer, credentials: Omit<tls.ConnectionOptions, 'host' | 'port'>) {
  return connect({
    host: '127.0.0.1',
    servername: 'localhost',
    port: srv.port,
    ca: [ca.certPem],
    ...credentials,
  });
}

async function server(host = '127.0.0.1'): Promise<TestServer> {
  const started = await startMutualTlsServer({
    certPem: serverCert.certPem,
    keyPem: serverCert.keyPem,
    caPem: ca.certPem,
    host,
  });
  servers.push(started);
  return started;
}

describe('mutual TLS with certificates from the CA', () => {
  it('lets a client with an issued certificate in and names its principal', async () => {
    const srv = await server();
    const client = await issueClientCertificate(ca, {
      principalId: 'prn_tls',
      tenantId: 'acme',
      kind: 'program',
      name: 'tls client',
      validDays: 1,
    });
    const result = await connectTo(srv, {
      cert: client.certPem,
      key: client.keyPem,
    });
    expect(result.error).toBeNull();
    expect(srv.accepted()).toBe(1);
    expect(JSON.parse(result.data)).toEqual({
      principalId: 'prn_tls',
      tenantId: 'acme',
      kind: 'program',
      thumbprint: client.thumbprint,
      serial: client.serial,
      notAfter: client.notAfter,
    });
  });

  it('lets a client in with an RSA certificate (PKCS#1 key) issued by the ECDSA CA', async () => {
    const srv = await server();
    const client = await issueClientCertificate(ca, {
      principalId: 'prn_rsa',
      tenantId: 'acme',
      kind: 'program',
      name: 'rsa client',
      validDays: 1,
      keyType: 'rsa-2048',
    });
    // As the official RavenDB client hands them over with type 'pem': the RSA PRIVATE KEY block as `key`.
    const result = await connectTo(srv, {
      cert: client.certPem,
      key: client.keyPem,
    });
    expect(result.error).toBeNull();
    expect(JSON.parse(result.data)).toMatchObject({ principalId: 'prn_rsa', thumbprint: client.thumbprint });
  });

  it('lets an operator in with tenantId null', async () => {
    const srv = await server();
    const operator = await issueClientCertificate(ca, {
      principalId: 'op',
      tenantId: null,
      kind: 'person',
      name: 'operator',
      validDays: 1,
    });
    const result = await connectTo(srv, {
      cert: operator.certPem,
      key: operator.keyPem,
    });
    expect(JSON.parse(result.data)).toMatchObject({ principalId: 'op', tenantId: null, kind: 'person' });
  });

  it('accepts the client certificate as a PKCS#12 bundle', async () => {
    const srv = await server();
    const client = await issueClientCertificate(ca, {
      principalId: 'prn_p12',
      tenantId: 'acme',
      kind: 'person',
      name: 'p12 client',
      validDays: 1,
    });
    const pfx = await toPkcs12({
      certPem: client.certPem,
      keyPem: client.keyPem,
      caPem: ca.certPem,
      password: 'correct horse',
      friendlyName: 'p12 client',
    });
    const result = await connectTo(srv, {
      pfx,
      passphrase: 'correct horse',
    });
    expect(result.error).toBeNull();
    expect(JSON.parse(result.data)).toMatchObject({ principalId: 'prn_p12', thumbprint: client.thumbprint });
  });

  it('refuses a client whose certificate comes from another CA', async () => {
    const srv = await server();
    const stranger = await issueClientCertificate(otherCa, {
      principalId: 'prn_stranger',
      tenantId: 'acme',
      kind: 'program',
      name: 'stranger',
      validDays: 1,
    });
    const result = await connectTo(srv, {
      cert: stranger.certPem,
      key: stranger.keyPem,
    });
    // With TLS 1.3 the client may believe the handshake finished before the server checks its
    // certificate; what matters is that the server refused it and nothing was served.
    expect(result.data).toBe('');
    await vi.waitFor(() => expect(srv.clientErrors.length).toBe(1));
    expect(srv.accepted()).toBe(0);
  });

  it('refuses a client with no certificate', async () => {
    const srv = await server();
    const result = await connectTo(srv, {});
    expect(result.data).toBe('');
    await vi.waitFor(() => expect(srv.clientErrors.length).toBe(1));
    expect(srv.accepted()).toBe(0);
  });
});

describe('server certificate for localhost, 127.0.0.1 and ::1', () => {
  let client: IssuedCertificate;
  beforeAll(async () => {
    client = await issueClientCertificate(ca, {
      principalId: 'prn_host',
      tenantId: 'acme',
      kind: 'program',
      name: 'host check',
      validDays: 1,
    });
  });

  it.each([
    ['localhost', '127.0.0.1', 'localhost'],
    ['127.0.0.1', '127.0.0.1', undefined],
    ['::1', '::1', undefined],
  ])('verifies when the client asks for %s', async (_name, address, servername) => {
    const srv = await server(address);
    const checked: string[] = [];
    const result = await connect({
      host: address,
      ...(servername === undefined ? {} : { servername }),
      port: srv.port,
      ca: [ca.certPem],
      cert: client.certPem,
      key: client.keyPem,
      checkServerIdentity: (host, cert) => {
        checked.push(host);
        // The default check, on the certificate the server really presented.
        return tls.checkServerIdentity(host, cert);
      },
    });
    expect(result.error).toBeNull();
    expect(checked).toEqual([servername ?? address]);
    expect(JSON.parse(result.data)).toMatchObject({ principalId: 'prn_host' });
  });

  it('fails verification for a name the certificate does not carry', async () => {
    const srv = await server();
    const result = await connect({
      host: '127.0.0.1',
      servername: 'db.example.com',
      port: srv.port,
      ca: [ca.certPem],
      cert: client.certPem,
      key: client.keyPem,
    });
    expect(result.secure).toBe(false);
    expect(result.error?.code).toBe('ERR_TLS_CERT_ALTNAME_INVALID');
  });

  it('fails verification for a client that does not trust the CA', async () => {
    const srv = await server();
    const result = await connect({
      host: '127.0.0.1',
      servername: 'localhost',
      port: srv.port,
      ca: [otherCa.certPem],
      cert: client.certPem,
      key: client.keyPem,
    });
    expect(result.secure).toBe(false);
    expect(result.error?.code).toMatch(
      /SELF_SIGNED_CERT_IN_CHAIN|UNABLE_TO_VERIFY_LEAF_SIGNATURE|UNABLE_TO_GET_ISSUER/,
    );
    expect(new X509Certificate(serverCert.certPem).checkIssued(new X509Certificate(ca.certPem))).toBe(true);
  });
});
