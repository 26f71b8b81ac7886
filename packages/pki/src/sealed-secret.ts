// Secrets at rest (TOTP seeds in the control store) are sealed with AES-256-GCM under a
// 32-byte master key that lives in a file beside the data, never in the database. The
// sealed form is one string: `v1.<iv>.<tag>.<ciphertext>`, each part base64url, with a
// random 12-byte IV per seal. The version prefix is authenticated too (as GCM additional
// data), and so is an optional caller context (e.g. the principal id), so a sealed value
// copied onto another row does not open there.
import { createCipheriv, createDecipheriv, randomBytes } from 'node:crypto';
import { PkiError } from './errors.js';
import { createFileExclusive, readIfExists } from './files.js';

const VERSION = 'v1';
const IV_BYTES = 12;
const TAG_BYTES = 16;
const KEY_BYTES = 32;
const BASE64URL = /^[A-Za-z0-9_-]*$/;

/** Seals `plaintext` under `key` (32 bytes). `context`, if given, must be given again to open. */
export function sealSecret(key: Buffer, plaintext: string, context = ''): string {
  assertKey(key);
  const iv = randomBytes(IV_BYTES);
  const cipher = createCipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
  cipher.setAAD(additionalData(context));
  const ciphertext = Buffer.concat([cipher.update(plaintext, 'utf8'), cipher.final()]);
  const tag = cipher.getAuthTag();
  return `${VERSION}.${iv.toString('base64url')}.${tag.toString('base64url')}.${ciphertext.toString('base64url')}`;
}

/** Opens a sealed string; throws `SealedSecretInvalid` if it was altered or sealed under another key/context. */
export function openSecret(key: Buffer, sealed: string, context = ''): string {
  assertKey(key);
  if (typeof sealed !== 'string') throw invalid('it is not a string');
  const parts = sealed.split('.');
  if (parts.length !== 4 || parts[0] !== VERSION) {
    throw invalid(`it is not in the ${VERSION}.<iv>.<tag>.<ciphertext> form`);
  }
  const iv = decodePart(parts[1]!, 'iv');
  const tag = decodePart(parts[2]!, 'tag');
  const ciphertext = decodePart(parts[3]!, 'ciphertext');
  if (iv.length !== IV_BYTES || tag.length !== TAG_BYTES) throw invalid('its iv or tag has the wrong length');
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, iv, { authTagLength: TAG_BYTES });
    decipher.setAAD(additionalData(context));
    decipher.setAuthTag(tag);
    const plaintext = Buffer.concat([decipher.update(ciphertext), decipher.final()]);
    return new TextDecoder('utf-8', { fatal: true }).decode(plaintext);
  } catch (error) {
    throw invalid('it was altered, or sealed under another key', error);
  }
}

/**
 * Reads the 32-byte master key from `file`, or creates it (random, mode 0600) if the file
 * does not exist. The file holds the key as one line of base64.
 */
export async function loadOrCreateMasterKey(file: string): Promise<Buffer> {
  let data = await readIfExists(file);
  if (data === null) {
    await createFileExclusive(file, `${randomBytes(KEY_BYTES).toString('base64')}\n`, 0o600);
    data = await readIfExists(file);
  }
  const text = data?.toString('utf8').trim() ?? '';
  const key = Buffer.from(text, 'base64');
  if (!/^[A-Za-z0-9+/]+={0,2}$/.test(text) || key.length !== KEY_BYTES) {
    throw new PkiError(
      'MasterKeyInvalid',
      `${file} does not hold a 32-byte key in base64; restore the original file (secrets sealed with it ` +
        'cannot be opened without it) or remove it to start over.',
      { file },
    );
  }
  return key;
}

function assertKey(key: Buffer): void {
  if (!Buffer.isBuffer(key) || key.length !== KEY_BYTES) {
    throw new PkiError('MasterKeyInvalid', `The sealing key must be ${KEY_BYTES} bytes.`);
  }
}

function additionalData(context: string): Buffer {
  return Buffer.from(`${VERSION}\0${context}`, 'utf8');
}

function decodePart(part: string, what: string): Buffer {
  const bytes = Buffer.from(part, 'base64url');
  // Buffer's decoder skips stray characters and ignores spare bits; only the canonical
  // spelling is accepted, so every change to the string is detected.
  if (!BASE64URL.test(part) || bytes.toString('base64url') !== part) {
    throw invalid(`its ${what} is not canonical base64url`);
  }
  return bytes;
}

function invalid(why: string, cause?: unknown): PkiError {
  return new PkiError(
    'SealedSecretInvalid',
    `The sealed secret cannot be opened: ${why}. Check that the master key file is the one it was sealed with.`,
    {},
    cause,
  );
}
