import { randomBytes } from 'node:crypto';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { deriveBackupKey } from './backup-key.js';
import { CHUNK_BYTES, digestStream, openFile, sealFile } from './sealed-file.js';

const key = deriveBackupKey(randomBytes(32), 'acme');
const place = '001764000000000-full-1a2b3c4d/snapshot.rkb';

async function* pieces(data: Buffer, sizes: number[]): AsyncGenerator<Buffer> {
  let at = 0;
  for (let i = 0; at < data.length; i++) {
    const size = Math.max(1, sizes[i % Math.max(1, sizes.length)] ?? data.length);
    yield data.subarray(at, at + size);
    at += size;
  }
}

async function seal(data: Buffer, sizes: number[] = []) {
  const sealed = sealFile(pieces(data, sizes), { key, place, level: 1 });
  const chunks: Buffer[] = [];
  for await (const piece of sealed.stream) chunks.push(piece);
  return { stored: Buffer.concat(chunks), summary: sealed.summary };
}

async function open(stored: Buffer, options: { key?: typeof key; place?: string } = {}): Promise<Buffer> {
  const out: Buffer[] = [];
  for await (const piece of openFile(pieces(stored, [7000]), {
    key: options.key ?? key,
    place: options.place ?? place,
    describe: 'test file',
  })) {
    out.push(piece);
  }
  return Buffer.concat(out);
}

describe('sealed backup files', () => {
  it('round-trips any content cut into any pieces, and the summary describes both sides', async () => {
    await fc.assert(
      fc.asyncProperty(
        fc.uint8Array({ maxLength: 5000 }),
        fc.integer({ min: 0, max: 3 }),
        fc.array(fc.integer({ min: 1, max: 4000 }), { maxLength: 5 }),
        async (bytes, repeats, sizes) => {
          // Repeated up to a few MiB, so files of one, two and more chunks occur.
          const data = Buffer.concat(Array.from({ length: 1 + repeats * 300 }, () => Buffer.from(bytes)));
          const { stored, summary } = await seal(data, sizes);
          expect((await open(stored)).equals(data)).toBe(true);
          expect(summary.plainBytes).toBe(data.length);
          expect(summary.plainSha256).toBe((await digestStream(pieces(data, []))).sha256);
          expect(summary).toMatchObject({
            storedBytes: stored.length,
            storedSha256: (await digestStream(pieces(stored, []))).sha256,
          });
          expect(summary.chunks).toBe(Math.max(1, Math.ceil(data.length / CHUNK_BYTES)));
        },
      ),
      { numRuns: 40 },
    );
  });

  it('refuses any single flipped byte, a cut at any point, and another key or place', async () => {
    const data = randomBytes(CHUNK_BYTES + 5000); // two chunks, barely compressible
    const { stored } = await seal(data);
    await fc.assert(
      fc.asyncProperty(
        fc.integer({ min: 0, max: stored.length - 1 }),
        fc.integer({ min: 1, max: 255 }),
        async (at, bit) => {
          const tampered = Buffer.from(stored);
          tampered[at]! ^= bit;
          await expect(open(tampered)).rejects.toMatchObject({ code: 'BackupCorrupt' });
        },
      ),
      { numRuns: 60 },
    );
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: stored.length - 1 }), async (length) => {
        await expect(open(stored.subarray(0, length))).rejects.toMatchObject({ code: 'BackupCorrupt' });
      }),
      { numRuns: 60 },
    );
    // Cut right after the first whole chunk: every byte left is intact, but the last chunk is missing.
    const firstChunkEnd = 40 + 4 + stored.readUInt32BE(40) + 16;
    await expect(open(stored.subarray(0, firstChunkEnd))).rejects.toMatchObject({
      code: 'BackupCorrupt',
      message: expect.stringContaining('chunk 0'),
    });
    await expect(open(Buffer.concat([stored, Buffer.from([0])]))).rejects.toMatchObject({
      code: 'BackupCorrupt',
    });
    await expect(open(stored, { key: deriveBackupKey(randomBytes(32), 'acme') })).rejects.toMatchObject({
      code: 'BackupCorrupt',
    });
    await expect(
      open(stored, { place: '001764000000000-full-1a2b3c4d/transactions.rkb' }),
    ).rejects.toMatchObject({
      code: 'BackupCorrupt',
    });
  });

  it('compresses with zstd: codec 2 in the header', async () => {
    const data = Buffer.from('{"Name":"Ada Lovelace","@metadata":{"@collection":"Users"}}\n'.repeat(20_000));
    const { stored } = await seal(data);
    expect(stored[5]).toBe(2);
    // GCM adds nothing to the length: the first chunk's ciphertext is the compressed 1 MiB.
    expect(stored.readUInt32BE(40)).toBeLessThan(CHUNK_BYTES / 20);
    expect((await open(stored)).equals(data)).toBe(true);
  });

  it('still opens files sealed with brotli (codec 1), as backups made before zstd are', async () => {
    // Sealed by the brotli version of sealFile (quality 4) with this key and `place`.
    const brotliSealed = Buffer.from(
      'UktCSwEBAACuNUlFYlDxI08Lfqgl9CgG68kg2Xr3hi9SRb7Y/0bhtAAAAEGwOkhl2sTFZiFAg3w/bcnanpO4WvHuFMQx6i3HtSHSlEPpqwN6ISyUHZsIRBajYi+2XE6YfzT/tQBXTsdZncU2jTmguiV4Zk87Ej4//5oMj/Q=',
      'base64',
    );
    expect(brotliSealed[5]).toBe(1);
    const opened = await open(brotliSealed, { key: deriveBackupKey(Buffer.alloc(32, 7), 'acme') });
    expect(opened.toString()).toBe(
      '{"Name":"Ada Lovelace","@metadata":{"@collection":"Users"}}\n'.repeat(50),
    );
  });

  it('refuses a header naming a codec it does not know', async () => {
    const { stored } = await seal(Buffer.from('hello'));
    const unknown = Buffer.from(stored);
    unknown[5] = 9;
    await expect(open(unknown)).rejects.toMatchObject({ code: 'BackupCorrupt' });
  });
});
