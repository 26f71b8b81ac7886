// The host's lease, as this tenant process knows it: a deadline after which it acknowledges no
// write, whatever happens to the host (paused, cut off from the control store, dead). See
// docs/scale-out.md, "Fencing: epochs and lease deadlines".
import { LeaseMessageSchema, type LeaseReading, monotonicMs, RookeryError } from '@rookery/protocol';

/**
 * The deadline lives on the machine's monotonic clock (`monotonicMs`: CLOCK_MONOTONIC, which never
 * jumps with NTP or an operator's `date`, and keeps running while the process is stopped by SIGSTOP,
 * so a paused tenant wakes up past its deadline). The host sends what its lease had left and when it
 * measured that on the same clock, so the deadline here is the host's own, however late the message
 * arrived. A stamp later than now (not this machine's clock) counts from arrival instead.
 */
export class LeaseDeadline {
  /** performance.now() past which writes are refused; null: no lease (one machine), never expires. */
  private deadline: number | null;

  /** `measuredAtMs` unknown (a lease given without one): counted from now. */
  constructor(
    lease: { remainingMs: number; measuredAtMs?: number | undefined } | undefined,
    private readonly now: () => number = monotonicMs,
  ) {
    this.deadline = null;
    if (lease !== undefined)
      this.renew({ remainingMs: lease.remainingMs, measuredAtMs: lease.measuredAtMs ?? this.now() });
  }

  /** The host renewed its lease (or, with 0, says it lost it). */
  renew(lease: LeaseReading): void {
    this.deadline = Math.min(lease.measuredAtMs, this.now()) + lease.remainingMs;
  }

  /** Applies a message from the host if it is a lease message; false for any other message. */
  receive(message: unknown): boolean {
    const parsed = LeaseMessageSchema.safeParse(message);
    if (!parsed.success) return false;
    this.renew(parsed.data);
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
