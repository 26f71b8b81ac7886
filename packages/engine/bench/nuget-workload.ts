// What users ask of the generated NuGet-like package versions, shared by bench:queries and the
// PostgreSQL comparisons so both measure the same queries: package ids sampled across the whole data
// (not the first few), and search words drawn from the real vocabulary of the `Query` field.
import { Random, ZipfSampler } from '@rookery/datagen';

/** The words FTS5's unicode61 tokenizer makes of a text (the generated data is ASCII). */
export function tokens(text: string): string[] {
  return Array.from(text.toLowerCase().matchAll(/[\p{L}\p{N}]+/gu), (m) => m[0]);
}

/** The distinct words of a version's full-text `Query` field (Tags, Title, PackageId). */
export function queryWords(doc: { Tags: readonly string[]; Title: string; PackageId: string }): string[] {
  return [...new Set(tokens([...doc.Tags, doc.Title, doc.PackageId].join(' ')))];
}

/**
 * A uniform sample of `size` items from a stream of unknown length (reservoir sampling, Algorithm R):
 * every version has the same chance to be picked, wherever it is in the data.
 */
export class Reservoir<T> {
  readonly items: T[] = [];
  private seen = 0;
  private readonly rng: Random;

  constructor(
    private readonly size: number,
    seed: number,
  ) {
    this.rng = new Random(seed, 5);
  }

  offer(item: T): void {
    this.seen++;
    if (this.items.length < this.size) this.items.push(item);
    else {
      const at = Math.floor(this.rng.float() * this.seen);
      if (at < this.size) this.items[at] = item;
    }
  }
}

/** Word → how many versions hold it in their `Query` field. */
export type Vocabulary = Map<string, number>;

export function countWords(vocabulary: Vocabulary, words: readonly string[]): void {
  for (const word of words) vocabulary.set(word, (vocabulary.get(word) ?? 0) + 1);
}

/**
 * `count` search words as users type them: drawn with repetition, Zipf-weighted (exponent 1) over
 * the whole vocabulary ranked by document count, so a few common words recur and hundreds of
 * others appear once or a few times (a mixed workload, neither all cache hits nor all first reads).
 */
export function zipfWords(vocabulary: Vocabulary, count: number, rng: Random): string[] {
  const ranked = [...vocabulary].sort((a, b) => b[1] - a[1] || (a[0] < b[0] ? -1 : 1)).map(([w]) => w);
  const sampler = new ZipfSampler(ranked, 1);
  return Array.from({ length: count }, () => sampler.sample(rng));
}

/** `count` pairs of two different Zipf-drawn words (a two-word search, all words required). */
export function zipfPairs(vocabulary: Vocabulary, count: number, rng: Random): [string, string][] {
  const words = zipfWords(vocabulary, count * 3, rng);
  const pairs: [string, string][] = [];
  for (let i = 0; i + 1 < words.length && pairs.length < count; i += 2) {
    if (words[i] !== words[i + 1]) pairs.push([words[i]!, words[i + 1]!]);
    else i--; // keep the second word as the first of the next pair
  }
  return pairs;
}

/**
 * `count` distinct words drawn by document count without repetition, from words in at least
 * 20 documents, and not in `used`: each is queried for the first time in the run (a cold search).
 */
export function drawTerms(vocabulary: Vocabulary, count: number, used: Set<string>, rng: Random): string[] {
  const pool = [...vocabulary].filter(([word, docs]) => docs >= 20 && !used.has(word));
  const picked: string[] = [];
  let total = pool.reduce((sum, [, docs]) => sum + docs, 0);
  while (picked.length < count && pool.length > 0) {
    let pick = rng.float() * total;
    let at = pool.length - 1;
    for (let i = 0; i < pool.length; i++) {
      pick -= pool[i]![1];
      if (pick <= 0) {
        at = i;
        break;
      }
    }
    const [word, docs] = pool.splice(at, 1)[0]!;
    total -= docs;
    picked.push(word);
    used.add(word);
  }
  return picked;
}
