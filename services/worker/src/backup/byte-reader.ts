// Reads exact byte counts from a stream of buffers of any size (a file read in whatever pieces the
// storage hands out), for parsing a framed format without holding the whole file.
export class ByteReader {
  private readonly iterator: AsyncIterator<Buffer>;
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private done = false;

  constructor(source: AsyncIterable<Buffer>) {
    this.iterator = source[Symbol.asyncIterator]();
  }

  /** Exactly `n` bytes; fewer (possibly none) only when the stream ends first. */
  async read(n: number): Promise<Buffer> {
    while (this.pendingBytes < n && !this.done) {
      const next = await this.iterator.next();
      if (next.done) this.done = true;
      else {
        this.pending.push(next.value);
        this.pendingBytes += next.value.length;
      }
    }
    const all = this.pending.length === 1 ? this.pending[0]! : Buffer.concat(this.pending);
    const taken = all.subarray(0, Math.min(n, all.length));
    const rest = all.subarray(taken.length);
    this.pending = rest.length > 0 ? [rest] : [];
    this.pendingBytes = rest.length;
    return taken;
  }

  /** True once every byte was read. */
  async atEnd(): Promise<boolean> {
    while (this.pendingBytes === 0 && !this.done) {
      const next = await this.iterator.next();
      if (next.done) this.done = true;
      else if (next.value.length > 0) {
        this.pending.push(next.value);
        this.pendingBytes += next.value.length;
      }
    }
    return this.pendingBytes === 0;
  }

  /** Stops reading the source early (closes the file). */
  async close(): Promise<void> {
    await this.iterator.return?.();
  }
}
