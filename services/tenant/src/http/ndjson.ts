import { RookeryError } from '@rookery/protocol';

/**
 * Splits a byte stream into lines without copying more than it must: complete
 * lines inside a chunk are decoded in place; only a line that spans chunks is
 * buffered. A line longer than `maxLineBytes` is refused before it is buffered
 * whole, so a hostile client cannot make us hold an unbounded line in memory.
 */
export class LineSplitter {
  private pending: Buffer[] = [];
  private pendingBytes = 0;
  private lineNumber = 0;

  constructor(private readonly maxLineBytes: number) {}

  /** Calls `onLine` for every complete, non-blank line in the chunk. */
  push(chunk: Buffer, onLine: (text: string, lineNumber: number) => void): void {
    let start = 0;
    for (let newline = chunk.indexOf(10, start); newline !== -1; newline = chunk.indexOf(10, start)) {
      const piece = chunk.subarray(start, newline);
      start = newline + 1;
      this.lineNumber++;
      if (this.pendingBytes + piece.length > this.maxLineBytes) this.tooLong();
      const text =
        this.pending.length === 0
          ? piece.toString('utf8')
          : Buffer.concat([...this.pending, piece]).toString('utf8');
      this.pending = [];
      this.pendingBytes = 0;
      if (text.trim().length > 0) onLine(text, this.lineNumber);
    }
    if (start < chunk.length) {
      const rest = chunk.subarray(start);
      this.pendingBytes += rest.length;
      if (this.pendingBytes > this.maxLineBytes) {
        this.lineNumber++;
        this.tooLong();
      }
      this.pending.push(rest);
    }
  }

  /** Flushes a last line that had no trailing newline. */
  end(onLine: (text: string, lineNumber: number) => void): void {
    if (this.pending.length === 0) return;
    const text = Buffer.concat(this.pending).toString('utf8');
    this.pending = [];
    this.pendingBytes = 0;
    this.lineNumber++;
    if (text.trim().length > 0) onLine(text, this.lineNumber);
  }

  private tooLong(): never {
    throw new RookeryError(
      'PayloadTooLarge',
      `Line ${this.lineNumber} is longer than ${this.maxLineBytes} bytes; one line holds one document, and documents must be smaller`,
      { line: this.lineNumber, limitBytes: this.maxLineBytes },
    );
  }
}
