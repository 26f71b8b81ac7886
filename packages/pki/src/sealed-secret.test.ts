import { randomBytes } from 'node:crypto';
import { mkdtemp, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import fc from 'fast-check';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';
import { loadOrCreateMasterKey, openSecret, PkiError, sealSecret } from './index.js';

const key = randomBytes(32);
const ALPHABET = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_.v';

function expectInvalid(open: () => unknown, code = 'SealedSecretInvalid'): void {
  let caught: unknown;
  try {
    open();
  } catch (error) {
    caught = error;
  }
  expect(caught).toBeInstanceOf(PkiError);
  expect((caught as PkiError).code).toBe(code);
}

describe('sealSecret / openSecret', () => {
  it('round-trips, in the v1.<iv>.<tag>.<ciphertext> form, with a fresh IV each time', () => {
    const secret = 'JBSWY3DPEHPK3PXP';
    const sealed = sealSecret(key, secret);
    expect(sealed).toMatch(/^v1\.[A-Za-z0-9_-]{16}\.[A-Za-z0-9_-]{22}\.[A-Za-z0-9_-]+$/);
    expect(sealed).not.toContain(secret);
    expect(openSecret(key, sealed)).toBe(secret);
    const again = sealSecret(key, secret);
    expect(again).not.toBe(sealed);
    expect(again.split('.')[1]).not.toBe(sealed.split('.')[1]);
    expect(openSecret(key, sealSecret(key, ''))).toBe('');
  });

  it('round-trips any string (property)', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', maxLength: 200 }),
        fc.string({ maxLength: 20 }),
        (text, context) => {
          expect(openSecret(key, sealSecret(key, text, context), context)).toBe(text);
        },
      ),
    );
  });

  it('refuses every single-character change anywhere in the sealed string', () => {
    const sealed = sealSecret(key, 'a TOTP seed worth protecting');
    let refused = 0;
    for (let i = 0; i < sealed.length; i++) {
      for (const replacement of [ALPHABET[(ALPHABET.indexOf(sealed[i]!) + 1) % ALPHABET.length]!, '=', ' ']) {
        const tampered = sealed.slice(0, i) + replacement + sealed.slice(i + 1);
        if (tampered === sealed) continue;
        expectInvalid(() => openSecret(key, tampered));
        refused++;
      }
    }
    expect(refused).toBeGreaterThan(sealed.length * 2);
  });

  it('refuses truncation, extension, reordered parts and another version', () => {
    const sealed = sealSecret(key, 'secret');
    const [version, iv, tag, ciphertext] = sealed.split('.') as [string, string, string, string];
    const variants = [
      sealed.slice(0, -1),
      `${sealed}A`,
      `${sealed}.`,
      [version, tag, iv, ciphertext].join('.'),
      [version, iv, ciphertext, tag].join('.'),
      ['v2', iv, tag, ciphertext].join('.'),
      [version, iv, tag].join('.'),
      '',
      'v1...',
    ];
    for (const variant of variants) expectInvalid(() => openSecret(key, variant));
    // A ciphertext from another seal under the same key does not fit this IV and tag.
    const other = sealSecret(key, 'secreT').split('.')[3]!;
    expectInvalid(() => openSecret(key, [version, iv, tag, other].join('.')));
  });

  it('refuses another key and another context', () => {
    const sealed = sealSecret(key, 'secret', 'principal:1');
    expect(openSecret(key, sealed, 'principal:1')).toBe('secret');
    expectInvalid(() => openSecret(randomBytes(32), sealed, 'principal:1'));
    expectInvalid(() => openSecret(key, sealed, 'principal:2'));
    expectInvalid(() => openSecret(key, sealed));
  });

  it('insists on a 32-byte key', () => {
    expectInvalid(() => sealSecret(randomBytes(16), 'x'), 'MasterKeyInvalid');
    expectInvalid(() => openSecret(randomBytes(31), sealSecret(key, 'x')), 'MasterKeyInvalid');
  });
});

describe('loadOrCreateMasterKey', () => {
  let dir: string;
  beforeEach(async () => {
    dir = await mkdtemp(join(tmpdir(), 'rookery-pki-key-'));
  });
  afterEach(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  it('creates a 32-byte key once (mode 0600) and reloads the same key', async () => {
    const file = join(dir, 'master.key');
    const first = await loadOrCreateMasterKey(file);
    expect(first.length).toBe(32);
    expect((await stat(file)).mode & 0o777).toBe(0o600);
    const second = await loadOrCreateMasterKey(file);
    expect(second.equals(first)).toBe(true);
    // What one process sealed, the next start opens.
    expect(openSecret(second, sealSecret(first, 'carry over'))).toBe('carry over');
  });

  it('gives concurrent starters the same key', async () => {
    const file = join(dir, 'master.key');
    const keys = await Promise.all(Array.from({ length: 6 }, () => loadOrCreateMasterKey(file)));
    for (const k of keys) expect(k.equals(keys[0]!)).toBe(true);
    expect(Buffer.from((await readFile(file, 'utf8')).trim(), 'base64').equals(keys[0]!)).toBe(true);
  });

  it('refuses a file that does not hold a 32-byte key', async () => {
    const file = join(dir, 'master.key');
    await writeFile(file, randomBytes(16).toString('base64'));
    await expect(loadOrCreateMasterKey(file)).rejects.toSatisfy(
      (e) => e instanceof PkiError && e.code === 'MasterKeyInvalid',
    );
    await writeFile(file, 'not base64 at all!!');
    await expect(loadOrCreateMasterKey(file)).rejects.toSatisfy(
      (e) => e instanceof PkiError && e.code === 'MasterKeyInvalid',
    );
  });
});
