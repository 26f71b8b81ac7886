// One field's entries in the order of its terms, kept for one state of the
// index beside the match bitmaps (see match-sets.ts). An ordered walk with a
// bitmap filter (`not prerelease and search(tag)`, `order by DownloadCount
// desc`) otherwise reads the order field's terms from SQLite row by row, about
// 1 µs a row, and a mid-frequency tag walks thousands of rows to fill one
// page. Over the kept order the same walk reads two arrays.

const COMMA = 44;
const SEMICOLON = 59;

export class FieldOrder {
  /** Per entry, the run of its least and of its greatest value (see `runOfEntries`), made on first use. */
  private runsByEntry: { least: Int32Array; greatest: Int32Array } | null = null;

  private constructor(
    /** Entries by (value, entry) ascending; an entry with several values is there once per value. */
    readonly entries: Int32Array,
    /**
     * Where each value's run of entries starts, values in order, and the
     * length last: run r is positions runStarts[r] to runStarts[r + 1] - 1.
     */
    readonly runStarts: Int32Array,
    /** The largest entry id in the order (-1 when empty). */
    private readonly maxEntry: number,
  ) {}

  /**
   * From each value's entries as decimal numbers separated by commas, the
   * values in order separated by semicolons (what one group_concat of a
   * group_concat per value returns: one string crosses from SQLite). Entries
   * within a run are put in ascending order here, whatever order SQLite
   * concatenated them in.
   */
  static fromRuns(list: string | null): FieldOrder {
    if (list === null || list === '') return new FieldOrder(new Int32Array(0), new Int32Array(1), -1);
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
    return new FieldOrder(entries, runStarts, maxEntry);
  }

  get length(): number {
    return this.entries.length;
  }

  /** Bytes held, counting the per-entry runs as if made already (they are, once a sort uses them). */
  get bytes(): number {
    return this.entries.byteLength + this.runStarts.byteLength + 2 * 4 * (this.maxEntry + 1);
  }

  /**
   * Per entry id, the run of its greatest value (`greatest`) or of its least:
   * what the entry sorts by descending or ascending; -1 for an entry without
   * terms in the field. Ids past the array's end have none either.
   */
  runOfEntries(greatest: boolean): Int32Array {
    if (!this.runsByEntry) {
      const least = new Int32Array(this.maxEntry + 1).fill(-1);
      const most = new Int32Array(this.maxEntry + 1).fill(-1);
      for (let run = 0; run + 1 < this.runStarts.length; run++) {
        for (let at = this.runStarts[run] as number; at < (this.runStarts[run + 1] as number); at++) {
          const entry = this.entries[at] as number;
          if (least[entry] === -1) least[entry] = run;
          most[entry] = run;
        }
      }
      this.runsByEntry = { least, greatest: most };
    }
    return greatest ? this.runsByEntry.greatest : this.runsByEntry.least;
  }
}
