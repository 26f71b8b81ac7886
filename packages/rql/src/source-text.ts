import type { SourcePosition, SourceRange } from './ast.js';

/**
 * The query text with a table of line starts, to turn offsets into 1-based
 * line and column numbers. Line breaks are `\n`, `\r\n` and a lone `\r`; columns
 * count UTF-16 code units.
 */
export class SourceText {
  private readonly lineStarts: number[] = [0];

  constructor(readonly text: string) {
    for (let i = 0; i < text.length; i++) {
      const char = text.charCodeAt(i);
      if (char === 0x0a) {
        this.lineStarts.push(i + 1);
      } else if (char === 0x0d) {
        if (text.charCodeAt(i + 1) === 0x0a) i++;
        this.lineStarts.push(i + 1);
      }
    }
  }

  /** The position of `offset`, clamped to `[0, text.length]`. */
  positionAt(offset: number): SourcePosition {
    const clamped = Math.max(0, Math.min(offset, this.text.length));
    let low = 0;
    let high = this.lineStarts.length - 1;
    while (low < high) {
      const middle = (low + high + 1) >> 1;
      if (this.lineStarts[middle]! <= clamped) low = middle;
      else high = middle - 1;
    }
    return { offset: clamped, line: low + 1, column: clamped - this.lineStarts[low]! + 1 };
  }

  range(start: number, end: number): SourceRange {
    return { start: this.positionAt(start), end: this.positionAt(end) };
  }
}
