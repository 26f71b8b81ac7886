import zlib from 'node:zlib';

/** Bit in `docs.flags`: the body is brotli-compressed bytes rather than JSON text. */
export const FLAG_COMPRESSED = 1;

/**
 * Brotli at quality 1, only above a size threshold. Measured on this class of
 * machine (see packages/engine/README.md): Node's synchronous zlib costs about
 * 45 µs per call whatever the size, so a 1 KiB document would pay 50 µs to
 * shrink 2.3×, while a 4 KiB one shrinks 3.6× for the same cost.
 */
export function encodeBody(json: string, thresholdBytes: number): { body: string | Buffer; flags: number } {
  if (json.length < thresholdBytes) return { body: json, flags: 0 };
  const raw = Buffer.from(json, 'utf8');
  const packed = brotli(raw);
  // Incompressible bodies are kept as they are: never pay to inflate a read.
  if (packed.length >= raw.length) return { body: json, flags: 0 };
  return { body: packed, flags: FLAG_COMPRESSED };
}

/**
 * Compresses whatever the size: archived bodies are rarely read, so space wins over the cost of
 * inflating, and "archived means compressed" holds without exceptions.
 */
export function compressBody(json: string): { body: Buffer; flags: number } {
  return { body: brotli(Buffer.from(json, 'utf8')), flags: FLAG_COMPRESSED };
}

export function decodeBody(body: string | Buffer, flags: number): string {
  if ((flags & FLAG_COMPRESSED) === 0) return body as string;
  return zlib.brotliDecompressSync(body as Buffer).toString('utf8');
}

function brotli(raw: Buffer): Buffer {
  return zlib.brotliCompressSync(raw, {
    params: {
      [zlib.constants.BROTLI_PARAM_QUALITY]: 1,
      [zlib.constants.BROTLI_PARAM_SIZE_HINT]: raw.length,
      [zlib.constants.BROTLI_PARAM_MODE]: zlib.constants.BROTLI_MODE_TEXT,
    },
  });
}
