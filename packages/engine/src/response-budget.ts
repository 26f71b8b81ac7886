import { RookeryError } from '@rookery/protocol';

/** What one answer may hold by default: well below a tenant's 512 MiB heap, which also holds its parse. */
export const DEFAULT_MAX_RESPONSE_BYTES = 64 * 1024 * 1024;

/**
 * Counts what an answer holds while its documents are gathered, and refuses it (413 `ResponseTooLarge`)
 * as soon as it would go past the limit: before its text is built, so what a refused request has spent is
 * at most the limit and one document. One GET of a large document's id repeated a thousand times used to
 * build a string past the heap and abort the whole tenant.
 *
 * Sizes are characters of JSON text (the length of the strings the answer is made of): bytes for ASCII
 * text, and what the heap holds for it.
 */
export class ResponseBudget {
  private used = 0;

  /** `advice`: what the caller can do instead (page, ask for fewer ids, stream), ending the message. */
  constructor(
    readonly limit: number,
    private readonly advice: string,
  ) {}

  /** Counts `chars` more; throws once the total passes the limit. */
  add(chars: number): void {
    this.used += chars;
    if (this.used > this.limit) {
      throw new RookeryError(
        'ResponseTooLarge',
        `The answer would hold more than ${describeBytes(this.limit)} of documents (the tenant's ` +
          `ROOKERY_MAX_RESPONSE_BYTES); ${this.advice}`,
        { limitBytes: this.limit },
      );
    }
  }

  /** Characters counted so far. */
  get total(): number {
    return this.used;
  }
}

function describeBytes(bytes: number): string {
  const MiB = 1024 * 1024;
  return bytes % MiB === 0 ? `${bytes / MiB} MiB` : `${bytes} bytes`;
}
