// A clock and timers that move only when a test says so: lease tests step past a TTL without
// sleeping, so they hold on a loaded machine. Timers fire in due order, each at its own instant.
import type { LeaseTimers } from '../lease-keeper.js';

interface Timer {
  at: number;
  seq: number;
  callback: () => void;
}

export class ManualTime implements LeaseTimers {
  private t = 1_000;
  private seq = 0;
  private readonly timers = new Set<Timer>();

  readonly now = (): number => this.t;

  setTimeout(callback: () => void, ms: number): unknown {
    const timer = { at: this.t + Math.max(0, ms), seq: this.seq++, callback };
    this.timers.add(timer);
    return timer;
  }

  clearTimeout(handle: unknown): void {
    this.timers.delete(handle as Timer);
  }

  /** Timers waiting to fire. */
  get pending(): number {
    return this.timers.size;
  }

  /**
   * Moves the clock by `ms`, firing every timer that falls due on the way, each at its own instant; after
   * each one, `settle` is awaited (the async work the timer started), so timers that work sets are run too.
   */
  async advance(ms: number, settle: () => Promise<void> = async () => {}): Promise<void> {
    const end = this.t + ms;
    for (;;) {
      let next: Timer | null = null;
      for (const timer of this.timers) {
        if (timer.at > end) continue;
        if (!next || timer.at < next.at || (timer.at === next.at && timer.seq < next.seq)) next = timer;
      }
      if (!next) break;
      this.timers.delete(next);
      this.t = Math.max(this.t, next.at);
      next.callback();
      await settle();
    }
    this.t = Math.max(this.t, end);
  }

  /** Time passes without firing timers (spent inside a call); the ones due fire at the next advance. */
  skip(ms: number): void {
    this.t += ms;
  }
}
