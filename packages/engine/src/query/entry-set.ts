// A set of index entries as a bitmap: one bit per entry id, up to the
// largest id of one state of the index. Counting a conjunction of two broad
// filters (a common search term and "not prerelease", say: 230k and 330k of
// 400k entries) by probing one side's B-tree per entry of the other costs
// ~1 µs per entry; with both sides as bitmaps it is an AND and a popcount over
// 50 KB, a few microseconds, and the ordered walk tests membership in JS.

const BITS = 32;

export class EntrySet {
  private cachedSize = -1;

  private constructor(readonly words: Int32Array) {}

  /** An empty set able to hold entries 0..maxEntry. */
  static empty(maxEntry: number): EntrySet {
    return new EntrySet(new Int32Array(Math.floor(Math.max(0, maxEntry) / BITS) + 1));
  }

  /**
   * The entries listed in `list`, decimal numbers separated by commas — what
   * SQLite's group_concat(entry) returns. One string crosses from SQLite
   * instead of one row object per entry (~30 ns per entry against ~500 ns).
   * Entries above maxEntry cannot occur in one state of the index and are
   * ignored rather than grown into.
   */
  static fromList(list: string | null, maxEntry: number): EntrySet {
    const set = EntrySet.empty(maxEntry);
    if (list === null || list === '') return set;
    const words = set.words;
    let n = 0;
    for (let i = 0; i <= list.length; i++) {
      const c = i < list.length ? list.charCodeAt(i) : 44;
      if (c === 44) {
        if (n <= maxEntry) words[n >>> 5] = (words[n >>> 5] as number) | (1 << (n & 31));
        n = 0;
      } else {
        n = n * 10 + (c - 48);
      }
    }
    return set;
  }

  /**
   * A set whose bits `fill` sets through a byte view of its words: entry e is bit e & 7 of byte e >>> 3
   * on a little-endian machine (every platform Node supports), the layout of a stored posting bitmap
   * (indexing/posting-blocks.ts), so a block is copied in one `set`.
   */
  static fromBytes(maxEntry: number, fill: (bytes: Uint8Array) => void): EntrySet {
    const set = EntrySet.empty(maxEntry);
    fill(new Uint8Array(set.words.buffer, set.words.byteOffset, set.words.byteLength));
    return set;
  }

  get bytes(): number {
    return this.words.byteLength;
  }

  has(entry: number): boolean {
    return entry >= 0 && ((this.words[entry >>> 5] ?? 0) & (1 << (entry & 31))) !== 0;
  }

  and(other: EntrySet): EntrySet {
    return this.combine(other, (a, b) => a & b);
  }

  or(other: EntrySet): EntrySet {
    return this.combine(other, (a, b) => a | b);
  }

  /** The entries of this set that are not in `other`. */
  andNot(other: EntrySet): EntrySet {
    return this.combine(other, (a, b) => a & ~b);
  }

  get size(): number {
    if (this.cachedSize < 0) {
      // An indexed loop that skips empty words: a narrow match's bitmap is mostly zeros.
      const words = this.words;
      let n = 0;
      for (let w = 0; w < words.length; w++) {
        const word = words[w] as number;
        if (word !== 0) n += popcount(word);
      }
      this.cachedSize = n;
    }
    return this.cachedSize;
  }

  /** Members in ascending order. */
  *entries(): IterableIterator<number> {
    const words = this.words;
    for (let w = 0; w < words.length; w++) {
      let word = words[w] as number;
      while (word !== 0) {
        const low = word & -word;
        yield w * BITS + (31 - Math.clz32(low));
        word ^= low;
      }
    }
  }

  private combine(other: EntrySet, op: (a: number, b: number) => number): EntrySet {
    if (other.words.length !== this.words.length) {
      throw new Error('entry sets of different states of an index cannot be combined');
    }
    const out = new Int32Array(this.words.length);
    for (let i = 0; i < out.length; i++) out[i] = op(this.words[i] as number, other.words[i] as number);
    return new EntrySet(out);
  }
}

function popcount(x: number): number {
  x -= (x >>> 1) & 0x55555555;
  x = (x & 0x33333333) + ((x >>> 2) & 0x33333333);
  return (Math.imul((x + (x >>> 4)) & 0x0f0f0f0f, 0x01010101) >>> 24) & 0xff;
}
