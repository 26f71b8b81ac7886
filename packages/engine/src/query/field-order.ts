// One field's entries in the order of its terms, kept for one state of the
// index beside the match bitmaps (see match-sets.ts). An ordered walk with a
// bitmap filter (`not prerelease and search(tag)`, `order by DownloadCount
// desc`) otherwise reads the order field's terms from SQLite row by row, about
// 1 µs a row, and a mid-frequency tag walks thousands of rows to fill one
// page. Over the kept order the same walk reads two arrays.

const COMMA = 44;
const SEMICOLON = 59;

export class FieldOrder {
  private constructor(
    /** Entries by (value, entry) ascending; an entry with several values is there once per value. */
    readonly entries: Int32Array,
    /**
     * Where each value's run of entries starts, values in order, and the
     * length last: run r is positions runStarts[r] to runStarts[r + 1] - 1.
     */
    readonly runStarts: Int32Array,
  ) {}

  /**
   * From each value's entries as decimal numbers separated by commas, the
   * values in order separated by semicolons (what one group_concat of a
   * group_concat per value returns: one string crosses from SQLite). Entries
   * within a run are put in ascending order here, whatever order SQLite
   * concatenated them in.
   */
  static fromRuns(list: string | null): FieldOrder {
    if (list === null || list === '') return new FieldOrder(new Int32Array(0), new Int32Array(1));
    let length = 1;
    let runCount = 1;
    for (let i = 0; i < list.length; i++) {
      const c = list.charCodeAt(i);
      if (c === COMMA) length++;
      else if (c === SEMICOLON) {
        length++;
        runCount++;
      }
    }
    const entries = new Int32Array(length);
    const runStarts = new Int32Array(runCount + 1);
    let at = 0;
    let run = 0;
    let runStart = 0;
    let sorted = true;
    let n = 0;
    for (let i = 0; i <= list.length; i++) {
      const c = i < list.length ? list.charCodeAt(i) : SEMICOLON;
      if (c !== COMMA && c !== SEMICOLON) {
        n = n * 10 + (c - 48);
        continue;
      }
      if (at > runStart && (entries[at - 1] as number) > n) sorted = false;
      entries[at++] = n;
      n = 0;
      if (c === SEMICOLON) {
        if (!sorted) entries.subarray(runStart, at).sort();
        runStarts[++run] = at;
        runStart = at;
        sorted = true;
      }
    }
    return new FieldOrder(entries, runStarts);
  }

  get length(): number {
    return this.entries.length;
  }

  get bytes(): number {
    return this.entries.byteLength + this.runStarts.byteLength;
  }
}
