import { webcrypto, X509Certificate } from 'node:crypto';
import fc from 'fast-check';
import { beforeAll, describe, expect, it } from 'vitest';
import { identityFromUris, identityUris } from './identity-encoding.js';
import {
  CertificateAuthority,
  createCertificateAuthority,
  identityOf,
  issueClientCertificate,
  issueServerCertificate,
  PkiError,
} from './index.js';
import { x509 } from './x509.js';

let ca: CertificateAuthority;
beforeAll(async () => {
  ca = await CertificateAuthority.fromPem(await createCertificateAuthority({ commonName: 'Identity Root' }));
});

function expectNotRecognised(cert: Buffer | string): PkiError {
  let caught: unknown;
  try {
    identityOf(cert);
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(PkiError);
  expect((caught as PkiError).code).toBe('CertificateNotRecognised');
  expect((caught as PkiError).status).toBe(401);
  return caught as PkiError;
}

/** A certificate with arbitrary URI names, signed by a throwaway key (identityOf does not verify chains). */
async function certificateWithUris(
  uris: string[],
  eku: string | null = x509.ExtendedKeyUsage.clientAuth,
): Promise<string> {
  const alg = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
  const keys = (await webcrypto.subtle.generateKey(alg, false, [
    'sign',
    'verify',
  ])) as webcrypto.CryptoKeyPair;
  const cert = await x509.X509CertificateGenerator.createSelfSigned({
    name: 'CN=crafted',
    keys,
    signingAlgorithm: alg,
    extensions: [
      ...(eku === null ? [] : [new x509.ExtendedKeyUsageExtension([eku])]),
      new x509.SubjectAlternativeNameExtension(uris.map((value) => ({ type: 'url', value }))),
    ],
  });
  return cert.toString('pem');
}

describe('identityOf', () => {
  it('reads a tenant principal back from DER and from PEM', async () => {
    const issued = await issueClientCertificate(ca, {
      principalId: 'prn_7',
      tenantId: 'acme-corp',
      kind: 'program',
      name: 'ingest job',
      validDays: 10,
    });
    const der = new X509Certificate(issued.certPem).raw;
    const expected = {
      principalId: 'prn_7',
      tenantId: 'acme-corp',
      kind: 'program',
      thumbprint: issued.thumbprint,
      serial: issued.serial,
      notAfter: issued.notAfter,
    };
    expect(identityOf(der)).toEqual(expected);
    expect(identityOf(issued.certPem)).toEqual(expected);
    // A second look at the same certificate gives the same answer.
    expect(identityOf(Buffer.from(der))).toEqual(expected);
  });

  it('round-trips an operator certificate (tenantId null)', async () => {
    const issued = await issueClientCertificate(ca, {
      principalId: 'op-1',
      tenantId: null,
      kind: 'person',
      name: 'Night Operator',
      validDays: 1,
    });
    const identity = identityOf(issued.certPem);
    expect(identity.tenantId).toBeNull();
    expect(identity.principalId).toBe('op-1');
    expect(identity.kind).toBe('person');
    expect(new X509Certificate(issued.certPem).subjectAltName).toContain('URI:urn:rookery:operator');
  });

  it('round-trips any principal id through a real certificate (property)', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.string({ minLength: 1, maxLength: 40, unit: 'grapheme' }),
        fc.option(fc.stringMatching(/^[a-z0-9][a-z0-9-]{0,20}$/), { nil: null }),
        fc.constantFrom('program' as const, 'person' as const),
        async (principalId, tenantId, kind) => {
          const issued = await issueClientCertificate(ca, {
            principalId,
            tenantId,
            kind,
            name: 'p',
            validDays: 1,
          });
          const identity = identityOf(new X509Certificate(issued.certPem).raw);
          expect(identity).toMatchObject({ principalId, tenantId, kind, thumbprint: issued.thumbprint });
        },
      ),
      { numRuns: 40 },
    );
  });

  it('refuses a server certificate (no clientAuth)', async () => {
    const server = await issueServerCertificate(ca, { hosts: ['localhost'], validDays: 1 });
    expectNotRecognised(server.certPem);
  });

  it('refuses the CA certificate and other certificates without a Rookery identity', async () => {
    expectNotRecognised(ca.certPem);
    expectNotRecognised(await certificateWithUris(['https://example.com/']));
  });

  it('refuses unreadable input', () => {
    expectNotRecognised(Buffer.from('not a certificate'));
    expectNotRecognised(Buffer.alloc(0));
    expectNotRecognised('-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n');
  });

  it.each([
    [
      'two principals',
      [
        'urn:rookery:principal:a',
        'urn:rookery:principal:b',
        'urn:rookery:tenant:t',
        'urn:rookery:kind:person',
      ],
    ],
    [
      'tenant and operator',
      ['urn:rookery:principal:a', 'urn:rookery:tenant:t', 'urn:rookery:operator', 'urn:rookery:kind:person'],
    ],
    ['no tenant', ['urn:rookery:principal:a', 'urn:rookery:kind:person']],
    ['no kind', ['urn:rookery:principal:a', 'urn:rookery:tenant:t']],
    ['an unknown kind', ['urn:rookery:principal:a', 'urn:rookery:tenant:t', 'urn:rookery:kind:robot']],
    [
      'an unknown rookery name',
      [
        'urn:rookery:principal:a',
        'urn:rookery:tenant:t',
        'urn:rookery:kind:person',
        'urn:rookery:role:admin',
      ],
    ],
    ['a non-canonical id', ['urn:rookery:principal:%61', 'urn:rookery:tenant:t', 'urn:rookery:kind:person']],
  ])('refuses a certificate with %s', async (_what, uris) => {
    expectNotRecognised(await certificateWithUris(uris));
  });

  it('reads crafted-but-well-formed identities, ignoring foreign URIs', async () => {
    const pem = await certificateWithUris([
      'https://example.com/a, URI:urn:rookery:principal:evil',
      'urn:rookery:principal:good',
      'urn:rookery:tenant:t',
      'urn:rookery:kind:program',
    ]);
    expect(identityOf(pem)).toMatchObject({ principalId: 'good', tenantId: 't', kind: 'program' });
  });

  it('refuses a crafted identity when the extended key usage is not clientAuth, or absent', async () => {
    const pem = await certificateWithUris(
      ['urn:rookery:principal:a', 'urn:rookery:tenant:t', 'urn:rookery:kind:person'],
      x509.ExtendedKeyUsage.serverAuth,
    );
    expectNotRecognised(pem);
    const noEku = await certificateWithUris(
      ['urn:rookery:principal:a', 'urn:rookery:tenant:t', 'urn:rookery:kind:person'],
      null,
    );
    expectNotRecognised(noEku);
  });
});

describe('identity URIs', () => {
  it('encode and decode any identity exactly (property)', () => {
    fc.assert(
      fc.property(
        fc.string({ minLength: 1, unit: 'binary' }),
        fc.option(fc.string({ minLength: 1, unit: 'binary' }), { nil: null }),
        fc.constantFrom('program' as const, 'person' as const),
        (principalId, tenantId, kind) => {
          const uris = identityUris({ principalId, tenantId, kind });
          expect(identityFromUris(uris)).toEqual({ principalId, tenantId, kind });
          expect(identityFromUris([...uris].reverse())).toEqual({ principalId, tenantId, kind });
        },
      ),
    );
  });
});
