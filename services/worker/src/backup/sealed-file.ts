// A backup file as stored: compressed, then encrypted with AES-256-GCM, in chunks, so files of any
// size stream through bounded memory and a damaged byte is found in the chunk that holds it.
//
//   header  "RKBK" | version (1) | codec (1) | reserved (2) | salt (32)          40 bytes
//   chunk   ciphertext length (u32 BE) | ciphertext | GCM tag (16)              repeated
//
// The file's key is derived from the tenant's backup key and the file's random salt, so nonces can
// count chunks (0, 1, 2, …) without ever repeating under one key. Every chunk authenticates, as
// additional data, the header, its own index, whether it is the last one, and the file's place in
// its backup ("<backup id>/<file name>"): chunks cannot be reordered, dropped from the end, moved
// from another file or backup, or the header changed, without the tag failing.
//
// Compression is zstd from node:zlib (codec 2), built for this job: fast at ratios brotli reaches
// only at slower qualities (`pnpm bench:backup` measures it). Files written before Rookery ran on
// Node 24 (zstd arrived in 22.15; Node 20 had none) are brotli (codec 1) and still open. It runs on libuv's thread pool,
// two chunks at a time, so compression overlaps reading and writing.
import { createCipheriv, createDecipheriv, createHash, type Hash, randomBytes } from 'node:crypto';
import { promisify } from 'node:util';
import zlib from 'node:zlib';
import { RookeryError } from '@rookery/protocol';
import { rechunk } from '../streams.js';
import { type BackupKey, fileKey } from './backup-key.js';
import { ByteReader } from './byte-reader.js';

const MAGIC = Buffer.from('RKBK', 'ascii');
const FORMAT_VERSION = 1;
/** Read only: what backups were compressed with before zstd. */
const CODEC_BROTLI = 1;
const CODEC_ZSTD = 2;
const HEADER_BYTES = 40;
const SALT_BYTES = 32;
const TAG_BYTES = 16;
/** Plaintext per chunk before compression. */
export const CHUNK_BYTES = 1 << 20;
/** A chunk's ciphertext can be larger than its plaintext only by the codec's small overhead. */
const MAX_SEALED_CHUNK_BYTES = CHUNK_BYTES + (64 << 10);
const COMPRESSIONS_IN_FLIGHT = 2;

const zstdCompress = promisify(zlib.zstdCompress);
const DECOMPRESS: Record<
  number,
  (compressed: Buffer, options: { maxOutputLength: number }) => Promise<Buffer>
> = {
  [CODEC_BROTLI]: promisify(zlib.brotliDecompress),
  [CODEC_ZSTD]: promisify(zlib.zstdDecompress),
};

/** What a sealed file's manifest entry records, from both sides of the seal. */
export interface SealedFileSummary {
  plainBytes: number;
  plainSha256: string;
  storedBytes: number;
  storedSha256: string;
  chunks: number;
}

export interface SealOptions {
  key: BackupKey;
  /** `<backup id>/<file name>`: where the file belongs; opening it anywhere else fails. */
  place: string;
  /** zstd level, 1–19. */
  level: number;
}

/**
 * Seals a stream of plaintext into the stored form, chunk by chunk. `summary` is complete once the
 * returned stream has been read to its end.
 */
export function sealFile(
  source: AsyncIterable<Buffer>,
  options: SealOptions,
): { stream: AsyncGenerator<Buffer>; summary: SealedFileSummary } {
  const summary: SealedFileSummary = {
    plainBytes: 0,
    plainSha256: '',
    storedBytes: 0,
    storedSha256: '',
    chunks: 0,
  };
  const plainHash = createHash('sha256');
  const storedHash = createHash('sha256');
  const salt = randomBytes(SALT_BYTES);
  const header = Buffer.concat([MAGIC, Buffer.from([FORMAT_VERSION, CODEC_ZSTD, 0, 0]), salt]);
  const key = fileKey(options.key, salt);
  const compress = (chunk: Buffer) =>
    zstdCompress(chunk, {
      params: {
        [zlib.constants.ZSTD_c_compressionLevel]: options.level,
      },
      pledgedSrcSize: chunk.length,
    });

  const out = (bytes: Buffer): Buffer => {
    storedHash.update(bytes);
    summary.storedBytes += bytes.length;
    return bytes;
  };
  const seal = (compressed: Buffer, final: boolean): Buffer => {
    const index = summary.chunks++;
    const cipher = createCipheriv('aes-256-gcm', key, nonce(index), { authTagLength: TAG_BYTES });
    cipher.setAAD(additionalData(header, index, final, options.place));
    const ciphertext = Buffer.concat([cipher.update(compressed), cipher.final()]);
    const length = Buffer.alloc(4);
    length.writeUInt32BE(ciphertext.length);
    return out(Buffer.concat([length, ciphertext, cipher.getAuthTag()]));
  };

  async function* stream(): AsyncGenerator<Buffer> {
    yield out(header);
    const compressing: Promise<Buffer>[] = [];
    // The newest compressed chunk is held back until the next one exists: only then is it known
    // whether it is the last, which its seal must say.
    let held: Buffer | null = null;
    const next = async () => {
      const compressed = await compressing.shift()!;
      const previous = held;
      held = compressed;
      return previous;
    };
    for await (const chunk of rechunk(source, CHUNK_BYTES)) {
      plainHash.update(chunk);
      summary.plainBytes += chunk.length;
      compressing.push(compress(chunk));
      if (compressing.length >= COMPRESSIONS_IN_FLIGHT) {
        const ready = await next();
        if (ready) yield seal(ready, false);
      }
    }
    while (compressing.length > 0) {
      const ready = await next();
      if (ready) yield seal(ready, false);
    }
    yield seal(held ?? (await compress(Buffer.alloc(0))), true);
    summary.plainSha256 = plainHash.digest('hex');
    summary.storedSha256 = storedHash.digest('hex');
  }
  return { stream: stream(), summary };
}

