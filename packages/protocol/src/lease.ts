import { z } from 'zod';

// What a host tells the tenant processes it runs about its own lease (docs/scale-out.md, "Fencing:
// epochs and lease deadlines"). The host holds a lease on the control store; its tenants must stop
// acknowledging writes by themselves once it lapses, even if the host is paused or cut off and
// cannot tell them. So the host hands each tenant a deadline, renewed with every lease renewal.

/**
 * The placement epoch of a tenant on its host: raised by the control store each time the tenant
 * changes owner. Mirror generations carry it; the highest wins. 0 on one machine (no fleet).
 */
export const PlacementEpochSchema = z.number().int().min(0).max(9_999_999_999);

/** A lease longer than a day is a configuration mistake. */
export const MAX_LEASE_MS = 86_400_000;

/** Milliseconds the host's lease has left, as the host measured it at `measuredAtMs`. */
export const LeaseRemainingMsSchema = z.number().int().min(0).max(MAX_LEASE_MS);

/**
 * When the host measured what its lease has left, on `monotonicMs()`. A tenant is always the host's
 * child on the same machine, and CLOCK_MONOTONIC is one clock for every process there, never jumps with
 * NTP or `date`, and runs on while a process is stopped. So the tenant counts the lease from this
 * instant, not from the message's arrival: a message delivered late (a loaded machine, a paused tenant)
 * cannot make the tenant's deadline later than the host's. Wall clocks are never used for it.
 */
export const LeaseMeasuredAtMsSchema = z.number().min(0);

/** CLOCK_MONOTONIC in milliseconds: the same reading in every process on this machine. */
export function monotonicMs(): number {
  return Number(process.hrtime.bigint()) / 1e6;
}

/** What a host's lease had left, and when it was measured (both sides read `monotonicMs`). */
export interface LeaseReading {
  remainingMs: number;
  measuredAtMs: number;
}

/** Reads `remaining()` stamped with the instant before it was read, so the stamp never flatters it. */
export function readLease(remaining: () => number): LeaseReading {
  const measuredAtMs = monotonicMs();
  return { remainingMs: Math.max(0, Math.floor(remaining())), measuredAtMs };
}

/** Host → tenant (IPC): the host renewed its lease (or learned it lost it: `remainingMs: 0`). */
export const LeaseMessageSchema = z
  .object({
    type: z.literal('lease'),
    remainingMs: LeaseRemainingMsSchema,
    measuredAtMs: LeaseMeasuredAtMsSchema,
  })
  .strict();
export type LeaseMessage = z.infer<typeof LeaseMessageSchema>;
