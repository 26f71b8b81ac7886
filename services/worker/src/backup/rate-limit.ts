// A cap on how fast a backup reads the mirror. The mirror is a network disk shared by every tenant
// of the machine and billed by throughput: a large backup must not starve the shipping of
// committed transactions. Token bucket with one second of burst; 0 means no cap.
import { setTimeout as sleep } from 'node:timers/promises';

export class ReadRateLimit {
  private available: number;
  private refilledAt = performance.now();

  constructor(private readonly bytesPerSecond: number) {
    this.available = bytesPerSecond;
  }

  /** Waits until `bytes` may be read (or the signal aborts). */
  async take(bytes: number, signal?: AbortSignal): Promise<void> {
    if (this.bytesPerSecond <= 0) return;
    this.refill();
    this.available -= bytes;
    if (this.available < 0) {
      await sleep((-this.available / this.bytesPerSecond) * 1000, undefined, { signal });
    }
  }

  private refill(): void {
    const now = performance.now();
    this.available = Math.min(
      this.bytesPerSecond,
      this.available + ((now - this.refilledAt) / 1000) * this.bytesPerSecond,
    );
    this.refilledAt = now;
  }
}
