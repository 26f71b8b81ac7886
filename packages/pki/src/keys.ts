// Key pairs and signing keys. Keys are generated and used by node:crypto (native OpenSSL,
// via its WebCrypto face so @peculiar/x509 can sign with them). New keys are ECDSA P-256:
// small, fast to generate (a CA or a certificate per request is milliseconds), accepted by
// every TLS stack, curl and browser. A supplied CA key may also be RSA or P-384/P-521.
// A client certificate's key may be asked for as RSA (2048 or 3072 bits) for clients that read
// nothing else: the official RavenDB client takes only `RSA PRIVATE KEY` (PKCS#1) PEM blocks.
import { createPrivateKey, createPublicKey, KeyObject, webcrypto } from 'node:crypto';
import { PkiError } from './errors.js';

type CryptoKey = webcrypto.CryptoKey;

const { subtle } = webcrypto;

export type SigningAlgorithm =
  | { name: 'ECDSA'; namedCurve: string; hash: 'SHA-256' | 'SHA-384' | 'SHA-512' }
  | { name: 'RSASSA-PKCS1-v1_5'; hash: 'SHA-256' };

export const DEFAULT_KEY_ALGORITHM = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' } as const;

/** The keys a leaf certificate can be issued with; `ecdsa-p256` unless asked otherwise. */
export const KEY_TYPES = ['ecdsa-p256', 'rsa-2048', 'rsa-3072'] as const;
export type KeyType = (typeof KEY_TYPES)[number];
export const DEFAULT_KEY_TYPE: KeyType = 'ecdsa-p256';

const RSA_BITS: Record<Exclude<KeyType, 'ecdsa-p256'>, number> = { 'rsa-2048': 2048, 'rsa-3072': 3072 };

export interface GeneratedKeyPair {
  privateKey: CryptoKey;
  publicKey: CryptoKey;
  /**
   * PEM of the private key: PKCS#8 (`PRIVATE KEY`) for ECDSA; PKCS#1 (`RSA PRIVATE KEY`) for RSA, because
   * the only reason to ask for RSA is a client that reads that block alone (OpenSSL, Node and curl read both).
   */
  keyPem: string;
}

export async function generateKeyPair(keyType: KeyType = DEFAULT_KEY_TYPE): Promise<GeneratedKeyPair> {
  if (!(KEY_TYPES as readonly unknown[]).includes(keyType)) {
    throw new PkiError('InvalidCertificateRequest', `keyType must be one of ${KEY_TYPES.join(', ')}.`, {
      field: 'keyType',
    });
  }
  const algorithm =
    keyType === 'ecdsa-p256'
      ? DEFAULT_KEY_ALGORITHM
      : {
          name: 'RSASSA-PKCS1-v1_5',
          modulusLength: RSA_BITS[keyType],
          publicExponent: new Uint8Array([1, 0, 1]),
          hash: 'SHA-256',
        };
  const pair = (await subtle.generateKey(algorithm, true, ['sign', 'verify'])) as webcrypto.CryptoKeyPair;
  const keyPem = KeyObject.from(pair.privateKey).export({
    type: keyType === 'ecdsa-p256' ? 'pkcs8' : 'pkcs1',
    format: 'pem',
  }) as string;
  return { privateKey: pair.privateKey, publicKey: pair.publicKey, keyPem };
}

const CURVES: Record<string, { namedCurve: string; hash: 'SHA-256' | 'SHA-384' | 'SHA-512' }> = {
  prime256v1: { namedCurve: 'P-256', hash: 'SHA-256' },
  secp384r1: { namedCurve: 'P-384', hash: 'SHA-384' },
  secp521r1: { namedCurve: 'P-521', hash: 'SHA-512' },
};

export interface SigningKey {
  key: CryptoKey;
  algorithm: SigningAlgorithm;
  /** DER SubjectPublicKeyInfo of the matching public key, to compare with a certificate. */
  spki: Buffer;
}

/** Imports a PEM private key (PKCS#8, or the traditional SEC1/PKCS#1 forms) for signing. */
export async function importSigningKey(keyPem: string): Promise<SigningKey> {
  let keyObject: KeyObject;
  try {
    keyObject = createPrivateKey(keyPem);
  } catch (error) {
    throw new PkiError('InvalidCertificate', 'The private key is not a readable PEM key.', {}, error);
  }
  const type = keyObject.asymmetricKeyType;
  let algorithm: SigningAlgorithm;
  if (type === 'ec') {
    const curve = CURVES[keyObject.asymmetricKeyDetails?.namedCurve ?? ''];
    if (curve === undefined) {
      throw new PkiError(
        'InvalidCertificate',
        `The EC key uses curve ${keyObject.asymmetricKeyDetails?.namedCurve ?? 'unknown'}; use P-256, P-384 or P-521.`,
      );
    }
    algorithm = { name: 'ECDSA', ...curve };
  } else if (type === 'rsa') {
    algorithm = { name: 'RSASSA-PKCS1-v1_5', hash: 'SHA-256' };
  } else {
    throw new PkiError(
      'InvalidCertificate',
      `Keys of type ${type ?? 'unknown'} are not supported; use EC or RSA.`,
    );
  }
  const pkcs8 = keyObject.export({ type: 'pkcs8', format: 'der' });
  const key = await subtle.importKey('pkcs8', pkcs8, algorithm, false, ['sign']);
  const spki = createPublicKey(keyObject).export({ type: 'spki', format: 'der' });
  return { key, algorithm, spki };
}
