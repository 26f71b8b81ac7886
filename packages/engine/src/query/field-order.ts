// One field's entries in the order of its terms, kept for one state of the
// index beside the match bitmaps (see match-sets.ts). An ordered walk with a
// bitmap filter (`not prerelease and search(tag)`, `order by DownloadCount
// desc`) otherwise reads the order field's terms from SQLite row by row, about
// 1 µs a row, and a mid-frequency tag walks thousands of rows to fill one
// page. Over the kept order the same walk reads two arrays, and a sort of few
// matches reads each one's rank instead of seeking its value.

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
    /** Per entry id, the run of its least value; -1 for an entry without terms in the field. */
    private readonly leastRuns: Int32Array,
    /** The same for its greatest value: the same array unless an entry has several values. */
    private readonly greatestRuns: Int32Array,
  ) {}

  /** Bytes an order of `rows` terms over entry ids up to `maxEntry` takes at least (one value per entry). */
  static bytesAtLeast(rows: number, maxEntry: number): number {
    return 4 * rows + 4 * (maxEntry + 1);
  }

  /**
   * From each value's entries as decimal numbers separated by commas, the
   * values in order separated by semicolons (what one group_concat of a
   * group_concat per value returns: one string crosses from SQLite). Entries
   * within a run are put in ascending order here, whatever order SQLite
   * concatenated them in.
   */
  static fromRuns(list: string | null): FieldOrder {
    if (list === null || list === '') {
      const none = new Int32Array(0);
      return new FieldOrder(none, new Int32Array(1), none, none);
    }
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
    let maxEntry = -1;
    let n = 0;
    for (let i = 0; i <= list.length; i++) {
      const c = i < list.length ? list.charCodeAt(i) : SEMICOLON;
      if (c !== COMMA && c !== SEMICOLON) {
        n = n * 10 + (c - 48);
        continue;
      }
      if (at > runStart && (entries[at - 1] as number) > n) sorted = false;
      entries[at++] = n;
      if (n > maxEntry) maxEntry = n;
      n = 0;
      if (c === SEMICOLON) {
        if (!sorted) entries.subarray(runStart, at).sort();
        runStarts[++run] = at;
        runStart = at;
        sorted = true;
      }
    }
    const least = new Int32Array(maxEntry + 1).fill(-1);
    let greatest = least;
    for (let r = 0; r < runCount; r++) {
      for (let p = runStarts[r] as number; p < (runStarts[r + 1] as number); p++) {
        const entry = entries[p] as number;
        if (least[entry] === -1) {
          least[entry] = r;
          if (greatest !== least) greatest[entry] = r;
        } else {
          // A second value of one entry: from here on the greatest runs differ from the least.
          if (greatest === least) greatest = least.slice();
          greatest[entry] = r;
        }
      }
    }
    return new FieldOrder(entries, runStarts, least, greatest);
  }

  get length(): number {
    return this.entries.length;
  }

  get bytes(): number {
    const perEntry = this.leastRuns.byteLength * (this.greatestRuns === this.leastRuns ? 1 : 2);
    return this.entries.byteLength + this.runStarts.byteLength + perEntry;
  }

  /**
   * Per entry id, the run of its greatest value (`greatest`) or of its least:
   * what the entry sorts by descending or ascending; -1 for an entry without
   * terms in the field. Ids past the array's end have none either.
   */
  runOfEntries(greatest: boolean): Int32Array {
    return greatest ? this.greatestRuns : this.leastRuns;
  }
}
