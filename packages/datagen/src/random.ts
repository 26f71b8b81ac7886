// Seeded randomness for the generators: a small, fast PRNG (sfc32) whose whole
// state is four 32-bit integers, a Zipf sampler over a ranked vocabulary and
// heavy-tailed integer samplers. Everything here is deterministic: the same
// seed (and stream) gives the same sequence on every run and platform, because
// only 32-bit integer arithmetic and V8's own (platform-independent) Math
// functions are used.

/** MurmurHash3's 32-bit finaliser: a cheap bijective mix of a 32-bit integer. */
export function mix32(value: number): number {
  let h = value >>> 0;
  h ^= h >>> 16;
  h = Math.imul(h, 0x85ebca6b);
  h ^= h >>> 13;
  h = Math.imul(h, 0xc2b2ae35);
  h ^= h >>> 16;
  return h >>> 0;
}

/**
 * sfc32 (Chris Doty-Humphrey's Small Fast Counting generator), seeded through
 * splitmix32. `stream` selects an independent sequence for the same seed, so a
 * generator can give every item (say, every package) its own stream and the
 * item stays the same whatever was generated before it.
 */
export class Random {
  private a: number;
  private b: number;
  private c: number;
  private d: number;

  constructor(seed: number, stream = 0) {
    if (!Number.isInteger(seed) || !Number.isInteger(stream)) {
      throw new TypeError(`seed and stream must be integers (got ${seed}, ${stream})`);
    }
    // splitmix32 over the seed mixed with the stream gives four well-spread words.
    let state = (mix32(seed) ^ mix32(stream + 0x632be5ab) ^ Math.floor(stream / 0x100000000)) | 0;
    const next = () => {
      state = (state + 0x9e3779b9) | 0;
      return mix32(state);
    };
    this.a = next();
    this.b = next();
    this.c = next();
    this.d = next();
    // The first outputs of sfc32 are still correlated with the seed.
    for (let i = 0; i < 12; i++) this.uint32();
  }

  /** The next 32-bit unsigned integer. */
  uint32(): number {
    const t = (((this.a + this.b) | 0) + this.d) | 0;
    this.d = (this.d + 1) | 0;
    this.a = this.b ^ (this.b >>> 9);
    this.b = (this.c + (this.c << 3)) | 0;
    this.c = ((this.c << 21) | (this.c >>> 11)) + t;
    this.c |= 0;
    return t >>> 0;
  }

  /** A float in [0, 1) with 32 bits of randomness. */
  float(): number {
    return this.uint32() / 4294967296;
  }

  /** An integer in [min, max], both inclusive. */
  int(min: number, max: number): number {
    return min + Math.floor(this.float() * (max - min + 1));
  }

  /** True with probability `p`. */
  chance(p: number): boolean {
    return this.float() < p;
  }

  /** A uniformly chosen element of a non-empty array. */
  pick<T>(items: readonly T[]): T {
    const item = items[Math.floor(this.float() * items.length)];
    if (item === undefined) throw new RangeError('pick() needs a non-empty array');
    return item;
  }

  /** A standard normal variate (Box–Muller; one of the pair is discarded to keep no hidden state). */
  normal(): number {
    const u1 = 1 - this.float(); // (0, 1]: log(0) would be -Infinity
    const u2 = this.float();
    return Math.sqrt(-2 * Math.log(u1)) * Math.cos(2 * Math.PI * u2);
  }
}

/**
 * Zipf's law over a ranked vocabulary: the item of rank r (1-based) is drawn
 * with probability proportional to 1 / r^exponent, so the first items are
 * common and the tail is rare. Sampling is a binary search over the cumulative
 * weights (O(log n)), built once per sampler.
 */
export class ZipfSampler<T> {
  readonly items: readonly T[];
  readonly exponent: number;
  private readonly cdf: Float64Array;

  constructor(items: readonly T[], exponent = 1) {
    if (items.length === 0) throw new RangeError('ZipfSampler needs at least one item');
    if (!(exponent >= 0)) throw new RangeError(`exponent must be >= 0 (got ${exponent})`);
    this.items = items;
    this.exponent = exponent;
    this.cdf = new Float64Array(items.length);
    let total = 0;
    for (let rank = 1; rank <= items.length; rank++) {
      total += 1 / rank ** exponent;
      this.cdf[rank - 1] = total;
    }
    for (let i = 0; i < this.cdf.length; i++) this.cdf[i] = this.cdf[i]! / total;
  }

  /** The probability of drawing the item at `index` (0-based rank). */
  probability(index: number): number {
    const upper = this.cdf[index];
    if (upper === undefined) return 0;
    return index === 0 ? upper : upper - this.cdf[index - 1]!;
  }

  /** A 0-based rank. */
  sampleIndex(rng: Random): number {
    const u = rng.float();
    let lo = 0;
    let hi = this.cdf.length - 1;
    while (lo < hi) {
      const mid = (lo + hi) >>> 1;
      if (this.cdf[mid]! > u) hi = mid;
      else lo = mid + 1;
    }
    return lo;
  }

  sample(rng: Random): T {
    return this.items[this.sampleIndex(rng)]!;
  }

  /**
   * `count` distinct items (fewer if the vocabulary is smaller), in the order
   * drawn. Gives up on a slot after a bounded number of repeated draws so a
   * very skewed sampler cannot loop for long.
   */
  sampleDistinct(rng: Random, count: number): T[] {
    const wanted = Math.min(count, this.items.length);
    const seen = new Set<number>();
    const out: T[] = [];
    for (let attempts = 0; out.length < wanted && attempts < wanted * 20; attempts++) {
      const index = this.sampleIndex(rng);
      if (seen.has(index)) continue;
      seen.add(index);
      out.push(this.items[index]!);
    }
    return out;
  }
}

export interface LogNormalOptions {
  /** The median of the distribution (e^mu). */
  median: number;
  /** The standard deviation of the underlying normal: 1 is moderately skewed, 2+ is very heavy-tailed. */
  sigma: number;
  min?: number;
  max?: number;
}

/** A log-normally distributed integer, rounded and clamped to [min, max]. */
export function logNormalInt(rng: Random, options: LogNormalOptions): number {
  const value = Math.round(options.median * Math.exp(options.sigma * rng.normal()));
  return clamp(value, options.min ?? 0, options.max ?? Number.MAX_SAFE_INTEGER);
}

export interface ParetoOptions {
  /** The scale x_m: the smallest value drawn. */
  min: number;
  /** The shape: smaller is heavier-tailed (alpha <= 1 has an infinite mean). */
  alpha: number;
  max?: number;
}

/** A Pareto-distributed integer (inverse transform), floored and clamped to [min, max]. */
export function paretoInt(rng: Random, options: ParetoOptions): number {
  const u = 1 - rng.float(); // (0, 1]
  const value = Math.floor(options.min / u ** (1 / options.alpha));
  return clamp(value, options.min, options.max ?? Number.MAX_SAFE_INTEGER);
}

function clamp(value: number, min: number, max: number): number {
  if (value < min) return min;
  if (value > max) return max;
  return value;
}
