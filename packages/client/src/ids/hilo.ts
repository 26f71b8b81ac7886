// Client-side ids with the HiLo algorithm: the server hands out a range of numbers per tag
// (`GET /databases/{db}/hilo/next?tag=users` → Low..High), the client numbers new documents from it
// without asking again, so storing a new entity costs no request until the range runs out. The server
// grows the next range (doubles it) when the last one was used up within a minute.
import type { HiLoResponse } from '@rookery/protocol';

export type FetchHiLoRange = (
  tag: string,
  last: { size: number; fetchedAt: Date } | null,
) => Promise<HiLoResponse>;

interface Range {
  prefix: string;
  serverTag: string;
  high: number;
  size: number;
  fetchedAt: Date;
}

/** Ids for one tag (`users` → `users/1-A`, `users/2-A`, …). Safe under concurrent callers. */
export class HiLoIdGenerator {
  private range: Range | null = null;
  private next = 0;
  private refill: Promise<void> | null = null;

  constructor(
    readonly tag: string,
    private readonly fetchRange: FetchHiLoRange,
  ) {}

  async nextId(): Promise<string> {
    for (;;) {
      const range = this.range;
      if (range !== null && this.next <= range.high) {
        const n = this.next++;
        return `${range.prefix}${n}-${range.serverTag}`;
      }
      // One request refills the range for every caller waiting on it.
      this.refill ??= this.fetchNext().finally(() => {
        this.refill = null;
      });
      await this.refill;
    }
  }

  private async fetchNext(): Promise<void> {
    const last = this.range === null ? null : { size: this.range.size, fetchedAt: this.range.fetchedAt };
    const answer = await this.fetchRange(this.tag, last);
    this.range = {
      prefix: answer.Prefix,
      serverTag: answer.ServerTag,
      high: answer.High,
      size: answer.LastSize,
      fetchedAt: new Date(),
    };
    this.next = answer.Low;
  }
}

/** One generator per tag, made on first use. */
export class MultiTypeHiLoIdGenerator {
  private readonly generators = new Map<string, HiLoIdGenerator>();

  constructor(private readonly fetchRange: FetchHiLoRange) {}

  nextId(tag: string): Promise<string> {
    const key = tag.toLowerCase();
    let generator = this.generators.get(key);
    if (generator === undefined) {
      generator = new HiLoIdGenerator(tag, this.fetchRange);
      this.generators.set(key, generator);
    }
    return generator.nextId();
  }
}
