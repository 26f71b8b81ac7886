// The host's lease, as this tenant process knows it: a deadline after which it acknowledges no
// write, whatever happens to the host (paused, cut off from the control store, dead). See
// docs/scale-out.md, "Fencing: epochs and lease deadlines".
import { performance } from 'node:perf_hooks';
import { LeaseMessageSchema, RookeryError } from '@rookery/protocol';

/**
 * The deadline lives on this process's monotonic clock (performance.now(): CLOCK_MONOTONIC, which
 * never jumps with NTP or an operator's `date`, and keeps running while the process is stopped by
 * SIGSTOP, so a paused tenant wakes up past its deadline). The host sends "milliseconds left", not
 * an instant: two processes' wall clocks may disagree and jump; a duration added on arrival cannot
 * be stretched by either. The deadline this gives is later than the host's by the message's
 * delivery delay at most, which the control store's grace period before re-placing covers.
 */
export class LeaseDeadline {
  /** performance.now() past which writes are refused; null: no lease (one machine), never expires. */
  private deadline: number | null;

  constructor(
    remainingMs: number | undefined,
    private readonly now: () => number = () => performance.now(),
  ) {
    this.deadline = remainingMs === undefined ? null : this.now() + remainingMs;
  }

  /** The host renewed its lease (or, with 0, says it lost it). */
  renew(remainingMs: number): void {
    this.deadline = this.now() + remainingMs;
  }

  /** Applies a message from the host if it is a lease message; false for any other message. */
  receive(message: unknown): boolean {
    const parsed = LeaseMessageSchema.safeParse(message);
    if (!parsed.success) return false;
    this.renew(parsed.data.remainingMs);
    return true;
  }

  /** Milliseconds left (negative once expired), or null without a lease. */
  remainingMs(): number | null {
    return this.deadline === null ? null : this.deadline - this.now();
  }

  /** The refusal for a write asked now, or null while the lease holds (the engine's write fence). */
  refusal(): RookeryError | null {
    const left = this.remainingMs();
    if (left === null || left > 0) return null;
    return new RookeryError(
      'LeaseExpired',
      `This host's lease on the tenant expired ${Math.round(-left)} ms ago, so it acknowledges no more writes (a write in flight may or may not have been applied). Retry the request: the gateway routes it to the tenant's new owner.`,
    );
  }
}
