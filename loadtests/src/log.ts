// Stages go to stderr with a time of day, so stdout holds only the summary table
// and the closing JSON line that scripts read.

export function log(message: string): void {
  process.stderr.write(`${new Date().toISOString().slice(11, 19)} ${message}\n`);
}

/**
 * A one-line progress bar on stderr, redrawn in place on a terminal and
 * printed every 10% otherwise (CI logs would fill with carriage returns).
 */
export class ProgressBar {
  private lastDecile = -1;
  private readonly started = performance.now();
  private readonly tty = process.stderr.isTTY === true;

  constructor(
    private readonly label: string,
    private readonly total: number,
    private readonly unit: string,
  ) {}

  update(done: number): void {
    const fraction = this.total > 0 ? Math.min(1, done / this.total) : 1;
    const decile = Math.floor(fraction * 10);
    if (!this.tty && decile === this.lastDecile) return;
    this.lastDecile = decile;
    const seconds = (performance.now() - this.started) / 1000;
    const rate = seconds > 0 ? Math.round(done / seconds) : 0;
    const width = 30;
    const filled = Math.round(fraction * width);
    const line =
      `${this.label} [${'#'.repeat(filled)}${'.'.repeat(width - filled)}] ` +
      `${done.toLocaleString('en')}/${this.total.toLocaleString('en')} ${this.unit} ` +
      `(${rate.toLocaleString('en')}/s)`;
    if (this.tty) process.stderr.write(`\r${line}\x1b[K`);
    else log(line);
  }

  done(): void {
    if (this.tty) process.stderr.write('\n');
  }
}
