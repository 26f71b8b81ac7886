// PKCS#12 (.p12/.pfx) bundles of a certificate, its key and the CA, for people who import
// their certificate into a browser or OS keychain and for tools that take one file. Built
// with PKI.js (pkijs): it writes the modern profile OpenSSL 3 itself defaults to, i.e.
// PBES2 (PBKDF2-HMAC-SHA-256 + AES-256-CBC) for the key bag and the certificate bags, and
// an HMAC-SHA-256 integrity MAC. Crypto runs on Node's native WebCrypto.
import { createHash, createPrivateKey, webcrypto, X509Certificate } from 'node:crypto';
import * as asn1js from 'asn1js';
import * as pkijs from 'pkijs';
import { PkiError } from './errors.js';

pkijs.setEngine(
  'node',
  new pkijs.CryptoEngine({
    name: 'node',
    crypto: webcrypto as unknown as pkijs.CryptoEngineParameters['crypto'],
  }),
);

const OID_KEY_BAG_SHROUDED = '1.2.840.113549.1.12.10.1.2';
const OID_CERT_BAG = '1.2.840.113549.1.12.10.1.3';
const OID_FRIENDLY_NAME = '1.2.840.113549.1.9.20';
const OID_LOCAL_KEY_ID = '1.2.840.113549.1.9.21';
/** PBKDF2 iterations for the bags and PKCS#12-KDF iterations for the MAC (OpenSSL 3 uses 2048). */
const ITERATIONS = 10_000;

export interface Pkcs12Options {
  certPem: string;
  keyPem: string;
  /** The issuing CA, included so importers can show and trust the chain. */
  caPem: string;
  password: string;
  /** Shown by keychains and browsers next to the certificate. */
  friendlyName: string;
}

/** Bundles certificate, key and CA into a password-protected PKCS#12 (DER) file. */
export async function toPkcs12(options: Pkcs12Options): Promise<Buffer> {
  if (typeof options.password !== 'string' || options.password.length === 0) {
    throw new PkiError('InvalidCertificateRequest', 'A PKCS#12 file needs a non-empty password.', {
      field: 'password',
    });
  }
  const leafDer = pemToDer(options.certPem, 'certificate');
  const caDer = pemToDer(options.caPem, 'CA certificate');
  let keyDer: Buffer;
  try {
    keyDer = createPrivateKey(options.keyPem).export({ type: 'pkcs8', format: 'der' });
  } catch (error) {
    throw new PkiError('InvalidCertificate', 'The private key is not a readable PEM key.', {}, error);
  }
  const password = toArrayBuffer(Buffer.from(options.password, 'utf8'));
  // The same localKeyId on the key and its certificate is how importers pair them.
  const localKeyId = toArrayBuffer(createHash('sha256').update(leafDer).digest());
  const bagAttributes = (): pkijs.Attribute[] => [
    new pkijs.Attribute({
      type: OID_FRIENDLY_NAME,
      values: [new asn1js.BmpString({ value: options.friendlyName })],
    }),
    new pkijs.Attribute({
      type: OID_LOCAL_KEY_ID,
      values: [new asn1js.OctetString({ valueHex: localKeyId })],
    }),
  ];
  const encryption = {
    password,
    contentEncryptionAlgorithm: { name: 'AES-CBC', length: 256 },
    hmacHashAlgorithm: 'SHA-256',
    iterationCount: ITERATIONS,
  };

  const keyBag = new pkijs.PKCS8ShroudedKeyBag({
    parsedValue: pkijs.PrivateKeyInfo.fromBER(toArrayBuffer(keyDer)),
  });
  await keyBag.makeInternalValues(encryption);

  const pfx = new pkijs.PFX({
    parsedValue: {
      integrityMode: 0, // password-based MAC
      authenticatedSafe: new pkijs.AuthenticatedSafe({
        parsedValue: {
          safeContents: [
            {
              privacyMode: 1, // certificates in a password-encrypted SafeContents, as OpenSSL writes them
              value: new pkijs.SafeContents({
                safeBags: [
                  new pkijs.SafeBag({
                    bagId: OID_CERT_BAG,
                    bagValue: new pkijs.CertBag({
                      parsedValue: pkijs.Certificate.fromBER(toArrayBuffer(leafDer)),
                    }),
                    bagAttributes: bagAttributes(),
                  }),
                  new pkijs.SafeBag({
                    bagId: OID_CERT_BAG,
                    bagValue: new pkijs.CertBag({
                      parsedValue: pkijs.Certificate.fromBER(toArrayBuffer(caDer)),
                    }),
                  }),
                ],
              }),
            },
            {
              privacyMode: 0, // the key bag is shrouded by itself
              value: new pkijs.SafeContents({
                safeBags: [
                  new pkijs.SafeBag({
                    bagId: OID_KEY_BAG_SHROUDED,
                    bagValue: keyBag,
                    bagAttributes: bagAttributes(),
                  }),
                ],
              }),
            },
          ],
        },
      }),
    },
  });
  await pfx.parsedValue!.authenticatedSafe!.makeInternalValues({ safeContents: [{ ...encryption }, {}] });
  await pfx.makeInternalValues({
    password,
    iterations: ITERATIONS,
    pbkdf2HashAlgorithm: 'SHA-256',
    hmacHashAlgorithm: 'SHA-256',
  });
  return Buffer.from(pfx.toSchema().toBER(false));
}

function pemToDer(pem: string, what: string): Buffer {
  try {
    return new X509Certificate(pem).raw;
  } catch (error) {
    throw new PkiError('InvalidCertificate', `The ${what} is not a readable PEM certificate.`, {}, error);
  }
}

function toArrayBuffer(bytes: Buffer): ArrayBuffer {
  return bytes.buffer.slice(bytes.byteOffset, bytes.byteOffset + bytes.byteLength) as ArrayBuffer;
}