export interface OpenOptions {
  key: BackupKey;
  place: string;
  /** What the file is called in messages. */
  describe: string;
}

/**
 * Opens a sealed file back into its plaintext, chunk by chunk. Any change to the stored bytes
 * (a flipped bit, a cut, chunks swapped or brought from elsewhere) fails with BackupCorrupt
 * before the chunk it touches is handed out.
 */
export async function* openFile(source: AsyncIterable<Buffer>, options: OpenOptions): AsyncGenerator<Buffer> {
  const reader = new ByteReader(source);
  try {
    const header = await reader.read(HEADER_BYTES);
    if (
      header.length < HEADER_BYTES ||
      !header.subarray(0, 4).equals(MAGIC) ||
      header[4] !== FORMAT_VERSION ||
      DECOMPRESS[header[5]!] === undefined
    ) {
      throw corrupt(options, 'its header is not a Rookery backup file header');
    }
    const decompress = DECOMPRESS[header[5]!]!;
    const key = fileKey(options.key, header.subarray(8, HEADER_BYTES));
    for (let index = 0; ; index++) {
      const lengthBytes = await reader.read(4);
      if (lengthBytes.length < 4) throw corrupt(options, 'it ends before its last chunk (cut short)');
      const length = lengthBytes.readUInt32BE(0);
      if (length > MAX_SEALED_CHUNK_BYTES) throw corrupt(options, `chunk ${index} claims ${length} bytes`);
      const sealed = await reader.read(length + TAG_BYTES);
      if (sealed.length < length + TAG_BYTES) throw corrupt(options, `chunk ${index} is cut short`);
      const final = await reader.atEnd();
      const compressed = decrypt(key, header, index, final, sealed, length, options);
      try {
        yield await decompress(compressed, { maxOutputLength: CHUNK_BYTES });
      } catch (error) {
        throw corrupt(options, `chunk ${index} does not decompress (${(error as Error).message})`);
      }
      if (final) return;
    }
  } finally {
    await reader.close();
  }
}

function decrypt(
  key: Buffer,
  header: Buffer,
  index: number,
  final: boolean,
  sealed: Buffer,
  length: number,
  options: OpenOptions,
): Buffer {
  try {
    const decipher = createDecipheriv('aes-256-gcm', key, nonce(index), { authTagLength: TAG_BYTES });
    decipher.setAAD(additionalData(header, index, final, options.place));
    decipher.setAuthTag(sealed.subarray(length));
    return Buffer.concat([decipher.update(sealed.subarray(0, length)), decipher.final()]);
  } catch {
    // The last chunk read fails as "not final" when the file was cut right after a whole chunk.
    throw corrupt(
      options,
      `chunk ${index} fails authentication (altered, cut short, or not from this backup)`,
    );
  }
}

function nonce(index: number): Buffer {
  const bytes = Buffer.alloc(12);
  bytes.writeBigUInt64BE(BigInt(index), 4);
  return bytes;
}

function additionalData(header: Buffer, index: number, final: boolean, place: string): Buffer {
  const position = Buffer.alloc(9);
  position.writeBigUInt64BE(BigInt(index), 0);
  position[8] = final ? 1 : 0;
  return Buffer.concat([header, position, Buffer.from(place, 'utf8')]);
}

/** SHA-256 and length of a stream, read to its end. */
export async function digestStream(
  source: AsyncIterable<Buffer>,
): Promise<{ sha256: string; bytes: number }> {
  const hash: Hash = createHash('sha256');
  let bytes = 0;
  for await (const piece of source) {
    hash.update(piece);
    bytes += piece.length;
  }
  return { sha256: hash.digest('hex'), bytes };
}

function corrupt(options: OpenOptions, why: string): RookeryError {
  return new RookeryError(
    'BackupCorrupt',
    `The ${options.describe} cannot be restored: ${why}. The backup was damaged or altered; restore from another backup.`,
    { file: options.place },
  );
}
