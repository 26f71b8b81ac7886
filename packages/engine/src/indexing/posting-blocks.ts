// One term's entries in one block of 65,536 entry numbers, as fts_postings stores them (fts-postings.ts):
// a sorted array of the low 16 bits (2 bytes an entry) while the block holds at most 4,096 of the term's
// entries, else a bitmap of 8,192 bytes (bit b of byte b >>> 3 is entry block × 65,536 + b). The
// choice is Roaring's: whichever is smaller. A bitmap's bytes are laid out as an EntrySet's words are in
// memory on a little-endian machine, so a reader copies them in one `set`.

export const BLOCK_BITS = 16;
export const BLOCK_ENTRIES = 1 << BLOCK_BITS;
export const BITMAP_BYTES = BLOCK_ENTRIES / 8;
/** Above this many entries a block is a bitmap (an array of more would be bigger than 8,192 bytes). */
export const ARRAY_MAX = BITMAP_BYTES / 2;

/** A block's entries (low 16 bits) set in `bitmap` (8,192 bytes, zeroed by the caller). */
export function decodeBlockInto(bitmap: Uint8Array, count: number, data: Uint8Array): void {
  if (count > ARRAY_MAX) {
    bitmap.set(data.subarray(0, BITMAP_BYTES));
    return;
  }
  for (let i = 0; i < count; i++) {
    const low = data[2 * i]! | (data[2 * i + 1]! << 8);
    bitmap[low >>> 3] = bitmap[low >>> 3]! | (1 << (low & 7));
  }
}

/** The stored form of a block's bitmap holding `count` entries (count > 0). */
export function encodeBlock(bitmap: Uint8Array, count: number): Buffer {
  if (count > ARRAY_MAX) return Buffer.from(bitmap.subarray(0, BITMAP_BYTES));
  const out = Buffer.allocUnsafe(2 * count);
  let at = 0;
  for (let byte = 0; byte < BITMAP_BYTES; byte++) {
    let bits = bitmap[byte]!;
    while (bits !== 0) {
      const low = (byte << 3) | (31 - Math.clz32(bits & -bits));
      out[at++] = low & 0xff;
      out[at++] = low >>> 8;
      bits &= bits - 1;
    }
  }
  return out;
}
